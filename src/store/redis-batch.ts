// The Redis state store's batching (redis-store.ts). Claims, hits, counts and reads wait for the end
// of the event loop's poll phase (setImmediate) and go out together: every claim of that turn in one
// command (a Lua script of SET NX), every hit in one script, every count in one script, every read
// in one MGET. Under load a turn handles many requests, and each command costs the client more than
// the keys in it. A failed command fails every operation in it with STORE_UNAVAILABLE.
// On a Redis Cluster each command takes the keys of one slot (a script's keys must share one), so a
// turn sends one command per slot and kind; on one server, one per kind.
// With claimReplicas > 0 the claims command is followed, on the same connection, by ROLE and WAIT:
// a claim stored now is answered true once min(claimReplicas, the replicas ROLE lists) replicas
// acknowledged it, and STORE_UNAVAILABLE otherwise (spent, not accepted). A replica that attaches
// after ROLE answered receives the claim in its first synchronisation, so a master with fewer
// replicas (none, after a failover took its only one) goes on serving without waiting for them.
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
  /** Replicas each master listed at its last ROLE, by node ("host:port"; "server" for one server). */
  readonly #replicas = new Map<string, number>();
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
   * The claims script, ROLE and WAIT in one pipeline to the slot's master. WAIT asks for as many
   * replicas as that master listed last time (no WAIT for a master not seen yet or without
   * replicas, so a master promoted by a failover is never waited on for replicas it lacks); ROLE,
   * run after the claims, says how many it has now. The claims stand when the acknowledgements reach
   * min(claimReplicas, that number); when WAIT asked for fewer, a second pipeline to the same slot
   * checks that the keys are there and waits for the rest (confirm()). A claim that found its key
   * taken is refused whatever the replicas say.
   */
  #sendAcknowledgedClaims(batch: PendingClaim[], fail: (err: unknown) => void): void {
    const node = this.#nodeOf(batch[0]!.key);
    const asked = Math.min(this.#options.claimReplicas, this.#replicas.get(node) ?? 0);
    const pipeline = this.#client.pipeline() as unknown as AckPipeline;
    pipeline.palisadeClaims(batch.length, ...claimArgs(batch));
    pipeline.call('ROLE');
    if (asked > 0) pipeline.call('WAIT', asked, this.#waitTimeout);
    pipeline.exec().then(async (replies) => {
      const [claimed, role, waited] = replies ?? [];
      if (claimed === undefined || claimed[0] !== null) return fail(claimed?.[0] ?? new Error('no reply to the claims'));
      const flags = claimed[1] as number[];
      const stored = batch.filter((_, i) => flags[i] === 1);
      const answer = (ok: boolean, why: string) => {
        if (!ok && stored.length > 0) this.#failAll(stored)(new Error(why));
        this.#settleClaims(ok ? batch : batch.map((c, i) => (flags[i] === 1 ? null : c)), flags);
      };
      const listed = this.#noteRole(node, role);
      const needed = Math.min(this.#options.claimReplicas, listed ?? this.#options.claimReplicas);
      const acknowledged = asked === 0 ? 0 : waited !== undefined && waited[0] === null ? Number(waited[1]) : -1;
      if (acknowledged >= needed || stored.length === 0) return answer(true, '');
      if (acknowledged >= 0 && asked < needed) return answer(await this.#confirm(stored, node, needed), `claims not on their master or not acknowledged by ${needed} replica(s) within ${this.#waitTimeout} ms`);
      answer(false, `claims acknowledged by ${acknowledged < 0 ? 'no' : acknowledged} of ${needed} replica(s) within ${this.#waitTimeout} ms`);
    }, (err: unknown) => {
      // Unanswered (a command timeout): forget the master's replica count, so the next claims do
      // not ask WAIT for replicas it may no longer have (a promoted master) and time out again;
      // their ROLE tells, and confirm() waits when there are replicas.
      this.#replicas.delete(node);
      fail(err);
    });
  }

  /**
   * The second pipeline, to the claims' slot: EXISTS of the keys stored now, ROLE, WAIT. Whichever
   * master answers, if it holds every key and enough of its replicas acknowledge its writes so far,
   * the claims survive its failover.
   */
  async #confirm(stored: readonly PendingClaim[], node: string, needed: number): Promise<boolean> {
    const pipeline = this.#client.pipeline() as unknown as AckPipeline;
    pipeline.exists(...stored.map((c) => c.key));
    pipeline.call('ROLE');
    pipeline.call('WAIT', needed, this.#waitTimeout);
    try {
      const [exists, role, waited] = (await pipeline.exec()) ?? [];
      const listed = this.#noteRole(node, role);
      const want = Math.min(this.#options.claimReplicas, listed ?? this.#options.claimReplicas);
      return exists?.[0] === null && Number(exists[1]) === stored.length && waited?.[0] === null && Number(waited[1]) >= want;
    } catch {
      return false;
    }
  }

  /** Keeps the number of replicas a ROLE reply lists for `node`; null when the reply is not a master's. */
  #noteRole(node: string, role: [Error | null, unknown] | undefined): number | null {
    const listed = role !== undefined && role[0] === null ? replicasListed(role[1]) : null;
    if (listed !== null) this.#replicas.set(node, listed);
    return listed;
  }

  /** The master a stored key's slot belongs to, as the client knows it ("server" on one server). */
  #nodeOf(key: string): string {
    if (!isCluster(this.#client)) return 'server';
    return this.#client.slots[slotOf(this.#client, this.#options.keyPrefix + key)]?.[0] ?? 'unknown';
  }

  /** Replicas a master listed (its ROLE, read at start and by each acknowledged claims command). */
  noteReplicas(node: string, count: number): void {
    this.#replicas.set(node, count);
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

type AckPipeline = ScriptCommands & {
  call(...args: (string | number)[]): unknown;
  exists(...keys: string[]): unknown;
  exec(): Promise<[Error | null, unknown][] | null>;
};

function claimArgs(batch: readonly PendingClaim[]): (string | number)[] {
  const args: (string | number)[] = batch.map((c) => c.key);
  for (const c of batch) args.push(c.expiry, c.at);
  return args;
}

/** The replicas a ROLE reply lists: ['master', offset, [[ip, port, offset], …]]; null for another role. */
function replicasListed(reply: unknown): number | null {
  return Array.isArray(reply) && reply[0] === 'master' && Array.isArray(reply[2]) ? reply[2].length : null;
}
