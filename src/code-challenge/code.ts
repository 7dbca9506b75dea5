// The code of a code challenge and its keyed hash. The code is drawn from the CSPRNG over an
// alphabet without look-alikes; the challenge carries HMAC-SHA256(hash key, nonce ":" CODE) in its
// signed data (data.codeHash), so the server keeps no state and the hash of one challenge says
// nothing about another's. Checked case-insensitively (spaces ignored), in constant time.
import { createHmac, hkdfSync, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * Upper-case letters and digits with the look-alikes left out: 0 O D Q (round shapes), 1 I L (bars),
 * 5 S, 8 B, U V; of 6/G and 2/Z the digit stays. Spoken, the rest stay distinct in the four
 * languages of speech.ts (B, D, G, P, T, V would blur in noise; only P and T remain of them).
 */
export const CODE_ALPHABET = 'ACEFHJKMNPRTWXY234679';
export const MIN_CODE_LENGTH = 4;
export const MAX_CODE_LENGTH = 10;
/** The longest `code` /v1/verify reads: longer is a malformed request (400), not a wrong answer. */
export const MAX_SUBMITTED_CODE = 32;

/** Keys derived from CODE_CHALLENGE_SECRET with HKDF-SHA256, one per use. */
export interface CodeKeys {
  /** Keys data.codeHash. */
  readonly hash: Buffer;
  /** AES-256-GCM key of the audio token (token.ts). */
  readonly token: Buffer;
}

export function deriveCodeKeys(secret: string): CodeKeys {
  if (typeof secret !== 'string' || secret.length < 24) throw new Error('CODE_CHALLENGE_SECRET must be at least 24 characters');
  const key = (info: string) => Buffer.from(hkdfSync('sha256', secret, '', info, 32));
  return Object.freeze({ hash: key('palisade code-challenge hash'), token: key('palisade code-challenge audio token') });
}

/** A code of `length` characters of CODE_ALPHABET, uniformly drawn (randomInt rejects the modulo bias). */
export function generateCode(length: number): string {
  let code = '';
  for (let i = 0; i < length; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** Hex HMAC of the code bound to the challenge's nonce: what travels in data.codeHash. */
export function codeHash(keys: CodeKeys, nonce: string, code: string): string {
  return digest(keys, nonce, code).toString('hex');
}

/**
 * True when `submitted` (as typed: any case, spaces ignored) is the code whose hash is `hash`. The
 * HMACs are compared with timingSafeEqual; a malformed hash (never issued: it was signed) is false.
 */
export function checkCode(keys: CodeKeys, nonce: string, hash: string, submitted: string): boolean {
  if (hash.length !== 64) return false;
  const expected = Buffer.from(hash, 'hex');
  if (expected.length !== 32) return false;
  return timingSafeEqual(digest(keys, nonce, normalizeCode(submitted)), expected);
}

/** Upper case without spaces: how a typed code is compared. */
export function normalizeCode(typed: string): string {
  return typed.replace(/ /g, '').toUpperCase();
}

function digest(keys: CodeKeys, nonce: string, code: string): Buffer {
  return createHmac('sha256', keys.hash).update(`${nonce}:${code}`).digest();
}
