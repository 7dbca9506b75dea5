// StateStore on Redis (REDIS_URL), for several hosts sharing one state. DESIGN.md section 3.
// Claims are `SET key 1 PXAT until NX`; rate-limit hits, counters and penalty additions are Lua
// scripts (redis-scripts.ts). Claims, hits, counts and reads of one event-loop turn go out together
// (redis-batch.ts); penalty additions and peeks go at once, so a read issued before an addition in
// the same turn may already see it (nothing relies on the opposite). Soft state sheds under memory
// pressure, and an evicting maxmemory-policy is refused (redis-memory.ts).
// The client never queues: with Redis down or slow, an operation rejects with STORE_UNAVAILABLE
// within commandTimeout, and a claim is never answered true without Redis having stored it (and,
// with claimReplicas, without that many replicas having acknowledged it: a failover then cannot
// forget a used challenge).
//
// REDIS_URL may name one server, a Redis Cluster or a Sentinel-watched master (redis-url.ts,
// redis-client.ts). On a cluster every id is a hash tag (`c:{id}`, `r60000:{id}`), so a client's
// windows, penalty and counters share one slot, and each batched script is sent per slot: no
// script ever touches two slots.
import { createHash } from 'node:crypto';
import { PalisadeError } from '../errors.js';
import type { RateRule } from '../parse.js';
import { RedisBatches } from './redis-batch.js';
import { createRedisClient, isCluster, masters, type RedisClient } from './redis-client.js';
import { errorText, RedisMemory } from './redis-memory.js';
import { defineScripts, type ScriptCommands, toHitResult } from './redis-scripts.js';
import {
  checkCount, checkKey, checkPenalty, checkRule, checkTtl, checkUntil, holdMs, type CountResult, type HitResult,
  type StateStore, type StoreLogger,
} from './state-store.js';

export interface RedisStoreOptions {
  /** Prefix of every key. Default 'palisade:'. */
  keyPrefix?: string;
  /** Longest wait for one command, ms (REDIS_COMMAND_TIMEOUT). Default 5000. */
  commandTimeout?: number;
  /** Longest wait for a connection, ms (REDIS_CONNECT_TIMEOUT). Default 10000. */
  connectTimeout?: number;
  /** Resends of a command interrupted by a reconnection (REDIS_MAX_RETRIES). Default 2. */
  maxRetries?: number;
  /** Where connection problems and the eviction-policy warning go. Default: stderr. */
  logger?: StoreLogger;
  /**
   * REDIS_ALLOW_EVICTION: go on (with a warning) when maxmemory-policy is not noeviction. Default
   * false: openRedisStore rejects, and after a reconnection to such a server claims answer
   * STORE_UNAVAILABLE.
   */
  allowEviction?: boolean;
  /**
   * REDIS_CLAIM_REPLICAS: replicas that must acknowledge a claim (Redis WAIT) before it is answered
   * true; fewer within commandTimeout answer STORE_UNAVAILABLE, the challenge spent. Default 0.
   */
  claimReplicas?: number;
}

const DEFAULTS = {
  keyPrefix: 'palisade:',
  commandTimeout: 5000,
  connectTimeout: 10_000,
  maxRetries: 2,
  allowEviction: false,
  claimReplicas: 0,
} as const;

const consoleLogger: StoreLogger = {
  info: (obj, msg) => console.error(msg, obj),
  warn: (obj, msg) => console.error(msg, obj),
  error: (obj, msg) => console.error(msg, obj),
};

/** Failures are logged at most this often, so an outage does not flood the log. */
const LOG_EVERY_MS = 10_000;
/** Ids up to this length (and free of lone surrogates) are stored as they are; longer ones hashed. */
const RAW_KEY_MAX = 200;
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Connects to `url` and resolves once the first connection is ready and its eviction policy checked,
 * or once the first attempt failed (the client keeps reconnecting; until then operations reject
 * with STORE_UNAVAILABLE and ping() answers false). Never rejects for an unreachable server.
 */
export async function openRedisStore(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
  const o = { ...DEFAULTS, ...options };
  const client = createRedisClient(url, {
    keyPrefix: o.keyPrefix,
    enableOfflineQueue: false,
    commandTimeout: o.commandTimeout,
    connectTimeout: o.connectTimeout,
    maxRetriesPerRequest: o.maxRetries,
    // No auto-pipelining: with it, a command queued behind a stalled one outlived commandTimeout
    // (test/reliability/redis-stall.test.ts saw 503s after two timeouts, not one). Claims, hits
    // and reads are batched per event-loop turn by the store instead.
  });
  defineScripts(client);
  const store = new RedisStore(client, o.logger ?? consoleLogger, o.allowEviction, o.claimReplicas, o.commandTimeout, o.keyPrefix);
  await store.connect(o.connectTimeout);
  const problem = store.evictionProblem;
  if (problem !== null) {
    await store.close();
    throw new Error(problem);
  }
  return store;
}

export class RedisStore implements StateStore {
  readonly kind = 'redis' as const;
  readonly #client: RedisClient;
  /** Ids are hash tags (a cluster: `kind:{id}`). */
  readonly #tagged: boolean;
  readonly #scripts: ScriptCommands;
  readonly #log: StoreLogger;
  readonly #unavailable: (err: unknown) => never;
  readonly #memory: RedisMemory;
  readonly #batches: RedisBatches;
  #lastLogAt = 0;
  /**
   * Settles once the first connection's eviction policy has been read. A cluster announces 'ready'
   * a tick after its connect() resolves, so connect() waits for this rather than for connect().
   */
  readonly #firstPolicyCheck: Promise<void>;
  #policyChecked: () => void = () => undefined;

  constructor(client: RedisClient, log: StoreLogger, allowEviction = false, claimReplicas = 0, commandTimeout = 5000, keyPrefix = '') {
    this.#client = client;
    this.#tagged = isCluster(client);
    this.#scripts = client as unknown as ScriptCommands;
    this.#log = log;
    this.#unavailable = (err) => {
      this.#logFailure(err);
      // A command to a dead master times out in its node's queue without telling the cluster client
      // that the slots moved: ask the cluster where they are now (one refresh at a time).
      if (isCluster(client)) client.refreshSlotsCache();
      throw new PalisadeError('STORE_UNAVAILABLE');
    };
    this.#memory = new RedisMemory(client, log, allowEviction);
    this.#batches = new RedisBatches(client, this.#memory, this.#unavailable, { claimReplicas, waitMs: commandTimeout, keyPrefix });
    this.#firstPolicyCheck = new Promise<void>((resolve) => { this.#policyChecked = resolve; });
    client.on('ready', () => {
      const replicas = claimReplicas > 0 ? this.#checkReplicas(claimReplicas) : Promise.resolve();
      void Promise.all([this.#memory.checkEvictionPolicy(), replicas]).then(() => this.#policyChecked());
      this.#memory.watch();
    });
    client.on('error', (err: unknown) => this.#logFailure(err));
  }

  /** @internal Used by openRedisStore: the first connection attempt, bounded by `timeoutMs`. */
  connect(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.#client.connect().then(
        () => this.#firstPolicyCheck,
        () => undefined,
      ).finally(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Why start-up was refused: the server's maxmemory-policy can evict claim keys (null: it cannot). */
  get evictionProblem(): string | null {
    return this.#memory.evictionProblem;
  }

  /** Sent with the other claims of this event-loop turn (redis-batch.ts). */
  claimOnce(id: string, untilMs: number): Promise<boolean> {
    let key: string;
    let until: number;
    try {
      key = storeKey('c', checkKey('id', id), this.#tagged);
      until = checkUntil(untilMs, Date.now());
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.evictionProblem !== null) {
      this.#logFailure(new Error(this.evictionProblem));
      return Promise.reject(new PalisadeError('STORE_UNAVAILABLE'));
    }
    return this.#batches.claim(key, 'PXAT', until);
  }

  /** Soft: a first-seen entry with a TTL, batched with the claims. While shedding: "seen", nothing stored. */
  seenOnce(key: string, ttlMs: number): Promise<boolean> {
    let k: string;
    let ttl: number;
    try {
      k = storeKey('s', checkKey('key', key), this.#tagged);
      ttl = checkTtl(ttlMs);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.#memory.shed) {
      this.#memory.evicted.seen++;
      return Promise.resolve(false);
    }
    return this.#batches.claim(k, 'PX', ttl);
  }

  /** Sent with the other hits of this event-loop turn (redis-batch.ts). */
  hit(limitKey: string, rule: RateRule): Promise<HitResult> {
    let key: string;
    try {
      checkRule(rule);
      key = storeKey(`r${rule.windowMs}`, checkKey('limitKey', limitKey), this.#tagged);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#batches.hit(key, rule.count, rule.windowMs, holdMs(rule));
  }

  /**
   * Sent with the other counts of this event-loop turn (redis-batch.ts). Counters are kept like claims:
   * under noeviction Redis drops none before its moment; a Redis that lost its data reports them absent.
   */
  countUpTo(key: string, limit: number, seed: number | null, untilMs: number): Promise<CountResult | null> {
    let k: string;
    let s: number;
    let until: number;
    try {
      s = checkCount(limit, seed);
      k = storeKey('n', checkKey('key', key), this.#tagged);
      until = checkUntil(untilMs, Date.now());
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#batches.count(k, limit, s, until);
  }

  peek(limitKey: string, rule: RateRule): Promise<HitResult> {
    try {
      checkRule(rule);
      const key = storeKey(`r${rule.windowMs}`, checkKey('limitKey', limitKey), this.#tagged);
      return this.#scripts.palisadePeek(key, rule.count, rule.windowMs).then(toHitResult, this.#unavailable);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  addPenalty(key: string, n: number, ttlMs: number): Promise<number> {
    try {
      const k = storeKey('p', checkKey('key', key), this.#tagged);
      return this.#scripts.palisadePenalty(k, checkPenalty(n), checkTtl(ttlMs), this.#memory.shed ? '1' : '0').then(([score, how]) => {
        if (how === 2) this.#memory.evicted.penalty++;
        else if (how === 1) this.#memory.noteCreated(1);
        return Number(score);
      }, this.#unavailable);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Sent with the other reads of this event-loop turn as one MGET: a verification's penalty and
   * failed attempts, and every other request's reads of the same turn (S3 ÷ L 0.22 → 0.30 when this came in).
   */
  penalty(key: string): Promise<number> {
    let k: string;
    try {
      k = storeKey('p', checkKey('key', key), this.#tagged);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#batches.read(k);
  }

  /**
   * Does Redis keep its data across a restart? true with the append-only file on, false without it
   * (RDB snapshots alone lose every claim since the last one), null when it cannot tell
   * (unreachable, CONFIG refused). Never rejects.
   */
  appendOnly(): Promise<boolean | null> {
    const each = masters(this.#client).map((node) => node.config('GET', 'appendonly').then(
      (reply) => {
        const value = (reply as string[])[1];
        return value === undefined ? null : value === 'yes';
      },
      () => null,
    ));
    // Every master must keep its data; one that cannot tell makes the answer unknown.
    return Promise.all(each).then((all) => (all.length === 0 || all.includes(null) ? null : all.every(Boolean)));
  }

  /** New soft entries this process did not create while shedding, by kind. */
  /** Counters are never shed (redis-memory.ts): `counter` is always 0 here. */
  evictions(): { seen: number; window: number; penalty: number; counter: number } {
    return { ...this.#memory.evicted, counter: 0 };
  }

  /** Whether soft state is being shed (Redis's memory past SOFT_SHED_AT of maxmemory). */
  get shedding(): boolean {
    return this.#memory.shed;
  }

  /** Reads Redis's memory and sheds soft state or stops (redis-memory.ts). Runs every second; tests call it. */
  checkMemory(): Promise<void> {
    return this.#memory.check();
  }

  /** PING within commandTimeout; false when Redis is unreachable or slow. Never rejects. */
  ping(): Promise<boolean> {
    return this.#client.ping().then((r) => r === 'PONG', () => false);
  }

  async close(): Promise<void> {
    this.#memory.stop();
    if (this.#client.status === 'ready') {
      try {
        await this.#client.quit();
      } catch {
        // fall through: drop the connection
      }
    }
    // Also after QUIT: a Sentinel client's connections to the sentinels (its failover detector) and a
    // cluster's connections to nodes it stopped using stay open until disconnect().
    this.#client.disconnect();
  }

  /** Reads each master's replicas at (re)connection, and says when one has fewer than claims ask for. */
  async #checkReplicas(wanted: number): Promise<void> {
    const cluster = isCluster(this.#client);
    for (const node of masters(this.#client)) {
      let listed: number;
      try {
        const role = await node.call('ROLE') as [string, number, unknown[]];
        if (role[0] !== 'master' || !Array.isArray(role[2])) continue;
        listed = role[2].length;
      } catch {
        continue;
      }
      const name = `${node.options.host}:${node.options.port}`;
      this.#batches.noteReplicas(cluster ? name : 'server', listed);
      if (listed < wanted) {
        this.#log.warn(
          { master: name, replicas: listed, claimReplicas: wanted },
          'A Redis master has fewer replicas than REDIS_CLAIM_REPLICAS: its claims wait for the replicas it has (a replica that attaches later receives them in its first synchronisation)',
        );
      }
    }
  }

  #logFailure(err: unknown): void {
    const now = Date.now();
    if (now - this.#lastLogAt < LOG_EVERY_MS) return;
    this.#lastLogAt = now;
    this.#log.error({ err: errorText(err) }, 'Redis state store unavailable; operations answer STORE_UNAVAILABLE');
  }
}

/**
 * `<kind>:<id>` for ordinary ids; `<kind>#<sha256 of the UTF-16 code units>` for long ones and
 * for strings with lone surrogates (which UTF-8 would turn into U+FFFD, merging distinct ids).
 * The separator keeps the two forms apart. Tagged (a cluster): `<kind>:{<id>}` and `<kind>#{<sha256>}`,
 * the id the hash tag; an id holding a brace is hashed, so its tag is the whole id.
 */
function storeKey(kind: string, id: string, tagged: boolean): string {
  const raw = id.length <= RAW_KEY_MAX && !LONE_SURROGATE.test(id) && !(tagged && /[{}]/.test(id));
  const part = raw ? id : createHash('sha256').update(Buffer.from(id, 'utf16le')).digest('base64url');
  if (!tagged) return raw ? `${kind}:${part}` : `${kind}#${part}`;
  return raw ? `${kind}:{${part}}` : `${kind}#{${part}}`;
}
