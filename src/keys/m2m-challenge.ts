// The machine-to-machine challenge of POST /api_key/generate (PROTOCOL.md section 5): an ALTCHA v1
// challenge carried in WWW-Authenticate, solved by brute force and presented in Authorization:
//   challenge = hex(SHA-256(salt + String(number))), salt = 24 hex + "?expires=<unix s>&",
//   signature = hex(HMAC-SHA-256(hmacKey, challenge)).
// The salt format is checked exactly, so nothing can be spliced into it (CVE-2025-68113).
import { createHash, createHmac, createSecretKey, randomBytes, randomInt, timingSafeEqual, type KeyObject } from 'node:crypto';

export interface M2mChallengeOptions {
  /**
   * Largest secret number. Default 5,000,000: at 5–10 M SHA-256/s (native code) a solution takes
   * 0.25–0.5 s on average, at most twice that; a Node.js createHash loop (~1 M/s) needs ~2.5 s.
   */
  readonly maxNumber?: number;
  /** How long a challenge can be solved. Default 600,000 ms. */
  readonly ttlMs?: number;
}

export const M2M_DEFAULTS = Object.freeze({ maxNumber: 5_000_000, ttlMs: 600_000 });

export interface M2mChallenge {
  readonly algorithm: 'SHA-256';
  readonly challenge: string;
  readonly maxnumber: number;
  readonly salt: string;
  readonly signature: string;
  /** Epoch ms after which it is refused. */
  readonly expiresAt: number;
}

export interface M2mSolution {
  readonly algorithm: string;
  readonly number: number;
  readonly challenge: string;
  readonly salt: string;
  readonly signature: string;
}

export type M2mVerdict = 'ok' | 'invalid' | 'expired';

const SALT = /^[0-9a-f]{24}\?expires=(\d{1,12})&$/;
const HEX64 = /^[0-9a-f]{64}$/;

export function prepareM2mKey(hmacKey: string | Buffer): KeyObject {
  if (hmacKey.length < 16) throw new Error('the machine-to-machine challenge key must be at least 16 bytes');
  return createSecretKey(typeof hmacKey === 'string' ? Buffer.from(hmacKey, 'utf8') : hmacKey);
}

export function createM2mChallenge(key: KeyObject, options: M2mChallengeOptions = {}, now = Date.now()): M2mChallenge {
  const maxnumber = options.maxNumber ?? M2M_DEFAULTS.maxNumber;
  const expiresAt = now + (options.ttlMs ?? M2M_DEFAULTS.ttlMs);
  const salt = `${randomBytes(12).toString('hex')}?expires=${Math.floor(expiresAt / 1000)}&`;
  const number = randomInt(0, maxnumber + 1);
  const challenge = createHash('sha256').update(salt + String(number)).digest('hex');
  const signature = createHmac('sha256', key).update(challenge).digest('hex');
  return { algorithm: 'SHA-256', challenge, maxnumber, salt, signature, expiresAt };
}

/** `Altcha algorithm=SHA-256, challenge=…, maxnumber=…, salt=…, signature=…` */
export function wwwAuthenticate(c: M2mChallenge): string {
  return `Altcha algorithm=${c.algorithm}, challenge=${c.challenge}, maxnumber=${c.maxnumber}, salt=${c.salt}, signature=${c.signature}`;
}

/**
 * Parses `Altcha algorithm=…, number=…, challenge=…, salt=…, signature=…` (values optionally in
 * double quotes, any order). Null when it is not such a header or a field is missing or malformed.
 */
export function parseAltchaAuthorization(header: string): M2mSolution | null {
  if (header.length > 1024) return null;
  const m = /^altcha\s+(.*)$/is.exec(header.trim());
  if (!m) return null;
  const fields = new Map<string, string>();
  for (const part of m[1]!.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const name = part.slice(0, eq).trim().toLowerCase();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (fields.has(name)) return null;
    fields.set(name, value);
  }
  const algorithm = fields.get('algorithm');
  const number = fields.get('number');
  const challenge = fields.get('challenge');
  const salt = fields.get('salt');
  const signature = fields.get('signature');
  if (algorithm === undefined || number === undefined || challenge === undefined || salt === undefined || signature === undefined) {
    return null;
  }
  if (!/^\d{1,10}$/.test(number)) return null;
  return { algorithm, number: Number(number), challenge, salt, signature };
}

/** Checks a solution: signature (constant time), expiry, then the challenge hash. */
export function verifyM2mSolution(key: KeyObject, s: M2mSolution, options: M2mChallengeOptions = {}, now = Date.now()): M2mVerdict {
  const maxNumber = options.maxNumber ?? M2M_DEFAULTS.maxNumber;
  if (s.algorithm !== 'SHA-256' || !HEX64.test(s.challenge) || !HEX64.test(s.signature)) return 'invalid';
  if (!Number.isSafeInteger(s.number) || s.number < 0 || s.number > maxNumber) return 'invalid';
  const salt = SALT.exec(s.salt);
  if (!salt) return 'invalid';
  const expected = createHmac('sha256', key).update(s.challenge).digest();
  if (!timingSafeEqual(expected, Buffer.from(s.signature, 'hex'))) return 'invalid';
  if (Number(salt[1]) * 1000 <= now) return 'expired';
  const hash = createHash('sha256').update(s.salt + String(s.number)).digest();
  return timingSafeEqual(hash, Buffer.from(s.challenge, 'hex')) ? 'ok' : 'invalid';
}

/** When a solution's challenge can no longer be used (for how long to remember it). */
export function m2mExpiresAt(s: M2mSolution): number {
  const salt = SALT.exec(s.salt);
  return salt ? Number(salt[1]) * 1000 : 0;
}
