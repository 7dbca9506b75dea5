// Password hashing: Argon2id at OWASP's recommended parameters (Password Storage Cheat Sheet:
// m = 19 MiB, t = 2, p = 1). Verification of an unknown user runs against a dummy hash of the same
// parameters, so a failed login takes as long whether or not the user exists.
import argon2 from 'argon2';
import { randomBytes } from 'node:crypto';

export const ARGON2_OPTIONS = Object.freeze({ type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
/** Longer passwords are refused before hashing (hashing cost must not depend on attacker input). */
export const PASSWORD_MAX_LENGTH = 1024;

export async function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

let dummy: Promise<string> | null = null;

/** Computes the dummy hash ahead, so that the first unknown user costs no extra hashing. */
export function prepareDummyHash(): void {
  dummy ??= hashPassword(randomBytes(24).toString('base64url'));
}

/**
 * True when `password` matches `hash`. With `hash` null (no such user) the password is checked
 * against a dummy hash and false returned, in the same time.
 */
export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  const target = hash ?? await (dummy ??= hashPassword(randomBytes(24).toString('base64url')));
  let ok = false;
  try {
    ok = await argon2.verify(target, password.length > PASSWORD_MAX_LENGTH ? password.slice(0, PASSWORD_MAX_LENGTH) : password);
  } catch {
    ok = false;
  }
  return ok && hash !== null;
}

/** A random password for the root user when DEFAULT_ROOT_PASSWORD is unset: 24 base64url characters. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
