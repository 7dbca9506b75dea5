// Session JWTs (jose): HS256 under JWT_SECRET, issuer JWT_ISSUER, lifetime JWT_TTL. A token names
// its user (sub), the user's session version (sv: raised by logout and password changes, so every
// older token is refused at once) and a CSRF token (csrf) that writes must echo in X-CSRF-Token. Only
// HS256 is accepted: `alg: none` and tokens signed with any other key or algorithm are refused.
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

export interface SessionClaims {
  readonly userId: string;
  readonly sessionVersion: number;
  readonly csrf: string;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

export interface Sessions {
  /** A signed token for the user and its current session version. */
  issue(userId: string, sessionVersion: number): Promise<{ token: string; claims: SessionClaims }>;
  /** The claims of a valid token (signature, issuer, expiry), or null. */
  verify(token: string): Promise<SessionClaims | null>;
  readonly ttlSeconds: number;
}

export function createSessions(options: { secret: string; issuer: string; ttlSeconds: number; now?: () => number }): Sessions {
  if (options.secret.length < 24) throw new Error('JWT_SECRET must have at least 24 characters');
  const key = new TextEncoder().encode(options.secret);
  const now = options.now ?? (() => Date.now());
  const ttl = Math.max(1, Math.floor(options.ttlSeconds));
  return {
    ttlSeconds: ttl,
    async issue(userId, sessionVersion) {
      const iat = Math.floor(now() / 1000);
      const csrf = randomBytes(24).toString('base64url');
      const token = await new SignJWT({ sv: sessionVersion, csrf })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId).setIssuer(options.issuer).setIssuedAt(iat).setExpirationTime(iat + ttl)
        .setJti(randomBytes(12).toString('base64url'))
        .sign(key);
      return { token, claims: { userId, sessionVersion, csrf, expiresAt: iat + ttl } };
    },
    async verify(token) {
      if (token.length > 4096) return null;
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: options.issuer, algorithms: ['HS256'], currentDate: new Date(now()), requiredClaims: ['sub', 'exp', 'iat'],
        });
        if (typeof payload.sub !== 'string' || typeof payload.sv !== 'number' || !Number.isInteger(payload.sv)) return null;
        if (typeof payload.csrf !== 'string' || payload.csrf.length < 16) return null;
        return { userId: payload.sub, sessionVersion: payload.sv, csrf: payload.csrf, expiresAt: payload.exp! };
      } catch {
        return null;
      }
    },
  };
}

/** Compares a CSRF token given by the client with the session's, in constant time. */
export function csrfMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export const SESSION_COOKIE = 'palisade_session';

/** The session cookie: HttpOnly, SameSite=Strict, Secure over HTTPS, scoped to the service's path. */
export function sessionCookie(token: string, options: { path: string; maxAgeSeconds: number; secure: boolean }): string {
  return `${SESSION_COOKIE}=${token}; Path=${options.path}; Max-Age=${options.maxAgeSeconds}; HttpOnly; SameSite=Strict${options.secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(options: { path: string; secure: boolean }): string {
  return `${SESSION_COOKIE}=; Path=${options.path}; Max-Age=0; HttpOnly; SameSite=Strict${options.secure ? '; Secure' : ''}`;
}

/** The session token of a Cookie header, or null. */
export function sessionTokenOf(cookieHeader: string | undefined): string | null {
  if (cookieHeader === undefined || cookieHeader.length > 8192) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? null : value;
    }
  }
  return null;
}
