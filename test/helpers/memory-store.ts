// A StateStore in one process's memory, for unit tests of code that uses a store. It follows the
// contract in src/store/state-store.ts the way the shared-memory table does (native/shm-table.cc):
// fixed windows aligned to the Unix epoch, a hold of max(end of window, passing hit + block/expire)
// that is not extended by later hits, one counter per key and window length, penalties that expire
// ttlMs after their last addition. test/unit/abuse-memory-store.test.ts runs the store conformance
// suite against it.
// `now` is injectable so tests can step time; `failWith` makes every call reject (store outage).
// Also here: captureLogger(), a real pino logger whose records tests can read.
import { Writable } from 'node:stream';
import { PalisadeError, type ErrorCode } from '../../src/errors.js';
import { createLogger, type Logger } from '../../src/log.js';
import type { RateRule } from '../../src/parse.js';
import {
  checkCount, checkKey, checkPenalty, checkRule, checkTtl, checkUntil, holdMs, STORE_LIMITS, type CountResult, type HitResult,
  type StateStore,
} from '../../src/store/state-store.js';

interface Window {
  /** Epoch ms: end of the window, or end of the hold when held. */
  expiry: number;
  count: number;
  held: boolean;
}

export interface MemoryStoreOptions {
  /** Epoch-ms clock. Default Date.now. */
  now?: () => number;
}

export class MemoryStore implements StateStore {
  readonly kind = 'shared-memory' as const;
  readonly claims = new Map<string, number>();
  readonly seen = new Map<string, number>();
  readonly windows = new Map<string, Window>();
  readonly penalties = new Map<string, { score: number; expiry: number }>();
  /** Counters of countUpTo; delete one to play an eviction. */
  readonly counters = new Map<string, { count: number; expiry: number }>();
  /** Calls made, by method name (tests assert "no store call at all"). */
  readonly calls = { claimOnce: 0, seenOnce: 0, hit: 0, peek: 0, addPenalty: 0, penalty: 0, countUpTo: 0 };
  /** When set, every call rejects with PalisadeError(failWith). */
  failWith: ErrorCode | null = null;
  #now: () => number;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Nothing is ever given up for room here. */
  evictions(): { seen: number; window: number; penalty: number; counter: number } {
    return { seen: 0, window: 0, penalty: 0, counter: 0 };
  }

  claimOnce(id: string, untilMs: number): Promise<boolean> {
    return this.#run('claimOnce', () => {
      checkKey('id', id);
      const now = this.#now();
      checkUntil(untilMs, now);
      const expiry = this.claims.get(id);
      if (expiry !== undefined && expiry > now) return false;
      this.claims.set(id, untilMs);
      return true;
    });
  }

  seenOnce(key: string, ttlMs: number): Promise<boolean> {
    return this.#run('seenOnce', () => {
      checkKey('key', key);
      checkTtl(ttlMs);
      const now = this.#now();
      const expiry = this.seen.get(key);
      if (expiry !== undefined && expiry > now) return false;
      this.seen.set(key, now + ttlMs);
      return true;
    });
  }

  hit(limitKey: string, rule: RateRule): Promise<HitResult> {
    return this.#run('hit', () => {
      checkKey('limitKey', limitKey);
      checkRule(rule);
      const now = this.#now();
      const id = `${rule.windowMs}|${limitKey}`;
      let w = this.windows.get(id);
      if (!w || w.expiry <= now) {
        w = { expiry: (Math.floor(now / rule.windowMs) + 1) * rule.windowMs, count: 0, held: false };
        this.windows.set(id, w);
      }
      w.count = Math.min(w.count + 1, 2 ** 23 - 1);
      const allowed = !w.held && w.count <= rule.count;
      const hold = holdMs(rule);
      if (!w.held && w.count > rule.count && hold > 0) {
        w.held = true;
        w.expiry = Math.max(w.expiry, now + hold);
      }
      return {
        allowed, remaining: allowed ? rule.count - w.count : 0, resetMs: w.expiry - now,
        blockedUntil: w.held ? w.expiry : 0, count: w.count,
      };
    });
  }

  peek(limitKey: string, rule: RateRule): Promise<HitResult> {
    return this.#run('peek', () => {
      checkKey('limitKey', limitKey);
      checkRule(rule);
      const now = this.#now();
      const w = this.windows.get(`${rule.windowMs}|${limitKey}`);
      if (!w || w.expiry <= now) {
        const end = (Math.floor(now / rule.windowMs) + 1) * rule.windowMs;
        return { allowed: true, remaining: rule.count, resetMs: end - now, blockedUntil: 0, count: 0 };
      }
      const allowed = !w.held && w.count < rule.count;
      return {
        allowed, remaining: allowed ? rule.count - w.count : 0, resetMs: w.expiry - now,
        blockedUntil: w.held ? w.expiry : 0, count: w.count,
      };
    });
  }

  addPenalty(key: string, n: number, ttlMs: number): Promise<number> {
    return this.#run('addPenalty', () => {
      checkKey('key', key);
      checkPenalty(n);
      checkTtl(ttlMs);
      const now = this.#now();
      const p = this.penalties.get(key);
      const before = p && p.expiry > now ? p.score : 0;
      const score = Math.min(before + n, STORE_LIMITS.maxPenalty);
      this.penalties.set(key, { score, expiry: now + ttlMs });
      return score;
    });
  }

  penalty(key: string): Promise<number> {
    return this.#run('penalty', () => {
      checkKey('key', key);
      const p = this.penalties.get(key);
      return p && p.expiry > this.#now() ? p.score : 0;
    });
  }

  countUpTo(key: string, limit: number, seed: number | null, untilMs: number): Promise<CountResult | null> {
    return this.#run('countUpTo', () => {
      checkKey('key', key);
      const s = checkCount(limit, seed);
      const now = this.#now();
      checkUntil(untilMs, now);
      let c = this.counters.get(key);
      if (!c || c.expiry <= now) {
        if (s < 0) return null;
        c = { count: s, expiry: untilMs };
        this.counters.set(key, c);
      }
      if (c.count >= limit) return { allowed: false, count: c.count };
      c.count++;
      return { allowed: true, count: c.count };
    });
  }

  ping(): Promise<boolean> {
    return Promise.resolve(!this.#closed && this.failWith === null);
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  #run<T>(name: keyof MemoryStore['calls'], fn: () => T): Promise<T> {
    this.calls[name]++;
    if (this.failWith !== null) return Promise.reject(new PalisadeError(this.failWith));
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

/** A pino logger (src/log.ts) whose JSON records land in `records`, for asserting log lines. */
export function captureLogger(level = 'debug'): { logger: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level, destination }), records };
}
