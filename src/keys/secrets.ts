// API key identifiers and secrets (PROTOCOL.md section 4).
//
// A key's secret is never stored. It is derived when the key is loaded:
//   secret = prefix + base62(HMAC-SHA-256(K, keyId + ":" + secretNonce)), 32 characters,
// where K comes from PALISADE_HMAC_SECRET (deriveApiKeySecretKey) and secretNonce is random and
// stored with the key. The server needs the plain secret to sign server payloads (PROTOCOL.md
// section 3), yet the database holds only the nonce and secretHash = HMAC-SHA-256(HASHING_SALT,
// secret): a copy of the database alone yields no secret. Rotating a secret = a new nonce.
import { createHmac, createSecretKey, hkdfSync, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_ID_LENGTH = 24;
export const SECRET_LENGTH = 32;
const NONCE_LENGTH = 24;

export type KeyKind = 'standard' | 'free';
const PREFIXES = {
  standard: { id: 'key_', secret: 'sec_' },
  free: { id: 'ckey_', secret: 'csec_' },
} as const;

const KEY_ID = /^c?key_[0-9A-Za-z]{24}$/;
const SECRET = /^c?sec_[0-9A-Za-z]{32}$/;

/** Is `id` shaped like a key id (`key_`/`ckey_` + 24 base62)? Cheap filter before any lookup. */
export function isKeyId(id: string): boolean {
  return id.length <= 29 && KEY_ID.test(id);
}

/** Is `secret` shaped like a key secret (`sec_`/`csec_` + 32 base62)? */
export function isSecret(secret: string): boolean {
  return secret.length <= 37 && SECRET.test(secret);
}

export function keyKindOf(id: string): KeyKind {
  return id.startsWith('ckey_') ? 'free' : 'standard';
}

/** `key_`/`ckey_` + 24 uniformly random base62 characters. */
export function newKeyId(kind: KeyKind = 'standard'): string {
  return PREFIXES[kind].id + randomBase62(KEY_ID_LENGTH);
}

/** A fresh secret nonce; storing a new one rotates the key's secret. */
export function newSecretNonce(): string {
  return randomBase62(NONCE_LENGTH);
}

/** Random base62 by rejection sampling: bytes ≥ 248 (= 4 × 62) are discarded, so no modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length + 8)) {
      if (byte >= 248) continue;
      out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** K for secret derivation: HKDF-SHA256(PALISADE_HMAC_SECRET, info 'palisade api-key secrets'), 32 bytes. */
export function deriveApiKeySecretKey(palisadeHmacSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', palisadeHmacSecret, '', 'palisade api-key secrets', 32));
}

export interface KeySecrets {
  /** The secret of key `keyId` with `nonce` (prefix from the id's kind). */
  derive(keyId: string, nonce: string): string;
  /** hex(HMAC-SHA-256(HASHING_SALT, secret)): what the database stores and is searched by. */
  hash(secret: string): string;
  /** Constant-time equality of two secrets. */
  equal(a: string, b: string): boolean;
}

/**
 * `secretKey` is K (32 bytes, deriveApiKeySecretKey); `hashingSalt` is HASHING_SALT. Both are
 * turned into KeyObjects once.
 */
export function createKeySecrets(secretKey: Buffer, hashingSalt: string | Buffer): KeySecrets {
  if (secretKey.length < 32) throw new Error('the API key secret key must be at least 32 bytes');
  if (hashingSalt.length < 16) throw new Error('HASHING_SALT must be at least 16 characters');
  const k: KeyObject = createSecretKey(secretKey);
  const salt: KeyObject = createSecretKey(typeof hashingSalt === 'string' ? Buffer.from(hashingSalt, 'utf8') : hashingSalt);
  return Object.freeze({
    derive(keyId: string, nonce: string): string {
      const digest = createHmac('sha256', k).update(`${keyId}:${nonce}`).digest();
      return PREFIXES[keyKindOf(keyId)].secret + base62Digits(digest, SECRET_LENGTH);
    },
    hash(secret: string): string {
      return createHmac('sha256', salt).update(secret).digest('hex');
    },
    equal(a: string, b: string): boolean {
      const ba = Buffer.from(a);
      const bb = Buffer.from(b);
      return ba.length === bb.length && timingSafeEqual(ba, bb);
    },
  });
}

/**
 * The lowest `count` base62 digits of the 256-bit big-endian number in `bytes`, i.e. the number
 * mod 62^count: 62^32 ≈ 2^190.5, so the bias against uniform is below 2^-65.
 */
function base62Digits(bytes: Buffer, count: number): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  for (let i = 0; i < count; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}
