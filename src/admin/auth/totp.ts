// Optional two-factor login with TOTP (RFC 6238, otpauth): 6 digits, 30 s, SHA-1, as authenticator
// apps expect; a code is accepted one step either side of now. A user turns it on by confirming a
// code of the secret they were shown (POST /api/admin/me/totp). A code is accepted once: the step
// it belongs to must come after the last one accepted (claimTotpStep in src/db/users.ts).
import { Secret, TOTP } from 'otpauth';

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secret: string, label: string, issuer: string): TOTP {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
}

export function totpUri(secret: string, label: string, issuer: string): string {
  return totp(secret, label, issuer).toString();
}

export function totpValid(secret: string, code: unknown, now = Date.now()): boolean {
  return totpStep(secret, code, now) !== null;
}

/** The 30-second step `code` belongs to (now's, or one either side), or null when it is not valid. */
export function totpStep(secret: string, code: unknown, now = Date.now()): number | null {
  if (typeof code !== 'string' || !/^\d{6}$/.test(code)) return null;
  const delta = totp(secret, 'x', 'x').validate({ token: code, window: 1, timestamp: now });
  return delta === null ? null : Math.floor(now / 30_000) + delta;
}

export function totpCode(secret: string, now = Date.now()): string {
  return totp(secret, 'x', 'x').generate({ timestamp: now });
}
