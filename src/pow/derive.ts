// Key derivations of PROTOCOL.md section 1: the password for counter n is nonce ‖ uint32_be(n).
// SHA and PBKDF2 run in the addon: cheap ones inline, the rest on the libuv pool. scrypt
// (node:crypto) and Argon2id (argon2) always leave the event loop. Everything that leaves it waits
// for one of `maxThreads` slots, so proof-of-work verification cannot take over the thread pool
// that file, DNS and zlib work share.
import { scrypt as scryptCb } from 'node:crypto';
import { availableParallelism } from 'node:os';
import argon2 from 'argon2';
import { PalisadeError } from '../errors.js';
import { iteratedSha, iteratedShaAsync, pbkdf2, pbkdf2Async, type HashAlgorithm } from '../native/index.js';

export const POW_ALGORITHMS = [
  'SHA-256', 'SHA-384', 'SHA-512', 'PBKDF2/SHA-256', 'PBKDF2/SHA-384', 'PBKDF2/SHA-512', 'SCRYPT', 'ARGON2ID',
] as const;
export type PowAlgorithm = (typeof POW_ALGORITHMS)[number];

export interface DeriveParams {
  readonly algorithm: PowAlgorithm;
  /** SHA/PBKDF2 rounds, scrypt N, Argon2id passes. */
  readonly cost: number;
  readonly keyLength: number;
  /** scrypt r (default 8), Argon2id memory in KiB (default 65536). */
  readonly memoryCost?: number;
  /** scrypt p, Argon2id lanes (default 1). */
  readonly parallelism?: number;
}

export interface DerivationOptions {
  /**
   * Derivations running off the event loop at once (POW_MAX_THREADS). Default: half the
   * hardware concurrency, at least 1. More than UV_THREADPOOL_SIZE (libuv default 4) only queues
   * inside libuv.
   */
  maxThreads?: number;
  /** Derivations waiting for a slot before new ones fail with DERIVATION_BUSY. Default 10,000. */
  maxQueue?: number;
}

const DEFAULTS: Required<DerivationOptions> = {
  maxThreads: Math.max(1, Math.floor(availableParallelism() / 2)),
  maxQueue: 10_000,
};

/** Longest key accepted: PROTOCOL.md's default is 32; anything near this is not a proof of work. */
export const MAX_KEY_LENGTH = 1024;

/**
 * Work done inline, counted in compressions of SHA-256's 64-byte block (a SHA-512 block ≈ 4): about
 * 100 µs with SHA-NI (49 ns per block, measured), the order of a thread-pool round trip.
 */
const INLINE_WORK = 2048;

const SHA: Readonly<Record<string, { alg: HashAlgorithm; digest: number; weight: number }>> = {
  'SHA-256': { alg: 'sha256', digest: 32, weight: 1 },
  'SHA-384': { alg: 'sha384', digest: 48, weight: 4 },
  'SHA-512': { alg: 'sha512', digest: 64, weight: 4 },
};

const limits = { ...DEFAULTS };
let running = 0;
let waiting: Array<(() => void) | undefined> = [];
let head = 0;

/** Sets the limits of off-loop derivations; fields left out keep their current value. */
export function configureDerivation(options: DerivationOptions): void {
  const maxThreads = options.maxThreads ?? limits.maxThreads;
  const maxQueue = options.maxQueue ?? limits.maxQueue;
  if (!Number.isInteger(maxThreads) || maxThreads < 1) throw new RangeError('maxThreads must be an integer >= 1');
  if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new RangeError('maxQueue must be an integer >= 0');
  limits.maxThreads = maxThreads;
  limits.maxQueue = maxQueue;
  while (running < limits.maxThreads && head < waiting.length) {
    running++;
    next()();
  }
}

/** For metrics: derivations running off the event loop and waiting for a slot. */
export function derivationLoad(): { running: number; queued: number; maxThreads: number } {
  return { running, queued: waiting.length - head, maxThreads: limits.maxThreads };
}

/** nonce ‖ uint32_be(counter); a counter outside 0..2^32-1 would wrap onto another one, so it throws. */
export function password(nonce: Buffer, counter: number): Buffer {
  if (!Number.isInteger(counter) || counter < 0 || counter > 0xffff_ffff) {
    throw new RangeError('counter must be an integer from 0 to 4294967295');
  }
  const out = Buffer.allocUnsafe(nonce.length + 4);
  nonce.copy(out, 0);
  out.writeUInt32BE(counter, nonce.length);
  return out;
}

/** Whether deriveKey() leaves the event loop for these parameters (and so may wait for a slot). */
export function isExpensive(params: DeriveParams): boolean {
  check(params);
  return work(params) > INLINE_WORK;
}

/** Derives the key for `counter` on the calling thread: SHA and PBKDF2 only (scrypt/Argon2id throw). */
export function deriveKeySync(params: DeriveParams, nonce: Buffer, salt: Buffer, counter: number): Buffer {
  check(params);
  const { algorithm, cost, keyLength } = params;
  const pw = password(nonce, counter);
  const sha = SHA[algorithm.startsWith('PBKDF2/') ? algorithm.slice(7) : algorithm];
  if (sha === undefined) throw new TypeError(`${algorithm} cannot be derived synchronously; use deriveKey()`);
  return algorithm.startsWith('PBKDF2/')
    ? pbkdf2(sha.alg, pw, salt, cost, keyLength)
    : iteratedSha(sha.alg, salt, pw, cost, keyLength);
}

/**
 * Derives the key for `counter`. Cheap SHA/PBKDF2 work is done inline; the rest runs off the event
 * loop behind the maxThreads semaphore (rejects with DERIVATION_BUSY when the queue is full).
 * Invalid parameters reject with a TypeError or RangeError.
 */
export async function deriveKey(params: DeriveParams, nonce: Buffer, salt: Buffer, counter: number): Promise<Buffer> {
  check(params);
  const { algorithm, cost, keyLength } = params;
  if (algorithm === 'SCRYPT' || algorithm === 'ARGON2ID') {
    const pw = password(nonce, counter);
    return offLoop(() => (algorithm === 'SCRYPT' ? scrypt(params, pw, salt) : argon2id(params, pw, salt)));
  }
  if (work(params) <= INLINE_WORK) return deriveKeySync(params, nonce, salt, counter);
  const pw = password(nonce, counter);
  if (algorithm.startsWith('PBKDF2/')) {
    const alg = SHA[algorithm.slice(7)]!.alg;
    return offLoop(() => pbkdf2Async(alg, pw, salt, cost, keyLength));
  }
  const alg = SHA[algorithm]!.alg;
  return offLoop(() => iteratedShaAsync(alg, salt, pw, cost, keyLength));
}

function scrypt(params: DeriveParams, pw: Buffer, salt: Buffer): Promise<Buffer> {
  const N = params.cost;
  const r = params.memoryCost ?? 8;
  const p = params.parallelism ?? 1;
  return new Promise((resolve, reject) =>
    scryptCb(pw, salt, params.keyLength, { N, r, p, maxmem: 256 * N * r * p + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key)),
  );
}

function argon2id(params: DeriveParams, pw: Buffer, salt: Buffer): Promise<Buffer> {
  return argon2.hash(pw, {
    type: argon2.argon2id, raw: true, salt, timeCost: params.cost, memoryCost: params.memoryCost ?? 65536,
    parallelism: params.parallelism ?? 1, hashLength: params.keyLength,
  });
}

/** SHA/PBKDF2 work in SHA-256 block compressions (scrypt and Argon2id: always expensive). */
function work(params: DeriveParams): number {
  const { algorithm, cost, keyLength } = params;
  if (algorithm.startsWith('SHA-')) return cost * SHA[algorithm]!.weight;
  const sha = SHA[algorithm.slice(7)];
  if (sha === undefined) return Infinity;
  return 2 * cost * Math.ceil(keyLength / sha.digest) * sha.weight;
}

function check(params: DeriveParams): void {
  if (typeof params !== 'object' || params === null) throw new TypeError('params must be an object');
  if (!(POW_ALGORITHMS as readonly unknown[]).includes(params.algorithm)) {
    throw new TypeError(`algorithm must be one of ${POW_ALGORITHMS.join(', ')}`);
  }
  integer('cost', params.cost, 0xffff_ffff);
  integer('keyLength', params.keyLength, MAX_KEY_LENGTH);
  if (params.memoryCost !== undefined) integer('memoryCost', params.memoryCost, 0xffff_ffff);
  if (params.parallelism !== undefined) integer('parallelism', params.parallelism, 0xff_ffff);
}

function integer(name: string, value: unknown, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`${name} must be an integer from 1 to ${max}`);
  }
}

async function offLoop<T>(run: () => Promise<T>): Promise<T> {
  if (running < limits.maxThreads) {
    running++;
  } else {
    if (waiting.length - head >= limits.maxQueue) throw new PalisadeError('DERIVATION_BUSY');
    // The releasing derivation hands its slot over, so `running` already counts this one.
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  try {
    return await run();
  } finally {
    release();
  }
}

function release(): void {
  if (running <= limits.maxThreads && head < waiting.length) next()();
  else running--;
}

function next(): () => void {
  const wake = waiting[head]!;
  waiting[head++] = undefined;
  if (head === waiting.length) {
    waiting = [];
    head = 0;
  } else if (head > 1024 && head * 2 > waiting.length) {
    waiting = waiting.slice(head);
    head = 0;
  }
  return wake;
}
