// StateStore on a memory-mapped file shared by every process on the host (DESIGN.md section 2.2;
// format and lock-free rules in native/shm-table.h). The default store: no server to run, survives a
// worker crash (no locks) and a restart (file-backed).
//
// Sizing: 16 bytes per slot; keep live entries (used challenges within their TTL, rate-limit keys
// within their window or hold, penalties within their TTL) at or below half the capacity, i.e.
// 32 bytes per entry. This factory's default 1,048,576 slots make a 16 MiB file for about 524,000
// entries; the service passes STATE_STORE_CAPACITY (4,194,304 slots, 64 MiB, by default). Filled
// with random keys, the first STORE_FULL came at 57–65 % and 1 % of claims failed at 72–74 % (README,
// "Sizing the shared-memory state table").
// When no slot is free within the probe window of a key, the operation fails closed with
// STORE_FULL and `stats().full` counts it.
//
// The *Sync methods are the hot path (about a microsecond, no Promise); the StateStore methods
// wrap them for callers that work with either store.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PalisadeError } from '../errors.js';
import { SHM_BUSY, SHM_FULL, ShmTable } from '../native.js';
import type { RateRule } from '../parse.js';
import { checkKey, checkPenalty, checkRule, checkTtl, holdMs, type HitResult, type StateStore } from './state-store.js';

export interface SharedMemoryStoreOptions {
  /** Slots in the file, 16 bytes each. Default 1,048,576 (a 16 MiB file, ~524k live entries). */
  capacity?: number;
}

const DEFAULTS = { capacity: 1_048_576 } as const;
/** Slots sampleLoad() counts per call: 1 MiB of the file. */
export const LOAD_SAMPLE_SLOTS = 65_536;

export interface SharedMemoryStats {
  /** Operations refused with STORE_FULL by this process (a counter; sum it across workers). */
  readonly full: number;
  /** Operations refused with STORE_UNAVAILABLE under pathological contention by this process. */
  readonly busy: number;
  readonly capacity: number;
  readonly fileBytes: number;
}

/**
 * Opens (or creates) the state file at `path`; its directory is created when missing. Throws a
 * plain Error saying what to do when the file belongs to another format or capacity: a changed
 * capacity is refused rather than silently recreated, because recreating forgets used challenges.
 */
export function openSharedMemoryStore(path: string, options: SharedMemoryStoreOptions = {}): SharedMemoryStore {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return new SharedMemoryStore(new ShmTable(path, options.capacity ?? DEFAULTS.capacity));
}

export class SharedMemoryStore implements StateStore {
  readonly kind = 'shared-memory' as const;
  readonly #table: ShmTable;
  readonly #out: Float64Array;
  #full = 0;
  #busy = 0;
  #closed = false;
  /** Where the next sampleLoad() window starts; a random slot at first, so workers sample different windows. */
  #sampleAt: number;
  #lastLoad = 0;

  constructor(table: ShmTable) {
    this.#table = table;
    this.#out = table.out;
    this.#sampleAt = Math.floor(Math.random() * table.info.capacity);
  }

  /** True exactly once per id among all processes on the host; throws STORE_FULL when no slot is free. */
  claimOnceSync(id: string, ttlMs: number): boolean {
    const r = this.#table.claim(checkKey('id', id), checkTtl(ttlMs));
    if (r < 0) throw this.#failure(r);
    return r === 1;
  }

  hitSync(limitKey: string, rule: RateRule): HitResult {
    checkRule(rule);
    const r = this.#table.hit(checkKey('limitKey', limitKey), rule.count, rule.windowMs, holdMs(rule));
    if (r < 0) throw this.#failure(r);
    return this.#result(rule.count);
  }

  peekSync(limitKey: string, rule: RateRule): HitResult {
    checkRule(rule);
    this.#table.peek(checkKey('limitKey', limitKey), rule.count, rule.windowMs);
    return this.#result(rule.count);
  }

  addPenaltySync(key: string, n: number, ttlMs: number): number {
    const r = this.#table.addPenalty(checkKey('key', key), checkPenalty(n), checkTtl(ttlMs));
    if (r < 0) throw this.#failure(r);
    return r;
  }

  penaltySync(key: string): number {
    return this.#table.penalty(checkKey('key', key));
  }

  /** Every read here is synchronous. */
  get sync(): this {
    return this;
  }

  claimOnce(id: string, ttlMs: number): Promise<boolean> {
    try {
      return Promise.resolve(this.claimOnceSync(id, ttlMs));
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

  /** The mapping is either there or the store is closed: nothing to reach. */
  ping(): Promise<boolean> {
    return Promise.resolve(!this.#closed);
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
      this.#table.close();
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

  #failure(code: number): PalisadeError {
    if (code === SHM_FULL) {
      this.#full++;
      return new PalisadeError('STORE_FULL');
    }
    if (code === SHM_BUSY) this.#busy++;
    return new PalisadeError('STORE_UNAVAILABLE', 'The shared-memory state table stayed contended; retry.');
  }
}
