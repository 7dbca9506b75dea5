// The Redis state store's memory policy (redis-store.ts). Claims are hard state: refused at start
// unless Redis's maxmemory-policy is noeviction, so no key can be evicted. Hard and soft state share
// one Redis and its maxmemory, so soft state sheds instead of competing: every second the store reads
// used_memory and maxmemory, and past 80 % (until below 70 %) a rate-limit window, penalty or
// first-seen entry that does not exist yet is not created (the hit counts as the first of a fresh
// window; counted as an eviction), while existing entries and claims go on. An attacker rotating
// addresses can then exhaust the soft share, never the room of claims, and cannot remove the mark
// of an address already marked. Plan-limit counters are created whatever the memory, like claims
// (one per limited account and month).
import { masters, type RedisClient } from './redis-client.js';
import type { StoreLogger } from './state-store.js';

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

export class RedisMemory {
  /** Soft entries are not created while true (memory past SOFT_SHED_AT of maxmemory). */
  shed = false;
  /** New soft entries not created while shedding, by kind (a counter, like the shared-memory store's evictions). */
  readonly evicted = { seen: 0, window: 0, penalty: 0 };
  readonly #client: RedisClient;
  readonly #log: StoreLogger;
  readonly #allowEviction: boolean;
  #memoryTimer: NodeJS.Timeout | undefined;
  #evictionsLogged = 0;
  #lastEvictionLog = -Infinity;
  /** maxmemory at the last read (0: none set), and keys created since. */
  #maxmemory = 0;
  #created = 0;
  #checking = false;
  /** Why claims cannot be trusted to this server (an evicting maxmemory-policy), or null. */
  #evictionProblem: string | null = null;

  constructor(client: RedisClient, log: StoreLogger, allowEviction: boolean) {
    this.#client = client;
    this.#log = log;
    this.#allowEviction = allowEviction;
  }

  /** Why start-up was refused: the server's maxmemory-policy can evict claim keys (null: it cannot). */
  get evictionProblem(): string | null {
    return this.#allowEviction ? null : this.#evictionProblem;
  }

  /** Reads Redis's memory every MEMORY_CHECK_MS from now on (once started, a reconnection changes nothing). */
  watch(): void {
    if (this.#memoryTimer === undefined) {
      this.#memoryTimer = setInterval(() => void this.check(), MEMORY_CHECK_MS);
      this.#memoryTimer.unref();
    }
  }

  stop(): void {
    if (this.#memoryTimer !== undefined) clearInterval(this.#memoryTimer);
  }

  /**
   * Reads used_memory and maxmemory (INFO memory) and switches shedding on past SOFT_SHED_AT, off
   * below SOFT_RESUME_AT; logs what was shed at most once a minute. Runs every second; tests call it.
   * Without a maxmemory nothing is shed (Redis then grows until the machine refuses: set one).
   */
  async check(): Promise<void> {
    let infos: string[];
    this.#checking = true;
    this.#created = 0;
    try {
      infos = await Promise.all(masters(this.#client).map((node) => node.info('memory')));
    } catch {
      return; // unreachable: claims answer 503 on their own
    } finally {
      this.#checking = false;
    }
    // On a cluster, the fullest master decides: soft state of any slot may land on it.
    let used = NaN;
    let max = NaN;
    for (const info of infos) {
      const u = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? NaN);
      const m = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? NaN);
      if (Number.isNaN(used) || (m > 0 && (!(max > 0) || u / m > used / max))) {
        used = u;
        max = m;
      }
    }
    this.#maxmemory = max > 0 ? max : 0;
    if (!(max > 0) || !Number.isFinite(used)) {
      this.shed = false;
      return;
    }
    const share = used / max;
    const was = this.shed;
    this.shed = share > SOFT_SHED_AT || (was && share > SOFT_RESUME_AT);
    if (this.shed !== was) {
      this.#log.warn(
        { usedMemory: used, maxmemory: max },
        this.shed
          ? 'Redis memory past 80 % of maxmemory: new rate-limit, penalty and first-seen entries are not stored (existing ones and used challenges are)'
          : 'Redis memory below 70 % of maxmemory again: rate-limit, penalty and first-seen entries are stored again',
      );
    }
    const e = this.evicted;
    const total = e.seen + e.window + e.penalty;
    const now = Date.now();
    if (total > this.#evictionsLogged && now - this.#lastEvictionLog >= 60_000) {
      this.#log.warn({ evicted: total - this.#evictionsLogged, byKind: { ...e } }, 'soft state shed under Redis memory pressure (raise maxmemory if this is ordinary traffic)');
      this.#evictionsLogged = total;
      this.#lastEvictionLog = now;
    }
  }

  /** `n` keys were created: past CHECK_AFTER_SHARE of maxmemory since the last read, read it again now. */
  noteCreated(n: number): void {
    this.#created += n;
    if (this.#maxmemory > 0 && !this.#checking && this.#created * BYTES_PER_KEY > this.#maxmemory * CHECK_AFTER_SHARE) {
      void this.check();
    }
  }

  // Claim keys carry an expiry, so every policy but noeviction (volatile-* included) lets Redis drop
  // a used-challenge key under memory pressure, and a dropped key reopens that challenge to replay.
  // Read from INFO, which managed services answer where CONFIG is disabled.
  async checkEvictionPolicy(): Promise<void> {
    let policy: string | undefined;
    try {
      // Every master must be noeviction: the first that is not names the policy.
      const policies = await Promise.all(masters(this.#client).map(async (node) => /^maxmemory_policy:(\S+)/m.exec(await node.info('memory'))?.[1]));
      policy = policies.includes(undefined) || policies.length === 0 ? undefined : policies.find((p) => p !== 'noeviction') ?? 'noeviction';
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
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
