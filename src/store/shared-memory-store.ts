// StateStore on memory-mapped files shared by every process on the host (DESIGN.md section 2.2). The
// default store: no server to run, survives a worker crash (no locks) and a restart (file-backed).
//
// Two parts, so that no amount of soft state can take the room of a claim:
// - soft state (windows, marks, penalties, first-seen sets) in one fixed table at `path`
//   (native/shm-table.h): 16 bytes per slot, STATE_STORE_CAPACITY slots (4,194,304, 64 MiB, by
//   default). When a key's probe window has no free slot, the least recently used entry is evicted
//   (counted by kind, logged at most once a minute) instead of refusing. Plan-limit counters live
//   there too but give way last: only to other counters, when their whole window holds counters.
// - claims of used challenges in the directory `<path>.claims` (native/claim-store.h): one bucket
//   of segment files per minute of the claims' end, each bucket deleted whole once it has passed;
//   the buckets grow with traffic, up to `maxClaimBytes` (STATE_STORE_MAX_MEMORY), the only reason
//   left for STORE_FULL. ~16 bytes per claim under steady traffic.
//
// The *Sync methods are the hot path (about a microsecond, no Promise); the StateStore methods
// wrap them for callers that work with either store.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PalisadeError } from '../errors.js';
import { CLAIM_EXPIRED, CLAIM_FULL, ClaimStore, SHM_BUSY, SHM_FULL, SHM_MISSING, ShmTable } from '../native/index.js';
import type { RateRule } from '../parse.js';
import {
  checkCount, checkKey, checkPenalty, checkRule, checkTtl, checkUntil, holdMs, type CountResult, type HitResult, type StateStore,
  type StoreLogger,
} from './state-store.js';

export interface SharedMemoryStoreOptions {
  /** Soft-state slots in the file, 16 bytes each. Default 1,048,576 (a 16 MiB file). */
  capacity?: number;
  /** The claims directory. Default `<path>.claims`. */
  claimsDir?: string;
  /** STATE_STORE_MAX_MEMORY: bytes all claim segments may take together. Default 1 GiB. */
  maxClaimBytes?: number;
  /** Slots of the smallest first segment of a bucket (8 bytes each). Default 4,096 (32 KiB). */
  minClaimSlots?: number;
  /** Deletes ended claim buckets' files and prepares the next buckets (one process per host is enough: the primary). Default true. */
  sweepFiles?: boolean;
  /** How often ended buckets are unmapped (and deleted), ms. Default 5,000; 0 turns the timer off. */
  sweepEveryMs?: number;
  /** Eviction and memory warnings, each at most once a minute. Default: none. */
  logger?: StoreLogger;
}

const DEFAULTS = {
  capacity: 1_048_576, maxClaimBytes: 2 ** 30, minClaimSlots: 4096, sweepFiles: true, sweepEveryMs: 5000,
} as const;
/** Warnings (evictions, claim memory) are logged at most this often. */
const WARN_EVERY_MS = 60_000;
/** Claim memory past this share of STATE_STORE_MAX_MEMORY is warned about. */
export const CLAIM_MEMORY_WARN_SHARE = 0.8;
/** Slots sampleLoad() counts per call: 1 MiB of the file. */
export const LOAD_SAMPLE_SLOTS = 65_536;

export interface SharedMemoryStats {
  /** Claims refused with STORE_FULL by this process (a counter; sum it across workers). */
  readonly full: number;
  /** Operations refused with STORE_UNAVAILABLE under pathological contention by this process. */
  readonly busy: number;
  readonly capacity: number;
  readonly fileBytes: number;
}

export interface ClaimMemoryStats {
  /** Bytes of every claim segment on the host. */
  readonly bytes: number;
  /** STATE_STORE_MAX_MEMORY. */
  readonly maxBytes: number;
  /** Live claims on the host (every live bucket's segments, whichever process wrote them). */
  readonly claims: number;
  readonly buckets: number;
  readonly segments: number;
}

export interface Evictions {
  readonly seen: number;
  readonly window: number;
  readonly penalty: number;
  readonly counter: number;
}

/**
 * Opens (or creates) the state file at `path`; its directory is created when missing. Throws a
 * plain Error saying what to do when the file belongs to another format or capacity: a changed
 * capacity is refused rather than silently recreated, because recreating forgets used challenges.
 */
export function openSharedMemoryStore(path: string, options: SharedMemoryStoreOptions = {}): SharedMemoryStore {
  const o = { ...DEFAULTS, ...definedOnly(options) };
  const claimsDir = options.claimsDir ?? `${path}.claims`;
  for (const p of [path, claimsDir]) {
    if (typeof p !== 'string' || p.length === 0 || p.includes('\0')) {
      throw Object.assign(new TypeError('The state file path must be a non-empty string without NUL.'), { code: 'ERR_INVALID_ARG_TYPE' });
    }
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  mkdirSync(claimsDir, { recursive: true, mode: 0o700 });
  const table = new ShmTable(path, o.capacity);
  let claims: ClaimStore;
  try {
    claims = new ClaimStore(claimsDir, o.maxClaimBytes, o.minClaimSlots);
  } catch (err) {
    table.close();
    throw err;
  }
  return new SharedMemoryStore(table, claims, o);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export class SharedMemoryStore implements StateStore {
  readonly kind = 'shared-memory' as const;
  readonly #table: ShmTable;
  readonly #claims: ClaimStore;
  readonly #out: Float64Array;
  readonly #maxClaimBytes: number;
  readonly #sweepFiles: boolean;
  readonly #log: StoreLogger | undefined;
  readonly #sweeper: NodeJS.Timeout | undefined;
  #full = 0;
  #busy = 0;
  #closed = false;
  #evictionsLogged = 0;
  #lastEvictionLog = -Infinity;
  #lastMemoryLog = -Infinity;
  #lastClaimMemory: ClaimMemoryStats = { bytes: 0, maxBytes: 0, claims: 0, buckets: 0, segments: 0 };
  /** Where the next sampleLoad() window starts; a random slot at first, so workers sample different windows. */
  #sampleAt: number;
  #lastLoad = 0;

  constructor(table: ShmTable, claims: ClaimStore, options: Required<Omit<SharedMemoryStoreOptions, 'logger' | 'claimsDir'>> & SharedMemoryStoreOptions) {
    this.#table = table;
    this.#claims = claims;
    this.#out = table.out;
    this.#maxClaimBytes = options.maxClaimBytes;
    this.#sweepFiles = options.sweepFiles;
    this.#log = options.logger;
    this.#sampleAt = Math.floor(Math.random() * table.info.capacity);
    if (options.sweepEveryMs > 0) {
      this.#sweeper = setInterval(() => this.sweep(), options.sweepEveryMs);
      this.#sweeper.unref();
    }
  }

  /**
   * True exactly once per id among all processes on the host, kept until `untilMs`; throws
   * STORE_FULL only when the claims have reached STATE_STORE_MAX_MEMORY.
   */
  claimOnceSync(id: string, untilMs: number): boolean {
    const r = this.#claims.claim(checkKey('id', id), checkUntil(untilMs, Date.now()));
    if (r === 1) return true;
    if (r === 0 || r === CLAIM_EXPIRED) return false; // a moment that has passed protects nothing: refuse
    throw this.#failure(r === CLAIM_FULL ? SHM_FULL : r);
  }

  seenOnceSync(key: string, ttlMs: number): boolean {
    const r = this.#table.claim(checkKey('key', key), checkTtl(ttlMs));
    if (r < 0) throw this.#failure(r, false);
    return r === 1;
  }

  hitSync(limitKey: string, rule: RateRule): HitResult {
    checkRule(rule);
    const r = this.#table.hit(checkKey('limitKey', limitKey), rule.count, rule.windowMs, holdMs(rule));
    if (r < 0) throw this.#failure(r, false);
    return this.#result(rule.count);
  }

  peekSync(limitKey: string, rule: RateRule): HitResult {
    checkRule(rule);
    this.#table.peek(checkKey('limitKey', limitKey), rule.count, rule.windowMs);
    return this.#result(rule.count);
  }

  addPenaltySync(key: string, n: number, ttlMs: number): number {
    const r = this.#table.addPenalty(checkKey('key', key), checkPenalty(n), checkTtl(ttlMs));
    if (r < 0) throw this.#failure(r, false);
    return r;
  }

  penaltySync(key: string): number {
    return this.#table.penalty(checkKey('key', key));
  }

  countUpToSync(key: string, limit: number, seed: number | null, untilMs: number): CountResult | null {
    const s = checkCount(limit, seed);
    const now = Date.now();
    const r = this.#table.count(checkKey('key', key), limit, s, checkUntil(untilMs, now) - now);
    if (r === SHM_MISSING) return null;
    if (r < 0) throw this.#failure(r, false);
    return { allowed: this.#out[0] === 1, count: this.#out[1]! };
  }

  /** Every read here is synchronous. */
  get sync(): this {
    return this;
  }

  claimOnce(id: string, untilMs: number): Promise<boolean> {
    try {
      return Promise.resolve(this.claimOnceSync(id, untilMs));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  seenOnce(key: string, ttlMs: number): Promise<boolean> {
    try {
      return Promise.resolve(this.seenOnceSync(key, ttlMs));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  hit(limitKey: string, rule: RateRule): Promise<HitResult> {
    try {
      return Promise.resolve(this.hitSync(limitKey, rule));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  peek(limitKey: string, rule: RateRule): Promise<HitResult> {
    try {
      return Promise.resolve(this.peekSync(limitKey, rule));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  addPenalty(key: string, n: number, ttlMs: number): Promise<number> {
    try {
      return Promise.resolve(this.addPenaltySync(key, n, ttlMs));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  penalty(key: string): Promise<number> {
    try {
      return Promise.resolve(this.penaltySync(key));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  countUpTo(key: string, limit: number, seed: number | null, untilMs: number): Promise<CountResult | null> {
    try {
      return Promise.resolve(this.countUpToSync(key, limit, seed, untilMs));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The mapping is either there or the store is closed: nothing to reach. */
  ping(): Promise<boolean> {
    return Promise.resolve(!this.#closed);
  }

  /** Soft-state entries this process evicted, by kind (a counter; sum it across workers). */
  evictions(): Evictions {
    return this.#closed ? { seen: 0, window: 0, penalty: 0, counter: 0 } : this.#table.evictions();
  }

  /** Reads every live segment's header (O(files), about 25 files at steady traffic): for gauges and the CLI. */
  claimMemory(): ClaimMemoryStats {
    if (this.#closed) return this.#lastClaimMemory;
    const s = this.#claims.survey();
    this.#lastClaimMemory = { bytes: s.bytes, maxBytes: this.#maxClaimBytes, claims: s.claims, buckets: s.buckets, segments: s.segments };
    return this.#lastClaimMemory;
  }

  /**
   * Unmaps ended claim buckets (and deletes their files unless sweepFiles is off) and logs, at most
   * once a minute each, evictions since the last such line and claim memory past 80 % of its bound.
   * Runs on the sweep timer; tests call it directly.
   */
  sweep(): void {
    if (this.#closed) return;
    this.#claims.sweep(this.#sweepFiles);
    if (this.#log === undefined) return;
    const now = Date.now();
    const e = this.#table.evictions();
    const total = e.seen + e.window + e.penalty + e.counter;
    if (total > this.#evictionsLogged && now - this.#lastEvictionLog >= WARN_EVERY_MS) {
      this.#log.warn(
        { evicted: total - this.#evictionsLogged, byKind: e, capacity: this.#table.info.capacity },
        'state table full: least recently used rate-limit and penalty entries were evicted (raise STATE_STORE_CAPACITY if this is ordinary traffic)',
      );
      this.#evictionsLogged = total;
      this.#lastEvictionLog = now;
    }
    const bytes = this.#claims.stats().bytes;
    if (bytes > this.#maxClaimBytes * CLAIM_MEMORY_WARN_SHARE && now - this.#lastMemoryLog >= WARN_EVERY_MS) {
      this.#log.warn(
        { bytes, maxBytes: this.#maxClaimBytes },
        'used-challenge claims are near STATE_STORE_MAX_MEMORY: past it, verifications answer 503 STORE_FULL',
      );
      this.#lastMemoryLog = now;
    }
  }

  /** Tests only: drive this process's clock for claims and soft state (epoch ms; 0 returns to the real clock). */
  setClock(epochMs: number): void {
    this.#claims.setClock(epochMs);
    this.#table.setClock(epochMs);
  }

  stats(): SharedMemoryStats {
    const { capacity, fileBytes } = this.#table.info;
    return { full: this.#full, busy: this.#busy, capacity, fileBytes };
  }

  /** Slots in the file. */
  get capacity(): number {
    return this.#table.info.capacity;
  }

  /** Live, expired and never-used slots; walks the whole file (about 10 ms per million slots). */
  occupancy(): { live: number; expired: number; empty: number } {
    return this.#table.occupancy();
  }

  /**
   * The share of slots that are live, estimated from `slots` consecutive slots (all of them when the
   * table is no larger). Keys are hashed uniformly, so on a 4,194,304-slot table filled to 50 %, 95 %
   * of 65,536-slot windows came within 0.5 percentage points of the whole table's share, at
   * 0.1–0.3 ms each. Each call moves on to the next window, so successive calls cover the whole
   * table. After close() it answers the last sample (a scrape during shutdown does not fail).
   */
  sampleLoad(slots = LOAD_SAMPLE_SLOTS): number {
    if (this.#closed) return this.#lastLoad;
    const capacity = this.#table.info.capacity;
    const count = Math.min(slots, capacity);
    const { live } = this.#table.occupancy(this.#sampleAt, count);
    this.#sampleAt = (this.#sampleAt + count) % capacity;
    this.#lastLoad = live / count;
    return this.#lastLoad;
  }

  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
      this.#table.close();
      this.#claims.close();
    }
    return Promise.resolve();
  }

  #result(limit: number): HitResult {
    const out = this.#out;
    const allowed = out[0] === 1;
    const count = out[1]!;
    return {
      allowed,
      remaining: allowed ? limit - count : 0,
      resetMs: out[2]!,
      blockedUntil: out[3]!,
      count,
    };
  }

  #failure(code: number, claim = true): PalisadeError {
    if (code === SHM_FULL) {
      if (claim) this.#full++;
      return claim ? new PalisadeError('STORE_FULL') : new PalisadeError('STORE_UNAVAILABLE', 'The shared-memory state table stayed contended; retry.');
    }
    if (code === SHM_BUSY) this.#busy++;
    return new PalisadeError('STORE_UNAVAILABLE', 'The shared-memory state table stayed contended; retry.');
  }
}
