// The penalty score of a client IP (IPv6 per /64) and its failed verifications, both kept in the
// StateStore for PENALTY_TTL after their last addition (spec section 3: "an accumulated penalty
// score persists for PENALTY_TTL and then resets"). What adds how much is decided by the callers
// (threats.ts, header-entropy.ts, index.ts verificationFailed); this file only keeps the books.
// Store failures fail open: a penalty that cannot be read counts as 0, one that cannot be written
// is dropped (store-failure.ts).
import type { Logger } from '../log.js';
import { ipKey } from '../store/limit-key.js';
import { STORE_LIMITS, type StateStore } from '../store/state-store.js';
import type { AbuseMetrics } from './metrics.js';
import { createStoreFailureHandler, type StoreFailureOptions } from './store-failure.js';

/** Why points were added (logged at debug level). */
export type PenaltyReason =
  | 'probe' | 'malicious' | 'bot' | 'proxy' | 'tor' | 'header_entropy' | 'failed_verification' | 'manual';

export interface PenaltyDeps {
  readonly store: StateStore;
  readonly logger: Logger;
  readonly metrics: AbuseMetrics;
}

export interface PenaltyOptions extends StoreFailureOptions {
  /** PENALTY_TTL in ms. Default 30 minutes. */
  ttlMs?: number;
}

export const PENALTY_DEFAULTS = Object.freeze({ ttlMs: 30 * 60_000 });

export interface Penalties {
  readonly ttlMs: number;
  /** Adds `n` points (an integer ≥ 0) to the IP's score; resolves with the new score (0 when the store failed). */
  penalize(ip: string, n: number, reason: PenaltyReason): Promise<number>;
  /** The IP's accumulated score without mark raises (0 when none, expired, or the store failed). */
  score(ip: string): Promise<number>;
  /** score() on the calling thread when the store can answer so (StateStore.sync), else undefined. */
  scoreSync(ip: string): number | undefined;
  /** Counts one failed verification; resolves with the count within PENALTY_TTL. */
  recordFailure(ip: string): Promise<number>;
  /** Failed verifications of the IP within PENALTY_TTL. */
  failedAttempts(ip: string): Promise<number>;
  /** failedAttempts() on the calling thread when the store can answer so (StateStore.sync), else undefined. */
  failedAttemptsSync(ip: string): number | undefined;
}

export function createPenalties(deps: PenaltyDeps, options: PenaltyOptions = {}): Penalties {
  const ttlMs = options.ttlMs ?? PENALTY_DEFAULTS.ttlMs;
  if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > STORE_LIMITS.maxTtlMs) {
    throw new RangeError(`the penalty TTL must be 1 to ${STORE_LIMITS.maxTtlMs} ms`);
  }
  const { store, logger } = deps;
  const onStoreError = createStoreFailureHandler(logger, deps.metrics, options);
  const zeroOnFailure = (check: string) => (err: unknown): number => {
    onStoreError(err, check);
    return 0;
  };
  const readPenalty = zeroOnFailure('penalty');
  const readFailures = zeroOnFailure('failed_attempts');
  /** A score on the calling thread (StateStore.sync), 0 on a store failure; undefined without sync. */
  const readSync = (key: string, onFailure: (err: unknown) => number): number | undefined => {
    const sync = store.sync;
    if (sync === undefined) return undefined;
    try {
      return sync.penaltySync(key);
    } catch (err) {
      return onFailure(err);
    }
  };

  return {
    ttlMs,
    penalize(ip, n, reason) {
      if (!Number.isSafeInteger(n) || n < 0) return Promise.reject(new RangeError('a penalty must be a non-negative integer'));
      if (n === 0) return this.score(ip);
      if (logger.isLevelEnabled('debug')) logger.debug({ points: n, reason }, 'penalty added');
      return store.addPenalty(`pen|${ipKey(ip)}`, n, ttlMs).catch(readPenalty);
    },
    score(ip) {
      return store.penalty(`pen|${ipKey(ip)}`).catch(readPenalty);
    },
    scoreSync: (ip) => readSync(`pen|${ipKey(ip)}`, readPenalty),
    recordFailure(ip) {
      return store.addPenalty(`fail|${ipKey(ip)}`, 1, ttlMs).catch(readFailures);
    },
    failedAttempts(ip) {
      return store.penalty(`fail|${ipKey(ip)}`).catch(readFailures);
    },
    failedAttemptsSync: (ip) => readSync(`fail|${ipKey(ip)}`, readFailures),
  };
}
