// Hashing (native/hash.cc): SHA-2, HMAC with prepared keys, PBKDF2 and the protocol's iterated
// SHA, constant-time comparison and hex. Every wrapper validates its arguments before they cross.
import { addon } from './addon.js';
import { argRange, argType, bytes, checkData, count } from './args.js';

// Byte arguments are Buffers or Uint8Arrays; strings are taken as UTF-8 (the checks: args.ts).

export const HASH_ALGORITHMS = ['sha256', 'sha384', 'sha512'] as const;
export type HashAlgorithm = (typeof HASH_ALGORITHMS)[number];

interface HashAddon {
  shaInto(alg: number, data: Uint8Array | string, out: Uint8Array): void;
  hmacInto(alg: number, key: Uint8Array, data: Uint8Array | string, out: Uint8Array): void;
  hmacPrepare(alg: number, key: Uint8Array, state: Uint8Array): void;
  hmacPreparedInto(alg: number, state: Uint8Array, data: Uint8Array | string, out: Uint8Array): void;
  hmacPreparedHex(alg: number, state: Uint8Array, data: Uint8Array | string): string;
  hmacPreparedVerifyHex(alg: number, state: Uint8Array, data: Uint8Array | string, hex: string): boolean;
  pbkdf2Into(alg: number, password: Uint8Array, salt: Uint8Array, iterations: number, out: Uint8Array): void;
  iteratedShaInto(alg: number, salt: Uint8Array, password: Uint8Array, cost: number, out: Uint8Array): void;
  pbkdf2Async(alg: number, password: Uint8Array, salt: Uint8Array, iterations: number, keyLength: number): Promise<Buffer>;
  iteratedShaAsync(alg: number, salt: Uint8Array, password: Uint8Array, cost: number, keyLength: number): Promise<Buffer>;
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean;
  toHex(bytes: Uint8Array): string;
  fromHexInto(hex: string, out: Uint8Array): boolean;
}

const nativeHash = bindHashing([
  'shaInto', 'hmacInto', 'hmacPrepare', 'hmacPreparedInto', 'hmacPreparedHex', 'hmacPreparedVerifyHex',
  'pbkdf2Into', 'iteratedShaInto', 'pbkdf2Async', 'iteratedShaAsync', 'timingSafeEqual', 'toHex', 'fromHexInto',
]);

function bindHashing(names: readonly string[]): HashAddon {
  const missing = names.filter((name) => typeof addon[name] !== 'function');
  if (missing.length > 0) {
    throw new Error(`The native addon is out of date (no ${missing.join(', ')}); rebuild it with "npm run build".`);
  }
  return addon as unknown as HashAddon;
}

interface AlgSpec {
  readonly name: HashAlgorithm;
  readonly id: number;
  readonly digestLength: number;
  /** Bytes of a prepared HMAC key: inner and outer state words (native/sha2.h). */
  readonly stateLength: number;
}

const SHA256: AlgSpec = { name: 'sha256', id: 0, digestLength: 32, stateLength: 64 };
const SHA384: AlgSpec = { name: 'sha384', id: 1, digestLength: 48, stateLength: 128 };
const SHA512: AlgSpec = { name: 'sha512', id: 2, digestLength: 64, stateLength: 128 };

/** PBKDF2 output limit: far above any protocol use, low enough that a bad value cannot exhaust memory. */
const MAX_PBKDF2_KEY_LENGTH = 1 << 20;
const MAX_UINT32 = 0xffff_ffff;

export function digestLength(alg: HashAlgorithm): number {
  return spec(alg).digestLength;
}

export function sha(alg: HashAlgorithm, data: Buffer | Uint8Array | string): Buffer {
  const s = spec(alg);
  const out = Buffer.allocUnsafe(s.digestLength);
  nativeHash.shaInto(s.id, checkData('data', data), out);
  return out;
}

export function hmac(alg: HashAlgorithm, key: Buffer | Uint8Array | string, data: Buffer | Uint8Array | string): Buffer {
  const s = spec(alg);
  const out = Buffer.allocUnsafe(s.digestLength);
  nativeHash.hmacInto(s.id, bytes('key', key), checkData('data', data), out);
  return out;
}

/**
 * An HMAC key with its per-key work done once (the inner and outer hash states after the padded
 * key block), for keys used on hot paths. The states are key-equivalent secrets: they live in a
 * private field, so neither util.inspect nor JSON.stringify shows them.
 */
class PreparedKey {
  readonly alg: HashAlgorithm;
  readonly digestLength: number;
  readonly #id: number;
  readonly #state: Buffer;

  constructor(s: AlgSpec, key: Uint8Array) {
    this.alg = s.name;
    this.digestLength = s.digestLength;
    this.#id = s.id;
    this.#state = Buffer.alloc(s.stateLength);
    nativeHash.hmacPrepare(s.id, key, this.#state);
    Object.freeze(this);
  }

  static mac(prepared: unknown, data: unknown): Buffer {
    const p = PreparedKey.check(prepared);
    const out = Buffer.allocUnsafe(p.digestLength);
    nativeHash.hmacPreparedInto(p.#id, p.#state, checkData('data', data), out);
    return out;
  }

  static into(prepared: unknown, data: unknown, out: unknown): void {
    const p = PreparedKey.check(prepared);
    if (!(out instanceof Uint8Array)) throw argType('out', 'a Buffer or Uint8Array');
    if (out.length !== p.digestLength) throw argRange('out', `exactly ${p.digestLength} bytes long`);
    nativeHash.hmacPreparedInto(p.#id, p.#state, checkData('data', data), out);
  }

  static hex(prepared: unknown, data: unknown): string {
    const p = PreparedKey.check(prepared);
    return nativeHash.hmacPreparedHex(p.#id, p.#state, checkData('data', data));
  }

  static verifyHex(prepared: unknown, data: unknown, hex: unknown): boolean {
    const p = PreparedKey.check(prepared);
    if (typeof hex !== 'string') throw argType('hex', 'a string');
    return nativeHash.hmacPreparedVerifyHex(p.#id, p.#state, checkData('data', data), hex);
  }

  static check(prepared: unknown): PreparedKey {
    if (typeof prepared !== 'object' || prepared === null || !(#state in prepared)) {
      throw argType('prepared', 'a key from prepareHmacKey()');
    }
    return prepared;
  }
}

export type PreparedHmacKey = PreparedKey;

export function prepareHmacKey(alg: HashAlgorithm, key: Buffer | Uint8Array | string): PreparedHmacKey {
  return new PreparedKey(spec(alg), bytes('key', key));
}

export function hmacPrepared(prepared: PreparedHmacKey, data: Buffer | Uint8Array | string): Buffer {
  return PreparedKey.mac(prepared, data);
}

/** Writes the MAC into `out` (exactly digestLength bytes): no allocation at all. */
export function hmacPreparedInto(prepared: PreparedHmacKey, data: Buffer | Uint8Array | string, out: Uint8Array): void {
  PreparedKey.into(prepared, data, out);
}

/** The MAC as lowercase hex. */
export function hmacPreparedHex(prepared: PreparedHmacKey, data: Buffer | Uint8Array | string): string {
  return PreparedKey.hex(prepared, data);
}

/**
 * Whether `hex` (either case) is the MAC of `data`, compared in constant time. A string of the
 * wrong length or with non-hex characters is simply false.
 */
export function hmacPreparedVerifyHex(prepared: PreparedHmacKey, data: Buffer | Uint8Array | string, hex: string): boolean {
  return PreparedKey.verifyHex(prepared, data, hex);
}

/** PBKDF2-HMAC (RFC 8018), on the calling thread. */
export function pbkdf2(
  alg: HashAlgorithm, password: Buffer | Uint8Array | string, salt: Buffer | Uint8Array | string,
  iterations: number, keyLength: number,
): Buffer {
  const s = spec(alg);
  const pw = bytes('password', password);
  const sl = bytes('salt', salt);
  count('iterations', iterations, MAX_UINT32);
  const out = Buffer.allocUnsafe(count('keyLength', keyLength, MAX_PBKDF2_KEY_LENGTH));
  nativeHash.pbkdf2Into(s.id, pw, sl, iterations, out);
  return out;
}

/** pbkdf2() on the libuv thread pool. Arguments are validated (and copied) before it returns. */
export function pbkdf2Async(
  alg: HashAlgorithm, password: Buffer | Uint8Array | string, salt: Buffer | Uint8Array | string,
  iterations: number, keyLength: number,
): Promise<Buffer> {
  const s = spec(alg);
  const pw = bytes('password', password);
  const sl = bytes('salt', salt);
  count('iterations', iterations, MAX_UINT32);
  count('keyLength', keyLength, MAX_PBKDF2_KEY_LENGTH);
  return nativeHash.pbkdf2Async(s.id, pw, sl, iterations, keyLength);
}

/**
 * PROTOCOL.md section 1: d = H(salt ‖ password), then d = H(d) until `cost` hashes in all;
 * returns d[0:keyLength] (like a slice, a keyLength above the digest length gives the whole digest).
 */
export function iteratedSha(
  alg: HashAlgorithm, salt: Buffer | Uint8Array | string, password: Buffer | Uint8Array | string,
  cost: number, keyLength: number,
): Buffer {
  const s = spec(alg);
  const sl = bytes('salt', salt);
  const pw = bytes('password', password);
  count('cost', cost, MAX_UINT32);
  const out = Buffer.allocUnsafe(Math.min(count('keyLength', keyLength, MAX_UINT32), s.digestLength));
  nativeHash.iteratedShaInto(s.id, sl, pw, cost, out);
  return out;
}

/** iteratedSha() on the libuv thread pool. */
export function iteratedShaAsync(
  alg: HashAlgorithm, salt: Buffer | Uint8Array | string, password: Buffer | Uint8Array | string,
  cost: number, keyLength: number,
): Promise<Buffer> {
  const s = spec(alg);
  const sl = bytes('salt', salt);
  const pw = bytes('password', password);
  count('cost', cost, MAX_UINT32);
  const length = Math.min(count('keyLength', keyLength, MAX_UINT32), s.digestLength);
  return nativeHash.iteratedShaAsync(s.id, sl, pw, cost, length);
}

/** Constant-time equality. Different lengths are unequal (a length is not a secret): false, no throw. */
export function timingSafeEqual(a: Buffer | Uint8Array, b: Buffer | Uint8Array): boolean {
  if (!(a instanceof Uint8Array)) throw argType('a', 'a Buffer or Uint8Array');
  if (!(b instanceof Uint8Array)) throw argType('b', 'a Buffer or Uint8Array');
  return a.length === b.length && nativeHash.timingSafeEqual(a, b);
}

/** Lowercase hex. */
export function toHex(buf: Buffer | Uint8Array): string {
  if (!(buf instanceof Uint8Array)) throw argType('buf', 'a Buffer or Uint8Array');
  return nativeHash.toHex(buf);
}

/** Decodes even-length hex (either case); null for anything else, never a partial result. */
export function fromHex(hex: string): Buffer | null {
  if (typeof hex !== 'string') throw argType('hex', 'a string');
  if (hex.length % 2 !== 0) return null;
  const out = Buffer.allocUnsafe(hex.length / 2);
  return nativeHash.fromHexInto(hex, out) ? out : null;
}

function spec(alg: unknown): AlgSpec {
  switch (alg) {
    case 'sha256': return SHA256;
    case 'sha384': return SHA384;
    case 'sha512': return SHA512;
    default: throw argType('alg', `one of ${HASH_ALGORITHMS.join(', ')}`);
  }
}
