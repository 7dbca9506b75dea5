// The Redis state store's batching (redis-store.ts). Claims, hits, counts and reads wait for the end
// of the event loop's poll phase (setImmediate) and go out together: every claim of that turn in one
// command (a Lua script of SET NX), every hit in one script, every count in one script, every read
// in one MGET. Under load a turn handles many requests, and each command costs the client more than
// the keys in it. A failed command fails every operation in it with STORE_UNAVAILABLE.
import type { Redis } from 'ioredis';
import type { RedisMemory } from './redis-memory.js';
import type { ScriptCommands } from './redis-scripts.js';
import type { CountResult, HitResult } from './state-store.js';

/** Keys per batched command; a turn with more goes out in several. */
const BATCH_MAX = 500;

interface Pending<T> {
  readonly key: string;
  readonly resolve: (value: T) => void;
  readonly reject: (err: unknown) => void;
}

interface PendingClaim extends Pending<boolean> {
  /** PXAT for claims (an epoch-ms moment), PX for first-seen entries (a TTL). */
  readonly expiry: 'PX' | 'PXAT';
  readonly at: number;
}

interface PendingCount extends Pending<CountResult | null> {
  readonly limit: number;
  /** -1: none. */
  readonly seed: number;
  readonly until: number;
}

interface PendingHit extends Pending<HitResult> {
  readonly limit: number;
  readonly windowMs: number;
  readonly holdMs: number;
}

export class RedisBatches {
  readonly #client: Redis;
  readonly #scripts: ScriptCommands;
  readonly #memory: RedisMemory;
  /** Logs `err` and throws STORE_UNAVAILABLE. */
  readonly #unavailable: (err: unknown) => never;
  /** claim() calls waiting for this turn's claims command. */
  #claims: PendingClaim[] = [];
  /** hit() calls waiting for this turn's hits command. */
  #hits: PendingHit[] = [];
  /** read() calls waiting for this turn's MGET. */
  #reads: Pending<number>[] = [];
  /** count() calls waiting for this turn's counts command. */
  #counts: PendingCount[] = [];
  #flushScheduled = false;

  constructor(client: Redis, scripts: ScriptCommands, memory: RedisMemory, unavailable: (err: unknown) => never) {
    this.#client = client;
    this.#scripts = scripts;
    this.#memory = memory;
    this.#unavailable = unavailable;
  }

  /** SET key 1 <PX at | PXAT at> NX: true when stored now. */
  claim(key: string, expiry: 'PX' | 'PXAT', at: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#schedule();
      this.#claims.push({ key, expiry, at, resolve, reject });
    });
  }

  hit(key: string, limit: number, windowMs: number, holdMs: number): Promise<HitResult> {
    return new Promise<HitResult>((resolve, reject) => {
      this.#schedule();
      this.#hits.push({ key, limit, windowMs, holdMs, resolve, reject });
    });
  }

  count(key: string, limit: number, seed: number, until: number): Promise<CountResult | null> {
    return new Promise<CountResult | null>((resolve, reject) => {
      this.#schedule();
      this.#counts.push({ key, limit, seed, until, resolve, reject });
    });
  }

  /** The number stored at `key`, 0 when absent. */
  read(key: string): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.#schedule();
      this.#reads.push({ key, resolve, reject });
    });
  }

  #schedule(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    this.#flushScheduled = false;
    const { claims, hits, reads, counts } = this.#take();
    for (let i = 0; i < counts.length; i += BATCH_MAX) this.#sendCounts(counts.slice(i, i + BATCH_MAX));
    for (let i = 0; i < hits.length; i += BATCH_MAX) this.#sendHits(hits.slice(i, i + BATCH_MAX));
    for (let i = 0; i < claims.length; i += BATCH_MAX) this.#sendClaims(claims.slice(i, i + BATCH_MAX));
    for (let i = 0; i < reads.length; i += BATCH_MAX) this.#sendReads(reads.slice(i, i + BATCH_MAX));
  };

  #take(): { claims: PendingClaim[]; hits: PendingHit[]; reads: Pending<number>[]; counts: PendingCount[] } {
    const taken = { claims: this.#claims, hits: this.#hits, reads: this.#reads, counts: this.#counts };
    this.#claims = [];
    this.#hits = [];
    this.#reads = [];
    this.#counts = [];
    return taken;
  }

  #sendCounts(batch: PendingCount[]): void {
    const args: (string | number)[] = batch.map((c) => c.key);
    for (const c of batch) args.push(c.limit, c.seed, c.until);
    this.#scripts.palisadeCounts(batch.length, ...args).then((r) => {
      for (let i = 0; i < batch.length; i++) {
        const allowed = r[2 * i]!;
        batch[i]!.resolve(allowed < 0 ? null : { allowed: allowed === 1, count: r[2 * i + 1]! });
      }
    }, this.#failAll(batch));
  }

  #sendHits(batch: PendingHit[]): void {
    const args: (string | number)[] = batch.map((h) => h.key);
    for (const h of batch) args.push(h.limit, h.windowMs, h.holdMs);
    args.push(this.#memory.shed ? '1' : '0');
    this.#scripts.palisadeHits(batch.length, ...args).then((r) => {
      this.#memory.evicted.window += r[5 * batch.length] ?? 0;
      this.#memory.noteCreated(r[5 * batch.length + 1] ?? 0);
      for (let i = 0; i < batch.length; i++) {
        const o = 5 * i;
        batch[i]!.resolve({ allowed: r[o] === 1, remaining: r[o + 1]!, resetMs: r[o + 2]!, blockedUntil: r[o + 3]!, count: r[o + 4]! });
      }
    }, this.#failAll(batch));
  }

  // A claim in a batch that failed may still have been stored: that challenge is spent, never
  // accepted twice.
  #sendClaims(batch: PendingClaim[]): void {
    const fail = this.#failAll(batch);
    if (batch.length === 1) {
      const c = batch[0]!;
      const set = c.expiry === 'PX' ? this.#client.set(c.key, '1', 'PX', c.at, 'NX') : this.#client.set(c.key, '1', 'PXAT', c.at, 'NX');
      set.then((r) => {
        if (r === 'OK') this.#memory.noteCreated(1);
        c.resolve(r === 'OK');
      }, fail);
      return;
    }
    const args: (string | number)[] = batch.map((c) => c.key);
    for (const c of batch) args.push(c.expiry, c.at);
    this.#scripts.palisadeClaims(batch.length, ...args).then((flags) => {
      let created = 0;
      for (let i = 0; i < batch.length; i++) {
        if (flags[i] === 1) created++;
        batch[i]!.resolve(flags[i] === 1);
      }
      this.#memory.noteCreated(created);
    }, fail);
  }

  #sendReads(batch: Pending<number>[]): void {
    const fail = this.#failAll(batch);
    const settle = (values: (string | null)[]) => {
      for (let i = 0; i < batch.length; i++) {
        const v = values[i];
        batch[i]!.resolve(v === null || v === undefined ? 0 : Number(v));
      }
    };
    if (batch.length === 1) this.#client.get(batch[0]!.key).then((v) => settle([v]), fail);
    else this.#client.mget(batch.map((r) => r.key)).then(settle, fail);
  }

  #failAll(batch: readonly Pending<never>[]): (err: unknown) => void {
    return (err) => {
      let refusal: unknown;
      try {
        this.#unavailable(err);
      } catch (e) {
        refusal = e;
      }
      for (const op of batch) op.reject(refusal);
    };
  }
}
