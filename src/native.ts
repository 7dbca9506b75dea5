// The only loader of the native addon (build/Release/palisade.node). Every wrapper here validates its
// arguments before they cross into C++, so the C++ side can trust types and lengths.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function load(): Record<string, unknown> {
  const path = join(root, 'build', 'Release', 'palisade.node');
  if (!existsSync(path)) {
    throw new Error(
      `The native addon is missing (${path}). Build it with "npm install" (or "npm run build"); ` +
        'it needs python3, make and a C++ compiler with Node.js headers.',
    );
  }
  return createRequire(import.meta.url)(path) as Record<string, unknown>;
}

/** The raw addon; use the typed wrappers below, never this directly outside this file. */
const addon = load();
void addon;

// ---- hashing (native/hash.cc) -------------------------------------------------------------
// Byte arguments are Buffers or Uint8Arrays; strings are taken as UTF-8. Wrong types throw a
// TypeError (code ERR_INVALID_ARG_TYPE), out-of-range numbers a RangeError (ERR_OUT_OF_RANGE);
// messages never contain argument values, which may be secrets.

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

/** Bytes for keys, passwords and salts: strings become their UTF-8 encoding. */
function bytes(name: string, value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  throw argType(name, 'a Buffer, Uint8Array or string');
}

/** Message data crosses as is: the addon encodes strings as UTF-8 without a JS-side copy. */
function checkData(name: string, value: unknown): Uint8Array | string {
  if (typeof value === 'string' || value instanceof Uint8Array) return value;
  throw argType(name, 'a Buffer, Uint8Array or string');
}

function count(name: string, value: unknown, max: number): number {
  if (typeof value !== 'number') throw argType(name, 'a number');
  if (!Number.isInteger(value) || value < 1 || value > max) throw argRange(name, `an integer from 1 to ${max}`);
  return value;
}

function argType(name: string, expected: string): TypeError {
  return Object.assign(new TypeError(`The "${name}" argument must be ${expected}.`), { code: 'ERR_INVALID_ARG_TYPE' });
}

function argRange(name: string, expected: string): RangeError {
  return Object.assign(new RangeError(`The "${name}" argument must be ${expected}.`), { code: 'ERR_OUT_OF_RANGE' });
}

// ---- shared-memory table (native/shm-store.cc) ----------------------------------------------
// The file format and the lock-free rules are documented in native/shm-table.h. Keys are any
// strings (hashed in C++ from their UTF-16 code units, so no encoding step and no collisions from
// lone surrogates); times are milliseconds. hit/peek/occupancy report through `out`, so a call
// allocates nothing. Every method below checks its arguments before they cross.

export interface ShmTableInfo {
  readonly capacity: number;
  /** CLOCK_REALTIME ms the file's slot times count from. */
  readonly epochMs: number;
  readonly fileBytes: number;
  readonly slotBytes: number;
  readonly headerBytes: number;
  /** Longest probe sequence; a key lives within this many slots of its home slot. */
  readonly probe: number;
  /** A window count saturates here. */
  readonly countMax: number;
  /** A penalty score saturates here. */
  readonly scoreMax: number;
  /** Highest value of a counter (count()). */
  readonly counterMax: number;
}

interface RawShmTable {
  claim(id: string, ttlMs: number): number;
  hit(key: string, limit: number, windowMs: number, holdMs: number): number;
  peek(key: string, limit: number, windowMs: number): number;
  addPenalty(key: string, n: number, ttlMs: number): number;
  penalty(key: string): number;
  count(key: string, limit: number, seed: number, ttlMs: number): number;
  occupancy(start: number, count: number): number;
  evictions(): number;
  setClock(epochMs: number): void;
  info(): ShmTableInfo;
  close(): void;
}

/** Result codes: no free slot within the probe window / gave up under pathological contention. */
export const SHM_FULL = -1;
export const SHM_BUSY = -2;
/** count() without a seed found no counter (and stored none). */
export const SHM_MISSING = -3;
/** Capacity bounds in slots: at least one probe window, at most 64 GiB of file. */
export const SHM_MIN_CAPACITY = 64;
export const SHM_MAX_CAPACITY = 2 ** 32;
const SHM_MAX_MS = 2 ** 47;

/**
 * One mapping of a state file. Open it once per process; every process on the host that opens the
 * same path shares the table. Operations throw TypeError / RangeError on bad arguments and Error
 * after close().
 */
export class ShmTable {
  readonly info: ShmTableInfo;
  /**
   * After hit/peek: [allowed 1|0, count, resetMs, blockedUntil]; after count: [allowed 1|0, count];
   * after occupancy: [live, expired, empty].
   */
  readonly out = new Float64Array(4);
  readonly #raw: RawShmTable;

  constructor(path: string, capacity: number) {
    if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) throw argType('path', 'a file path');
    if (!Number.isInteger(capacity) || capacity < SHM_MIN_CAPACITY || capacity > SHM_MAX_CAPACITY) {
      throw argRange('capacity', `an integer from ${SHM_MIN_CAPACITY} to ${SHM_MAX_CAPACITY}`);
    }
    const Raw = addon.ShmTable as (new (path: string, capacity: number, out: Float64Array) => RawShmTable) | undefined;
    if (typeof Raw !== 'function') throw new Error('The native addon is out of date (no ShmTable); rebuild it with "npm run build".');
    this.#raw = new Raw(path, capacity, this.out);
    this.info = Object.freeze(this.#raw.info());
  }

  /** 1 first seen now, 0 seen within `ttlMs` before, SHM_FULL, SHM_BUSY. Soft: an entry may be evicted. */
  claim(id: string, ttlMs: number): number {
    if (typeof id !== 'string') throw argType('id', 'a string');
    return this.#raw.claim(id, shmInt('ttlMs', ttlMs, 1, SHM_MAX_MS));
  }

  /** Counts one hit: 0 with `out` filled, SHM_FULL, SHM_BUSY. */
  hit(key: string, limit: number, windowMs: number, holdMs: number): number {
    if (typeof key !== 'string') throw argType('key', 'a string');
    return this.#raw.hit(
      key, shmInt('limit', limit, 1, this.info.countMax - 1), shmInt('windowMs', windowMs, 1, SHM_MAX_MS),
      shmInt('holdMs', holdMs, 0, SHM_MAX_MS),
    );
  }

  /** What a hit would see, without counting: 0 with `out` filled. */
  peek(key: string, limit: number, windowMs: number): number {
    if (typeof key !== 'string') throw argType('key', 'a string');
    return this.#raw.peek(key, shmInt('limit', limit, 1, this.info.countMax - 1), shmInt('windowMs', windowMs, 1, SHM_MAX_MS));
  }

  /** The new score (saturating at info.scoreMax), SHM_FULL or SHM_BUSY. */
  addPenalty(key: string, n: number, ttlMs: number): number {
    if (typeof key !== 'string') throw argType('key', 'a string');
    return this.#raw.addPenalty(key, shmInt('n', n, 0, Number.MAX_SAFE_INTEGER), shmInt('ttlMs', ttlMs, 1, SHM_MAX_MS));
  }

  penalty(key: string): number {
    if (typeof key !== 'string') throw argType('key', 'a string');
    return this.#raw.penalty(key);
  }

  /**
   * Adds 1 to the counter `key` when it is below `limit`: 0 with `out` filled. An absent counter is
   * created at `seed` to live `ttlMs`, or with seed -1 left absent: SHM_MISSING. Else SHM_FULL or
   * SHM_BUSY. Evicted only when its whole probe window holds counters (native/shm-table.h).
   */
  count(key: string, limit: number, seed: number, ttlMs: number): number {
    if (typeof key !== 'string') throw argType('key', 'a string');
    return this.#raw.count(
      key, shmInt('limit', limit, 0, this.info.counterMax), shmInt('seed', seed, -1, this.info.counterMax),
      shmInt('ttlMs', ttlMs, 1, SHM_MAX_MS),
    );
  }

  /**
   * Counts `count` slots from `start`, wrapping past the last slot; by default every slot. O(count),
   * for gauges and the CLI, not for the hot path.
   */
  occupancy(start = 0, count = this.info.capacity): { live: number; expired: number; empty: number } {
    this.#raw.occupancy(shmInt('start', start, 0, this.info.capacity - 1), shmInt('count', count, 1, this.info.capacity));
    return { live: this.out[0]!, expired: this.out[1]!, empty: this.out[2]! };
  }

  /** Entries this process evicted (least recently used, when a probe window had no free slot), by kind. */
  evictions(): { seen: number; window: number; penalty: number; counter: number } {
    this.#raw.evictions();
    return { seen: this.out[0]!, window: this.out[1]!, penalty: this.out[2]!, counter: this.out[3]! };
  }

  /** Tests only: epoch ms that replaces the real clock for this process's view (0: the real clock). */
  setClock(epochMs: number): void {
    this.#raw.setClock(shmInt('epochMs', epochMs, 0, SHM_MAX_MS));
  }

  /** Unmaps the file; the table stays on disk for the other processes and the next start. */
  close(): void {
    this.#raw.close();
  }
}

// ---- claim store (native/claim-binding.cc) --------------------------------------------------
// Claims of used challenges, kept apart from the soft state (format and rules in
// native/claim-store.h). An id is claimed until an epoch-ms moment its caller derives from the
// challenge, so the same challenge always names the same moment.

interface RawClaimStore {
  claim(id: string, untilMs: number): number;
  sweep(removeFiles: boolean): number;
  stats(): number;
  survey(): number;
  setClock(epochMs: number): void;
  close(): void;
}

/** Claim results besides 1 (claimed now) and 0 (claimed before). */
export const CLAIM_FULL = -1;
export const CLAIM_EXPIRED = -3;
/** The smallest first segment, in 8-byte slots. */
export const CLAIM_MIN_SLOTS = 32;
const CLAIM_MAX_SLOTS = 2 ** 28;

export interface ClaimStoreStats {
  /** Bytes of every segment file in the directory (all processes). */
  readonly bytes: number;
  /** Segments, claims and buckets mapped by this process. */
  readonly segments: number;
  readonly claims: number;
  readonly buckets: number;
  /** Claims this process refused because the memory bound was reached. */
  readonly full: number;
}

/**
 * One process's view of a claims directory; every process on the host that opens the same
 * directory shares the claims. Operations throw TypeError / RangeError on bad arguments and Error
 * after close().
 */
export class ClaimStore {
  readonly out = new Float64Array(5);
  readonly #raw: RawClaimStore;

  constructor(dir: string, maxBytes: number, minSlots: number) {
    if (typeof dir !== 'string' || dir.length === 0 || dir.includes('\0')) throw argType('dir', 'a directory path');
    shmInt('maxBytes', maxBytes, 4096, Number.MAX_SAFE_INTEGER);
    shmInt('minSlots', minSlots, CLAIM_MIN_SLOTS, CLAIM_MAX_SLOTS);
    const Raw = addon.ClaimStore as (new (dir: string, maxBytes: number, minSlots: number, out: Float64Array) => RawClaimStore) | undefined;
    if (typeof Raw !== 'function') throw new Error('The native addon is out of date (no ClaimStore); rebuild it with "npm run build".');
    this.#raw = new Raw(dir, maxBytes, minSlots, this.out);
  }

  /** 1 claimed now, 0 already claimed, CLAIM_FULL (memory bound), CLAIM_EXPIRED (`untilMs` has passed). */
  claim(id: string, untilMs: number): number {
    if (typeof id !== 'string') throw argType('id', 'a string');
    return this.#raw.claim(id, shmInt('untilMs', untilMs, 1, SHM_MAX_MS));
  }

  /** Unmaps ended buckets; with `removeFiles`, deletes their files too. The number of files deleted. */
  sweep(removeFiles: boolean): number {
    return this.#raw.sweep(removeFiles === true);
  }

  stats(): ClaimStoreStats {
    this.#raw.stats();
    const o = this.out;
    return { bytes: o[0]!, segments: o[1]!, claims: o[2]!, buckets: o[3]!, full: o[4]! };
  }

  /** Every live segment of the directory, whichever process wrote it. O(files): for gauges and the CLI. */
  survey(): { claims: number; segments: number; buckets: number; bytes: number } {
    this.#raw.survey();
    const o = this.out;
    return { claims: o[0]!, segments: o[1]!, buckets: o[2]!, bytes: o[3]! };
  }

  /** Tests only: epoch ms that replaces the real clock for this process's view (0: the real clock). */
  setClock(epochMs: number): void {
    this.#raw.setClock(shmInt('epochMs', epochMs, 0, SHM_MAX_MS));
  }

  close(): void {
    this.#raw.close();
  }
}

function shmInt(name: string, value: number, min: number, max: number): number {
  if (typeof value !== 'number') throw argType(name, 'a number');
  if (!Number.isInteger(value) || value < min || value > max) throw argRange(name, `an integer from ${min} to ${max}`);
  return value;
}

// ---- usage ledger (native/usage-ledger.cc) --------------------------------------------------
// The shared mapping and the region locks of src/usage/usage-ledger.ts; the file and the counting
// protocol are JavaScript's.

interface RawUsageLedger {
  mapShared(fd: number, bytes: number): ArrayBuffer;
  reserve(fd: number, bytes: number): void;
  lockByte(fd: number, offset: number): boolean;
  unlockByte(fd: number, offset: number): void;
}

function usageLedgerAddon(): RawUsageLedger {
  const raw = addon.usageLedger as RawUsageLedger | undefined;
  if (raw === undefined) throw new Error('The native addon is out of date (no usageLedger); rebuild it with "npm run build".');
  return raw;
}

/**
 * An ArrayBuffer over the first `bytes` of the open file `fd`, mapped MAP_SHARED: what one process
 * stores is at once visible to every other that maps the file, and survives the death of the
 * process that stored it. Unmapped when the ArrayBuffer is collected (never while a view exists).
 */
export function mapSharedFile(fd: number, bytes: number): ArrayBuffer {
  shmInt('fd', fd, 0, 2 ** 31 - 1);
  shmInt('bytes', bytes, 1, Number.MAX_SAFE_INTEGER);
  return usageLedgerAddon().mapShared(fd, bytes);
}

/** Allocates the first `bytes` of `fd` on disk (posix_fallocate), so no later store into the mapping can fail. */
export function reserveFile(fd: number, bytes: number): void {
  shmInt('fd', fd, 0, 2 ** 31 - 1);
  usageLedgerAddon().reserve(fd, shmInt('bytes', bytes, 1, Number.MAX_SAFE_INTEGER));
}

/**
 * Takes the write lock on byte `offset` of `fd` (an open file description lock: the kernel drops
 * it when the descriptor closes, so when its process dies). False when another descriptor holds it.
 */
export function lockFileByte(fd: number, offset: number): boolean {
  shmInt('fd', fd, 0, 2 ** 31 - 1);
  return usageLedgerAddon().lockByte(fd, shmInt('offset', offset, 0, Number.MAX_SAFE_INTEGER));
}

export function unlockFileByte(fd: number, offset: number): void {
  shmInt('fd', fd, 0, 2 ** 31 - 1);
  usageLedgerAddon().unlockByte(fd, shmInt('offset', offset, 0, Number.MAX_SAFE_INTEGER));
}
