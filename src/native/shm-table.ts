// The shared-memory table (native/shm-store.cc) behind the shared-memory state store.
import { addon } from './addon.js';
import { argRange, argType, checkInt } from './args.js';

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
/** The largest time in ms that crosses (a TTL or an epoch-ms moment). */
export const SHM_MAX_MS = 2 ** 47;

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
    return this.#raw.claim(id, checkInt('ttlMs', ttlMs, 1, SHM_MAX_MS));
  }

  /** Counts one hit: 0 with `out` filled, SHM_FULL, SHM_BUSY. */
  hit(key: string, limit: number, windowMs: number, holdMs: number): number {
    if (typeof key !== 'string') throw argType('key', 'a string');
    return this.#raw.hit(
      key, checkInt('limit', limit, 1, this.info.countMax - 1), checkInt('windowMs', windowMs, 1, SHM_MAX_MS),
      checkInt('holdMs', holdMs, 0, SHM_MAX_MS),
    );
  }

  /** What a hit would see, without counting: 0 with `out` filled. */
  peek(key: string, limit: number, windowMs: number): number {
    if (typeof key !== 'string') throw argType('key', 'a string');
    return this.#raw.peek(key, checkInt('limit', limit, 1, this.info.countMax - 1), checkInt('windowMs', windowMs, 1, SHM_MAX_MS));
  }

  /** The new score (saturating at info.scoreMax), SHM_FULL or SHM_BUSY. */
  addPenalty(key: string, n: number, ttlMs: number): number {
    if (typeof key !== 'string') throw argType('key', 'a string');
    return this.#raw.addPenalty(key, checkInt('n', n, 0, Number.MAX_SAFE_INTEGER), checkInt('ttlMs', ttlMs, 1, SHM_MAX_MS));
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
      key, checkInt('limit', limit, 0, this.info.counterMax), checkInt('seed', seed, -1, this.info.counterMax),
      checkInt('ttlMs', ttlMs, 1, SHM_MAX_MS),
    );
  }

  /**
   * Counts `count` slots from `start`, wrapping past the last slot; by default every slot. O(count),
   * for gauges and the CLI, not for the hot path.
   */
  occupancy(start = 0, count = this.info.capacity): { live: number; expired: number; empty: number } {
    this.#raw.occupancy(checkInt('start', start, 0, this.info.capacity - 1), checkInt('count', count, 1, this.info.capacity));
    return { live: this.out[0]!, expired: this.out[1]!, empty: this.out[2]! };
  }

  /** Entries this process evicted (least recently used, when a probe window had no free slot), by kind. */
  evictions(): { seen: number; window: number; penalty: number; counter: number } {
    this.#raw.evictions();
    return { seen: this.out[0]!, window: this.out[1]!, penalty: this.out[2]!, counter: this.out[3]! };
  }

  /** Tests only: epoch ms that replaces the real clock for this process's view (0: the real clock). */
  setClock(epochMs: number): void {
    this.#raw.setClock(checkInt('epochMs', epochMs, 0, SHM_MAX_MS));
  }

  /** Unmaps the file; the table stays on disk for the other processes and the next start. */
  close(): void {
    this.#raw.close();
  }
}
