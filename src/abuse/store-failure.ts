// What the abuse checks do when the state store cannot answer: let the request through (fail open),
// count it, and warn at most once per interval per check. Why open: these checks protect
// availability and raise the cost of abuse; refusing every request while Redis is unreachable (or
// while an attacker keeps the shared-memory table full) would turn a store outage into a full
// outage, which is what the flood limit exists to prevent. Nothing is *accepted* on the strength of
// these checks: proof of work is still required, and replay protection (claimOnce in verification)
// stays fail-closed (503) elsewhere. Any other error is a bug and is thrown.
import { isPalisadeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { AbuseMetrics } from './metrics.js';

export interface StoreFailureOptions {
  /** Least time between two warnings of one check. Default 10,000 ms. */
  warnIntervalMs?: number;
  /** Epoch-ms clock (tests). Default Date.now. */
  now?: () => number;
}

export const STORE_FAILURE_DEFAULTS = Object.freeze({ warnIntervalMs: 10_000 });

/** Returns `onStoreError(err, check)`: swallows STORE_UNAVAILABLE / STORE_FULL (counted), rethrows the rest. */
export function createStoreFailureHandler(
  logger: Logger, metrics: AbuseMetrics, options: StoreFailureOptions = {},
): (err: unknown, check: string) => void {
  const interval = options.warnIntervalMs ?? STORE_FAILURE_DEFAULTS.warnIntervalMs;
  const now = options.now ?? Date.now;
  const lastWarn = new Map<string, { at: number; suppressed: number }>();
  return (err, check) => {
    if (!isPalisadeError(err) || (err.code !== 'STORE_UNAVAILABLE' && err.code !== 'STORE_FULL')) throw err;
    metrics.storeError(err.code);
    const t = now();
    const last = lastWarn.get(check);
    if (last && t - last.at < interval) {
      last.suppressed++;
      return;
    }
    logger.warn({ check, code: err.code, suppressed: last?.suppressed ?? 0 }, 'state store failed: abuse check skipped (fail-open)');
    lastWarn.set(check, { at: t, suppressed: 0 });
  };
}
