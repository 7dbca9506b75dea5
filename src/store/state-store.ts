// The hot, shared, short-lived state every worker sees: used challenges, rate-limit windows,
// penalty scores. DESIGN.md section 3.
//
// Two kinds of state, stored apart (DESIGN.md section 10):
// - hard: claims of used challenges (claimOnce). A claim is never lost before its moment and never
//   refused for lack of room taken by anything else; when the store cannot be sure it rejects
//   (503), it never answers "not used before" wrongly.
// - soft: windows, marks, penalties, first-seen sets (hit, peek, addPenalty, penalty, seenOnce).
//   It has a fixed budget and, past it, forgets the least recently used entries instead of
//   refusing (counted as evictions): forgetting can reset a counter, never accept a replay.
// - counters (countUpTo, plan limits): between the two. Redis keeps them like claims (noeviction);
//   the shared-memory store keeps them with the soft state but evicts one only when its whole probe
//   window holds counters, and reports a forgotten counter as absent, never as a lower count, so
//   the caller seeds it again from what it knows (src/usage/plan-limit.ts).
// Implementations: shared-memory-store.ts (one host, default) and redis-store.ts (REDIS_URL).
// test/helpers/store-conformance.ts runs one suite against both.
//
// Rate rules (spec section 8), the same in both stores:
// - `<count>/<window>`: fixed windows aligned to the Unix epoch (floor(now / window)); at most
//   `count` hits of one key are allowed per window.
// - `block=D` and `expire=D` both *hold* the key once a hit passes the limit: it stays denied until
//   max(end of the window, now + D), through any number of new windows; hits while held still count.
//   `block` reads as "deny the client", `expire` as "keep the key marked" (threat counters): one
//   mechanism, one stamp, reported as `blockedUntil`. A caller asks "is this key marked?" with
//   `peek(key, rule)` (no hit counted): marked while `blockedUntil > Date.now()`.
import type { RateRule } from '../parse.js';

/** What a store needs of a logger (pino's methods fit). */
export interface StoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Limits both stores enforce, so a configuration that works with one works with the other. */
export const STORE_LIMITS = {
  /** Longest claim, first-seen or penalty lifetime: 2^36 ms, about 2.2 years. */
  maxTtlMs: 2 ** 36,
  /** Largest rule count (the shared-memory slot keeps 23 bits of count and needs count + 1). */
  maxRuleCount: 8_388_606,
  /** Longest window or block/expire duration (what parseDuration accepts). */
  maxDurationMs: 2 ** 47,
  /** Penalty scores saturate here (the shared-memory slot keeps 24 bits). */
  maxPenalty: 16_777_215,
  /** Highest counter value and limit of countUpTo (the shared-memory slot keeps 24 bits). */
  maxCounter: 16_777_215,
} as const;

export interface HitResult {
  /** This hit is within the limit (for `peek`: a hit now would be). */
  readonly allowed: boolean;
  /** Hits left in the current window after this one (0 when denied or held). */
  readonly remaining: number;
  /** Milliseconds until the current window resets; while held, until the hold ends. */
  readonly resetMs: number;
  /** Epoch ms until which the key is held (block/expire); 0 when not held. */
  readonly blockedUntil: number;
  /** The count of hits in this window including this one (while held: since the window that passed the limit). */
  readonly count: number;
}

export interface CountResult {
  /** This use was counted: the counter was below the limit. */
  readonly allowed: boolean;
  /** The counter after this call (unchanged when not allowed). */
  readonly count: number;
}

/** StateStore.sync: the operations the hot paths use, for a store that needs no I/O for them. */
export interface SyncStateStore {
  /** countUpTo on the calling thread. */
  countUpToSync(key: string, limit: number, seed: number | null, untilMs: number): CountResult | null;
  /** claimOnce on the calling thread: throws STORE_FULL instead of rejecting. */
  claimOnceSync(id: string, untilMs: number): boolean;
  hitSync(limitKey: string, rule: RateRule): HitResult;
  penaltySync(key: string): number;
}

export interface StateStore {
  readonly kind: 'shared-memory' | 'redis';
  /**
   * Hard state: insert `id` if absent, remembered until the epoch-ms moment `untilMs` (use
   * claimUntil(): the same challenge must always name the same moment). Resolves true exactly once
   * per id across all processes sharing the store; false when it was already claimed. Rejects with
   * PalisadeError STORE_UNAVAILABLE / STORE_FULL instead of ever answering true when it cannot be
   * sure. `id` is any string (compared exactly, UTF-16 code unit by code unit); now < untilMs ≤
   * now + maxTtlMs.
   */
  claimOnce(id: string, untilMs: number): Promise<boolean>;
  /**
   * Soft state: true the first time `key` is seen within `ttlMs`, false when it was seen before.
   * Under memory pressure an entry may be forgotten early (then it reads as new again).
   */
  seenOnce(key: string, ttlMs: number): Promise<boolean>;
  /** Soft-state entries (and plan-limit counters) this process gave up for room, by kind (a counter). */
  evictions(): { seen: number; window: number; penalty: number; counter: number };
  /** Count one hit of `limitKey` under `rule` (fixed window + hold; see the top of this file). */
  hit(limitKey: string, rule: RateRule): Promise<HitResult>;
  /** The state `hit` would see, without counting a hit: `blockedUntil > now` means held / marked. */
  peek(limitKey: string, rule: RateRule): Promise<HitResult>;
  /**
   * Add `n` (an integer ≥ 0) to the penalty of `key`; the score expires `ttlMs` after the last
   * addition and saturates at maxPenalty. Returns the new score.
   */
  addPenalty(key: string, n: number, ttlMs: number): Promise<number>;
  /** The current penalty of `key` (0 when none or expired). */
  penalty(key: string): Promise<number>;
  /**
   * A counter of uses up to a limit, atomic across every process sharing the store. When `key`
   * holds a count below `limit`, adds 1 and resolves {allowed: true}; at or above it, resolves
   * {allowed: false} and counts nothing. When `key` is absent: with `seed` null resolves null and
   * stores nothing; with a seed, creates the counter at min(seed, maxCounter), kept until epoch ms
   * `untilMs` (not renewed by later uses), then counts as above. Of several seeds for one absent
   * key, the first stored wins. 0 ≤ limit ≤ maxCounter; seed ≥ 0 or null; now < untilMs ≤ now + maxTtlMs.
   */
  countUpTo(key: string, limit: number, seed: number | null, untilMs: number): Promise<CountResult | null>;
  /**
   * The same operations on the calling thread, where the store can answer without I/O (the
   * shared-memory store; absent for Redis). The hot paths use it to skip a Promise per call; the
   * methods throw what the Promise would reject with.
   */
  readonly sync?: SyncStateStore;
  /** Is the store reachable now? (for /.ready and /.health) */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

// Argument checks shared by both implementations. A wrong argument is a programming error (the
// callers validate configuration and requests first), so these throw TypeError / RangeError.

export function checkKey(name: string, value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
  return value;
}

/** `untilMs` of a claim: an integer epoch-ms moment after `now` and at most maxTtlMs after it. */
export function checkUntil(value: unknown, now: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= now || value > now + STORE_LIMITS.maxTtlMs) {
    throw new RangeError(`untilMs must be an integer epoch-ms moment after now and at most ${STORE_LIMITS.maxTtlMs} ms ahead`);
  }
  return value;
}

/** CLAIM_CLOCK_SKEW's default: claims outlive their expiry by this, for clocks that disagree across nodes. */
export const DEFAULT_CLOCK_SKEW_MS = 60_000;

/**
 * Until when a challenge (or a signed payload, or a request-signing salt) valid until epoch ms
 * `expiresAtMs` must stay claimed: its expiry plus `skewMs` (CLAIM_CLOCK_SKEW), for clocks that
 * disagree across nodes. Derived from the challenge alone, so every attempt at the same challenge
 * names the same moment (the shared-memory store files claims by it). Never more than maxTtlMs
 * ahead, so no signed value can make a store refuse the claim.
 */
export function claimUntil(expiresAtMs: number, now: number, skewMs: number): number {
  return Math.min(Math.max(expiresAtMs + skewMs, now + 1), now + STORE_LIMITS.maxTtlMs);
}

export function checkTtl(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > STORE_LIMITS.maxTtlMs) {
    throw new RangeError(`ttlMs must be an integer from 1 to ${STORE_LIMITS.maxTtlMs}`);
  }
  return value;
}

export function checkPenalty(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError('a penalty must be a non-negative safe integer');
  }
  return value;
}

/** countUpTo's limit and seed; the seed comes back clamped to maxCounter (-1 for none). */
export function checkCount(limit: unknown, seed: unknown): number {
  if (!isInt(limit, 0, STORE_LIMITS.maxCounter)) throw new RangeError(`a counter limit must be an integer from 0 to ${STORE_LIMITS.maxCounter}`);
  if (seed === null) return -1;
  if (!isInt(seed, 0, Number.MAX_SAFE_INTEGER)) throw new RangeError('a counter seed must be a non-negative safe integer or null');
  return Math.min(seed as number, STORE_LIMITS.maxCounter);
}

export function checkRule(rule: RateRule): RateRule {
  const { count, windowMs, blockMs, expireMs } = rule ?? ({} as Partial<RateRule>);
  if (!isInt(count, 1, STORE_LIMITS.maxRuleCount) || !isInt(windowMs, 1, STORE_LIMITS.maxDurationMs) ||
      !isInt(blockMs, 0, STORE_LIMITS.maxDurationMs) || !isInt(expireMs, 0, STORE_LIMITS.maxDurationMs)) {
    throw new RangeError(
      `a rate rule needs count 1..${STORE_LIMITS.maxRuleCount} and windowMs, blockMs, expireMs up to ${STORE_LIMITS.maxDurationMs}`,
    );
  }
  return rule;
}

/** How long a key is held once it passes the limit. */
export function holdMs(rule: RateRule): number {
  return rule.blockMs > rule.expireMs ? rule.blockMs : rule.expireMs;
}

function isInt(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}
