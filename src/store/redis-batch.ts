// The Redis state store's batching (redis-store.ts). Claims, hits, counts and reads wait for the end
// of the event loop's poll phase (setImmediate) and go out together: every claim of that turn in one
// command (a Lua script of SET NX), every hit in one script, every count in one script, every read
// in one MGET. Under load a turn handles many requests, and each command costs the client more than
// the keys in it. A failed command fails every operation in it with STORE_UNAVAILABLE.
// On a Redis Cluster each command takes the keys of one slot (a script's keys must share one), so a
// turn sends one command per slot and kind; on one server, one per kind.
// With claimReplicas > 0 the claims command is followed by WAIT on the same connection, and a claim
// stored without that many replicas' acknowledgement answers STORE_UNAVAILABLE (spent, not accepted).
import { isCluster, slotOf, type RedisClient } from './redis-client.js';
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

export interface BatchOptions {
  /** Replicas that must acknowledge claims (WAIT); 0: none. */
  readonly claimReplicas: number;
  /** The command timeout: WAIT gives up before it. */
  readonly waitMs: number;
  /** The client's key prefix, part of a stored key's slot. */
  readonly keyPrefix: string;
}

export class RedisBatches {
  readonly #client: RedisClient;
  readonly #scripts: ScriptCommands;
  readonly #options: BatchOptions;
  /** WAIT's own timeout, ms: short of the command timeout, so WAIT answers before the client gives up. */
  readonly #waitTimeout: number;
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

  constructor(client: RedisClient, memory: RedisMemory, unavailable: (err: unknown) => never, options: BatchOptions) {
    this.#client = client;
    this.#scripts = client as unknown as ScriptCommands;
    this.#options = options;
    this.#waitTimeout = Math.max(1, Math.floor(options.waitMs * 0.8));
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
    for (const batch of this.#batches(counts)) this.#sendCounts(batch);
    for (const batch of this.#batches(hits)) this.#sendHits(batch);
    for (const batch of this.#batches(claims)) this.#sendClaims(batch);
    for (const batch of this.#batches(reads)) this.#sendReads(batch);
  };

  /** `ops` in commands of at most BATCH_MAX keys, each of one slot (every key has slot 0 on one server). */
  *#batches<T extends { readonly key: string }>(ops: T[]): Generator<T[]> {
    if (ops.length === 0) return;
    let groups: Iterable<T[]> = [ops];
    if (isCluster(this.#client)) {
      const bySlot = new Map<number, T[]>();
      for (const op of ops) {
        const slot = slotOf(this.#client, this.#options.keyPrefix + op.key);
        const group = bySlot.get(slot);
        if (group === undefined) bySlot.set(slot, [op]);
        else group.push(op);
      }
      groups = bySlot.values();
    }
    for (const group of groups) {
      for (let i = 0; i < group.length; i += BATCH_MAX) yield group.length <= BATCH_MAX ? group : group.slice(i, i + BATCH_MAX);
    }
  }

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
    if (this.#options.claimReplicas > 0) {
      this.#sendAcknowledgedClaims(batch, fail);
      return;
    }
    if (batch.length === 1) {
      const c = batch[0]!;
      const set = c.expiry === 'PX' ? this.#client.set(c.key, '1', 'PX', c.at, 'NX') : this.#client.set(c.key, '1', 'PXAT', c.at, 'NX');
      set.then((r) => this.#settleClaims(batch, [r === 'OK' ? 1 : 0]), fail);
      return;
    }
    this.#scripts.palisadeClaims(batch.length, ...claimArgs(batch)).then((flags) => this.#settleClaims(batch, flags), fail);
  }

  /**
   * The claims script, then WAIT on the same connection: a claim stored now is answered true only
   * once claimReplicas replicas have it, so the replica a failover promotes knows it. A claim that
   * found its key taken is refused whatever the replicas say.
   */
  #sendAcknowledgedClaims(batch: PendingClaim[], fail: (err: unknown) => void): void {
    const pipeline = this.#client.pipeline() as unknown as ScriptCommands & { call(...args: (string | number)[]): unknown; exec(): Promise<[Error | null, unknown][] | null> };
    pipeline.palisadeClaims(batch.length, ...claimArgs(batch));
    pipeline.call('WAIT', this.#options.claimReplicas, this.#waitTimeout);
    pipeline.exec().then((replies) => {
      const [claimed, waited] = replies ?? [];
      if (claimed === undefined || claimed[0] !== null) return fail(claimed?.[0] ?? new Error('no reply to the claims'));
      const flags = claimed[1] as number[];
      const acknowledged = waited !== undefined && waited[0] === null && Number(waited[1]) >= this.#options.claimReplicas;
      if (acknowledged) return this.#settleClaims(batch, flags);
      const refused = batch.filter((_, i) => flags[i] === 1);
      const reason = new Error(`claims not acknowledged by ${this.#options.claimReplicas} replica(s) within ${this.#waitTimeout} ms (WAIT answered ${waited?.[0] ? waited[0].message : String(waited?.[1])})`);
      this.#failAll(refused)(reason);
      this.#settleClaims(batch.map((c, i) => (flags[i] === 1 ? null : c)), flags);
    }, fail);
  }

  /** Answers each claim by its flag (1: stored now); null entries are already answered. */
  #settleClaims(batch: readonly (PendingClaim | null)[], flags: readonly number[]): void {
    let created = 0;
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i];
      if (c === null || c === undefined) continue;
      if (flags[i] === 1) created++;
      c.resolve(flags[i] === 1);
    }
    this.#memory.noteCreated(created);
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

function claimArgs(batch: readonly PendingClaim[]): (string | number)[] {
  const args: (string | number)[] = batch.map((c) => c.key);
  for (const c of batch) args.push(c.expiry, c.at);
  return args;
}
