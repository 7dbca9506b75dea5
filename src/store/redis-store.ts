// StateStore on Redis (REDIS_URL), for several hosts sharing one state. DESIGN.md section 3.
// Claims are `SET key 1 PXAT until NX` (hard state: refused at start unless Redis's
// maxmemory-policy is noeviction, so no key can be evicted). Hard and soft state share one Redis
// and its maxmemory, so soft state sheds instead of competing: every second the store reads
// used_memory and maxmemory, and past 80 % (until below 70 %) a rate-limit window, penalty or
// first-seen entry that does not exist yet is not created (the hit counts as the first of a fresh
// window; counted as an eviction), while existing entries and claims go on. An attacker rotating
// addresses can then exhaust the soft share, never the room of claims, and cannot remove the mark
// of an address already marked. Plan-limit counters are created whatever the memory, like claims
// (one per limited account and month). Rate-limit hits, counters and penalty additions are Lua
// scripts (atomic on the server, clocked by the server's TIME so every node agrees on window
// boundaries).
// Claims, hits, counts and reads wait for the end of the event loop's poll phase (setImmediate) and
// go out together: every claim of that turn in one command (a Lua script of SET NX), every hit in
// one script, every count in one script, every read in one MGET. Under load a turn handles many requests, and each command costs
// the client more than the keys in it. Penalty additions and peeks go at once, so a read issued
// before an addition in the same turn may already see it (nothing relies on the opposite).
// The client never queues: with Redis down or slow, an operation rejects with STORE_UNAVAILABLE
// within commandTimeout, and a claim is never answered true without Redis having stored it.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { PalisadeError } from '../errors.js';
import type { RateRule } from '../parse.js';
import {
  STORE_LIMITS, checkCount, checkKey, checkPenalty, checkRule, checkTtl, checkUntil, holdMs, type CountResult, type HitResult,
  type StateStore,
} from './state-store.js';

/** What the store needs of a logger (pino's methods fit). */
export interface StoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

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
}

const DEFAULTS = {
  keyPrefix: 'palisade:',
  commandTimeout: 5000,
  connectTimeout: 10_000,
  maxRetries: 2,
  allowEviction: false,
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

// Window state in one string "held:expiry:count" (expiry: the window's end, or the held-until
// while held; epoch ms). The same rules as native/shm-table.cc Table::Hit. One hit per key, in
// order (two hits on one key in a batch count twice); ARGV holds limit, window, hold per key; the
// reply is five numbers per key.
const HITS_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local shed = ARGV[#ARGV] == '1'
local out = {}
local skipped, created = 0, 0
for i = 1, #KEYS do
  local limit, win, hold = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
  local held, expiry, count = 0, 0, 0
  local v = redis.call('GET', KEYS[i])
  if v then
    local h, e, c = string.match(v, '^(%d):(%d+):(%d+)$')
    if h then held, expiry, count = tonumber(h), tonumber(e), tonumber(c) end
  end
  if expiry <= now then
    held, count, expiry = 0, 0, (math.floor(now / win) + 1) * win
  end
  count = math.min(count + 1, ${STORE_LIMITS.maxRuleCount + 1})
  local allowed = 0
  if held == 0 and count <= limit then allowed = 1 end
  if held == 0 and count > limit and hold > 0 then
    held, expiry = 1, math.max(expiry, now + hold)
  end
  if v or not shed then
    if not v then created = created + 1 end
    redis.call('SET', KEYS[i], string.format('%d:%d:%d', held, expiry, count), 'PX', string.format('%d', expiry - now))
  else
    skipped = skipped + 1
  end
  local remaining, blocked = 0, 0
  if allowed == 1 then remaining = limit - count end
  if held == 1 then blocked = expiry end
  local o = 5 * (i - 1)
  out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = allowed, remaining, expiry - now, blocked, count
end
out[#out + 1] = skipped
out[#out + 1] = created
return out
`;

const PEEK_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, win = tonumber(ARGV[1]), tonumber(ARGV[2])
local held, expiry, count = 0, 0, 0
local v = redis.call('GET', KEYS[1])
if v then
  local h, e, c = string.match(v, '^(%d):(%d+):(%d+)$')
  if h then held, expiry, count = tonumber(h), tonumber(e), tonumber(c) end
end
if expiry <= now then
  return {1, limit, (math.floor(now / win) + 1) * win - now, 0, 0}
end
local allowed, remaining, blocked = 0, 0, 0
if held == 0 and count < limit then allowed, remaining = 1, limit - count end
if held == 1 then blocked = expiry end
return {allowed, remaining, expiry - now, blocked, count}
`;

// One `SET key 1 <PX ttl | PXAT until> NX` per key, in order (the first of two claims of one id in
// a batch wins); ARGV holds the expiry option and its value per key.
const CLAIMS_LUA = `
local out = {}
for i = 1, #KEYS do
  if redis.call('SET', KEYS[i], '1', ARGV[2 * i - 1], ARGV[2 * i], 'NX') then out[i] = 1 else out[i] = 0 end
end
return out
`;

// Counters (countUpTo): a decimal count, PXAT fixed at creation. ARGV holds limit, seed (-1: none)
// and the expiry moment per key; the reply is two numbers per key: allowed (1, 0, or -1 when the
// counter is absent and no seed was given) and the count after.
const COUNTS_LUA = `
local out = {}
for i = 1, #KEYS do
  local limit, seed = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1])
  local count = tonumber(redis.call('GET', KEYS[i]))
  if count == nil and seed >= 0 then
    count = seed
    redis.call('SET', KEYS[i], ARGV[3 * i - 1], 'PXAT', ARGV[3 * i])
  end
  if count == nil then
    out[2 * i - 1], out[2 * i] = -1, 0
  elseif count < limit then
    out[2 * i - 1], out[2 * i] = 1, redis.call('INCR', KEYS[i])
  else
    out[2 * i - 1], out[2 * i] = 0, count
  end
end
return out
`;

/** Keys per batched command; a turn with more goes out in several. */
const BATCH_MAX = 500;

// ARGV[3] '1' while shedding: an absent key is not created. Reply: {score, 0 updated | 1 created | 2 not stored}.
const PENALTY_LUA = `
local v = redis.call('GET', KEYS[1])
local s = math.min((tonumber(v) or 0) + tonumber(ARGV[1]), ${STORE_LIMITS.maxPenalty})
if not v and ARGV[3] == '1' then return {s, 2} end
redis.call('SET', KEYS[1], string.format('%d', s), 'PX', ARGV[2])
if v then return {s, 0} end
return {s, 1}
`;

/** Soft state stops growing past this share of maxmemory, and grows again below the second. */
export const SOFT_SHED_AT = 0.8;
export const SOFT_RESUME_AT = 0.7;
/** How often the store reads Redis's memory, at least. */
const MEMORY_CHECK_MS = 1000;
/**
 * ...and sooner once this process has created keys worth this share of maxmemory since the last
 * read (at ~128 bytes a key), so a flood cannot outrun the check: a rotation flood through the
 * service grew a 24 MB Redis past maxmemory within one second.
 */
const CHECK_AFTER_SHARE = 0.02;
const BYTES_PER_KEY = 128;

type Reply5 = [number, number, number, number, number];

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

interface ScriptCommands {
  palisadeHits(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
  palisadePeek(key: string, limit: number, windowMs: number): Promise<Reply5>;
  palisadePenalty(key: string, n: number, ttlMs: number, shed: string): Promise<[number, number]>;
  palisadeClaims(numberOfKeys: number, ...keysThenTtls: (string | number)[]): Promise<number[]>;
  palisadeCounts(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
}

/**
 * Connects to `url` and resolves once the first connection is ready and its eviction policy checked,
 * or once the first attempt failed (the client keeps reconnecting; until then operations reject
 * with STORE_UNAVAILABLE and ping() answers false). Never rejects for an unreachable server.
 */
export async function openRedisStore(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
  const o = { ...DEFAULTS, ...options };
  const client = new Redis(url, {
    keyPrefix: o.keyPrefix,
    enableOfflineQueue: false,
    commandTimeout: o.commandTimeout,
    connectTimeout: o.connectTimeout,
    maxRetriesPerRequest: o.maxRetries,
    lazyConnect: true,
    // No auto-pipelining: with it, a command queued behind a stalled one outlived commandTimeout
    // (test/reliability/redis-stall.test.ts saw 503s after two timeouts, not one). Claims, hits
    // and reads are batched per event-loop turn by the store instead.
  });
  client.defineCommand('palisadeHits', { lua: HITS_LUA });
  client.defineCommand('palisadePeek', { numberOfKeys: 1, lua: PEEK_LUA, readOnly: true });
  client.defineCommand('palisadePenalty', { numberOfKeys: 1, lua: PENALTY_LUA });
  client.defineCommand('palisadeClaims', { lua: CLAIMS_LUA });
  client.defineCommand('palisadeCounts', { lua: COUNTS_LUA });
  const store = new RedisStore(client, o.logger ?? consoleLogger, o.allowEviction);
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
  readonly #client: Redis;
  readonly #scripts: ScriptCommands;
  readonly #log: StoreLogger;
  readonly #unavailable: (err: unknown) => never;
  readonly #allowEviction: boolean;
  #lastLogAt = 0;
  #policyCheck: Promise<void> = Promise.resolve();
  /** Why claims cannot be trusted to this server (an evicting maxmemory-policy), or null. */
  #evictionProblem: string | null = null;
  /** claimOnce() calls waiting for this turn's claims command. */
  #claims: PendingClaim[] = [];
  /** hit() calls waiting for this turn's hits command. */
  #hits: PendingHit[] = [];
  /** penalty() reads waiting for this turn's MGET. */
  #reads: Pending<number>[] = [];
  /** countUpTo() calls waiting for this turn's counts command. */
  #counts: PendingCount[] = [];
  #flushScheduled = false;
  /** Soft entries are not created while true (memory past SOFT_SHED_AT of maxmemory). */
  #shed = false;
  #memoryTimer: NodeJS.Timeout | undefined;
  /** New soft entries not created while shedding, by kind (a counter, like the shared-memory store's evictions). */
  readonly #evicted = { seen: 0, window: 0, penalty: 0 };
  #evictionsLogged = 0;
  #lastEvictionLog = -Infinity;
  /** maxmemory at the last read (0: none set), and keys created since. */
  #maxmemory = 0;
  #created = 0;
  #checking = false;

  constructor(client: Redis, log: StoreLogger, allowEviction = false) {
    this.#client = client;
    this.#allowEviction = allowEviction;
    this.#scripts = client as unknown as ScriptCommands;
    this.#log = log;
    this.#unavailable = (err) => {
      this.#logFailure(err);
      throw new PalisadeError('STORE_UNAVAILABLE');
    };
    client.on('ready', () => {
      this.#policyCheck = this.#checkEvictionPolicy();
      if (this.#memoryTimer === undefined) {
        this.#memoryTimer = setInterval(() => void this.checkMemory(), MEMORY_CHECK_MS);
        this.#memoryTimer.unref();
      }
    });
    client.on('error', (err: unknown) => this.#logFailure(err));
  }

  /** @internal Used by openRedisStore: the first connection attempt, bounded by `timeoutMs`. */
  connect(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.#client.connect().then(
        () => this.#policyCheck,
        () => undefined,
      ).finally(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Why start-up was refused: the server's maxmemory-policy can evict claim keys (null: it cannot). */
  get evictionProblem(): string | null {
    return this.#allowEviction ? null : this.#evictionProblem;
  }

  /** Sent with the other claims of this event-loop turn (file header). */
  claimOnce(id: string, untilMs: number): Promise<boolean> {
    let key: string;
    let until: number;
    try {
      key = storeKey('c', checkKey('id', id));
      until = checkUntil(untilMs, Date.now());
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.evictionProblem !== null) {
      this.#logFailure(new Error(this.evictionProblem));
      return Promise.reject(new PalisadeError('STORE_UNAVAILABLE'));
    }
    return new Promise<boolean>((resolve, reject) => {
      this.#schedule();
      this.#claims.push({ key, expiry: 'PXAT', at: until, resolve, reject });
    });
  }

  /** Soft: a first-seen entry with a TTL, batched with the claims. While shedding: "seen", nothing stored. */
  seenOnce(key: string, ttlMs: number): Promise<boolean> {
    let k: string;
    let ttl: number;
    try {
      k = storeKey('s', checkKey('key', key));
      ttl = checkTtl(ttlMs);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.#shed) {
      this.#evicted.seen++;
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve, reject) => {
      this.#schedule();
      this.#claims.push({ key: k, expiry: 'PX', at: ttl, resolve, reject });
    });
  }

  /** Sent with the other hits of this event-loop turn (file header). */
  hit(limitKey: string, rule: RateRule): Promise<HitResult> {
    let key: string;
    try {
      checkRule(rule);
      key = storeKey(`r${rule.windowMs}`, checkKey('limitKey', limitKey));
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<HitResult>((resolve, reject) => {
      this.#schedule();
      this.#hits.push({ key, limit: rule.count, windowMs: rule.windowMs, holdMs: holdMs(rule), resolve, reject });
    });
  }

  /**
   * Sent with the other counts of this event-loop turn (file header). Counters are kept like claims:
   * under noeviction Redis drops none before its moment; a Redis that lost its data reports them absent.
   */
  countUpTo(key: string, limit: number, seed: number | null, untilMs: number): Promise<CountResult | null> {
    let k: string;
    let s: number;
    let until: number;
    try {
      s = checkCount(limit, seed);
      k = storeKey('n', checkKey('key', key));
      until = checkUntil(untilMs, Date.now());
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<CountResult | null>((resolve, reject) => {
      this.#schedule();
      this.#counts.push({ key: k, limit, seed: s, until, resolve, reject });
    });
  }

  peek(limitKey: string, rule: RateRule): Promise<HitResult> {
    try {
      checkRule(rule);
      const key = storeKey(`r${rule.windowMs}`, checkKey('limitKey', limitKey));
      return this.#scripts.palisadePeek(key, rule.count, rule.windowMs).then(toHitResult, this.#unavailable);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  addPenalty(key: string, n: number, ttlMs: number): Promise<number> {
    try {
      const k = storeKey('p', checkKey('key', key));
      return this.#scripts.palisadePenalty(k, checkPenalty(n), checkTtl(ttlMs), this.#shed ? '1' : '0').then(([score, how]) => {
        if (how === 2) this.#evicted.penalty++;
        else if (how === 1) this.#noteCreated(1);
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
      k = storeKey('p', checkKey('key', key));
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<number>((resolve, reject) => {
      this.#schedule();
      this.#reads.push({ key: k, resolve, reject });
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
    args.push(this.#shed ? '1' : '0');
    this.#scripts.palisadeHits(batch.length, ...args).then((r) => {
      this.#evicted.window += r[5 * batch.length] ?? 0;
      this.#noteCreated(r[5 * batch.length + 1] ?? 0);
      for (let i = 0; i < batch.length; i++) {
        const o = 5 * i;
        batch[i]!.resolve({ allowed: r[o] === 1, remaining: r[o + 1]!, resetMs: r[o + 2]!, blockedUntil: r[o + 3]!, count: r[o + 4]! });
      }
    }, this.#failAll(batch));
  }

  // A failed command fails every operation in it with STORE_UNAVAILABLE. A claim in a batch that
  // failed may still have been stored: that challenge is spent, never accepted twice.
  #sendClaims(batch: PendingClaim[]): void {
    const fail = this.#failAll(batch);
    if (batch.length === 1) {
      const c = batch[0]!;
      const set = c.expiry === 'PX' ? this.#client.set(c.key, '1', 'PX', c.at, 'NX') : this.#client.set(c.key, '1', 'PXAT', c.at, 'NX');
      set.then((r) => {
        if (r === 'OK') this.#noteCreated(1);
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
      this.#noteCreated(created);
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

  /**
   * Does Redis keep its data across a restart? true with the append-only file on, false without it
   * (RDB snapshots alone lose every claim since the last one), null when it cannot tell
   * (unreachable, CONFIG refused). Never rejects.
   */
  appendOnly(): Promise<boolean | null> {
    return this.#client.config('GET', 'appendonly').then(
      (reply) => {
        const value = (reply as string[])[1];
        return value === undefined ? null : value === 'yes';
      },
      () => null,
    );
  }

  /** New soft entries this process did not create while shedding, by kind. */
  /** Counters are never shed (file header): `counter` is always 0 here. */
  evictions(): { seen: number; window: number; penalty: number; counter: number } {
    return { ...this.#evicted, counter: 0 };
  }

  /** Whether soft state is being shed (Redis's memory past SOFT_SHED_AT of maxmemory). */
  get shedding(): boolean {
    return this.#shed;
  }

  /**
   * Reads used_memory and maxmemory (INFO memory) and switches shedding on past SOFT_SHED_AT, off
   * below SOFT_RESUME_AT; logs what was shed at most once a minute. Runs every second; tests call it.
   * Without a maxmemory nothing is shed (Redis then grows until the machine refuses: set one).
   */
  async checkMemory(): Promise<void> {
    let info: string;
    this.#checking = true;
    this.#created = 0;
    try {
      info = await this.#client.info('memory');
    } catch {
      return; // unreachable: claims answer 503 on their own
    } finally {
      this.#checking = false;
    }
    const used = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN);
    const max = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? NaN);
    this.#maxmemory = max > 0 ? max : 0;
    if (!(max > 0) || !Number.isFinite(used)) {
      this.#shed = false;
      return;
    }
    const share = used / max;
    const was = this.#shed;
    this.#shed = share > SOFT_SHED_AT || (was && share > SOFT_RESUME_AT);
    if (this.#shed !== was) {
      this.#log.warn(
        { usedMemory: used, maxmemory: max },
        this.#shed
          ? 'Redis memory past 80 % of maxmemory: new rate-limit, penalty and first-seen entries are not stored (existing ones and used challenges are)'
          : 'Redis memory below 70 % of maxmemory again: rate-limit, penalty and first-seen entries are stored again',
      );
    }
    const e = this.#evicted;
    const total = e.seen + e.window + e.penalty;
    const now = Date.now();
    if (total > this.#evictionsLogged && now - this.#lastEvictionLog >= 60_000) {
      this.#log.warn({ evicted: total - this.#evictionsLogged, byKind: { ...e } }, 'soft state shed under Redis memory pressure (raise maxmemory if this is ordinary traffic)');
      this.#evictionsLogged = total;
      this.#lastEvictionLog = now;
    }
  }

  #noteCreated(n: number): void {
    this.#created += n;
    if (this.#maxmemory > 0 && !this.#checking && this.#created * BYTES_PER_KEY > this.#maxmemory * CHECK_AFTER_SHARE) {
      void this.checkMemory();
    }
  }

  /** PING within commandTimeout; false when Redis is unreachable or slow. Never rejects. */
  ping(): Promise<boolean> {
    return this.#client.ping().then((r) => r === 'PONG', () => false);
  }

  async close(): Promise<void> {
    if (this.#memoryTimer !== undefined) clearInterval(this.#memoryTimer);
    if (this.#client.status === 'ready') {
      try {
        await this.#client.quit();
        return;
      } catch {
        // fall through: drop the connection
      }
    }
    this.#client.disconnect();
  }

  // Claim keys carry an expiry, so every policy but noeviction (volatile-* included) lets Redis drop
  // a used-challenge key under memory pressure, and a dropped key reopens that challenge to replay.
  // Read from INFO, which managed services answer where CONFIG is disabled.
  async #checkEvictionPolicy(): Promise<void> {
    let policy: string | undefined;
    try {
      const info = await this.#client.info('memory');
      policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    } catch (err) {
      policy = undefined;
      this.#log.warn({ err: errorText(err) }, 'Could not read Redis INFO memory');
    }
    if (policy === undefined) {
      this.#log.warn(
        {},
        'Could not read Redis maxmemory-policy. Make sure it is "noeviction": any other policy lets Redis evict ' +
          'used-challenge keys under memory pressure, which reopens those challenges to replay.',
      );
      return;
    }
    if (policy === 'noeviction') {
      this.#evictionProblem = null;
      return;
    }
    this.#evictionProblem =
      `Redis maxmemory-policy is "${policy}": when Redis reaches maxmemory it evicts keys, and used-challenge keys ` +
      '(replay protection) are evictable under every policy but noeviction (volatile-* too: each has an expiry), so ' +
      'an evicted key would let its challenge be verified again. Set "maxmemory-policy noeviction" (writes then fail ' +
      'when memory is full and verification answers 503 instead of accepting a replay), or set REDIS_ALLOW_EVICTION=1 ' +
      'if this Redis can never reach maxmemory.';
    if (this.#allowEviction) this.#log.warn({ maxmemoryPolicy: policy }, this.#evictionProblem);
    else this.#log.error({ maxmemoryPolicy: policy }, this.#evictionProblem);
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
 * The separator keeps the two forms apart.
 */
function storeKey(kind: string, id: string): string {
  if (id.length <= RAW_KEY_MAX && !LONE_SURROGATE.test(id)) return `${kind}:${id}`;
  return `${kind}#${createHash('sha256').update(Buffer.from(id, 'utf16le')).digest('base64url')}`;
}

function toHitResult(r: Reply5): HitResult {
  return { allowed: r[0] === 1, remaining: r[1], resetMs: r[2], blockedUntil: r[3], count: r[4] };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
