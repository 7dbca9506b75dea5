// Header combinations per IP (HEADER_ENTROPY_MAX_ENTRIES): a client IP that shows more distinct
// device keys (device-key.ts) than the limit within PENALTY_TTL earns one penalty point for each
// further new combination. A NAT with many real browsers stays under the limit; a script rotating
// user agents does not.
//
// Counting is exact across workers and hosts: the store notes `hdr|<ip>|<device>` once (seenOnce,
// PENALTY_TTL) and a new claim adds 1 to `hdrn|<ip>`. Memory:
// - per worker, an LRU of combinations recently seen (default 10,000 entries, ~100 bytes each),
//   which keeps a returning browser from costing a store call on every challenge;
// - in the store, one entry per distinct combination per IP within PENALTY_TTL, plus one counter
//   per IP. The number of combinations an IP can show is bounded by the requests it is allowed (the
//   flood limit), e.g. 100/1m × 30m = 3,000 entries for one IP that rotates on every request.
// The distinct-count expires PENALTY_TTL after the last new combination, so a steady stream of new
// ones keeps it growing while single claims expire: "distinct combinations while active". Device
// keys change at 00:00 UTC (their salt rotates), so the count is kept per UTC day: the same browsers
// seen again after midnight are not new combinations of the same day.
import type { RequestContext } from '../http/types.js';
import type { Logger } from '../log.js';
import { ipKey } from '../store/limit-key.js';
import type { StateStore } from '../store/state-store.js';
import type { DeviceKeys } from './device-key.js';
import type { AbuseMetrics } from './metrics.js';
import type { Penalties } from './penalty.js';
import { createStoreFailureHandler, type StoreFailureOptions } from './store-failure.js';

export interface HeaderEntropyDeps {
  readonly store: StateStore;
  readonly deviceKeys: DeviceKeys;
  readonly penalties: Penalties;
  readonly logger: Logger;
  readonly metrics: AbuseMetrics;
}

export interface HeaderEntropyOptions extends StoreFailureOptions {
  /** HEADER_ENTROPY_MAX_ENTRIES. Default 100. */
  maxEntries?: number;
  /** Combinations remembered by this worker. Default 10,000. */
  lruSize?: number;
}

export const HEADER_ENTROPY_DEFAULTS = Object.freeze({ maxEntries: 100, lruSize: 10_000 });

export interface HeaderEntropy {
  /**
   * Notes the request's header combination for its IP: the points added (0 or 1), at once (0) when
   * this worker saw the combination within PENALTY_TTL, else once the store has counted it. Never
   * rejects on store failures.
   */
  observe(req: Pick<RequestContext, 'ip' | 'headers'>): number | Promise<number>;
  /** Entries in this worker's LRU. */
  readonly cached: number;
}

const DAY_MS = 86_400_000;

export function createHeaderEntropy(deps: HeaderEntropyDeps, options: HeaderEntropyOptions = {}): HeaderEntropy {
  const maxEntries = options.maxEntries ?? HEADER_ENTROPY_DEFAULTS.maxEntries;
  const lruSize = options.lruSize ?? HEADER_ENTROPY_DEFAULTS.lruSize;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
  if (!Number.isInteger(lruSize) || lruSize < 1) throw new RangeError('lruSize must be a positive integer');
  const { store, penalties } = deps;
  const ttlMs = penalties.ttlMs;
  const now = options.now ?? Date.now;
  const onStoreError = createStoreFailureHandler(deps.logger, deps.metrics, options);
  /** `<ipKey>|<device>` → epoch ms until which this worker trusts its memory of the combination. */
  const seen = new Map<string, number>();

  const remember = (entry: string, until: number) => {
    seen.delete(entry);
    if (seen.size >= lruSize) seen.delete(seen.keys().next().value!);
    seen.set(entry, until);
  };

  const count = async (ip: string, ipk: string, entry: string, t: number): Promise<number> => {
    const fresh = await store.seenOnce(`hdr|${entry}`, ttlMs);
    remember(entry, t + ttlMs);
    if (!fresh) return 0;
    const distinct = await store.addPenalty(`hdrn|${Math.floor(t / DAY_MS)}|${ipk}`, 1, ttlMs);
    if (distinct <= maxEntries) return 0;
    await penalties.penalize(ip, 1, 'header_entropy');
    return 1;
  };

  return {
    observe(req) {
      const ipk = ipKey(req.ip);
      const entry = `${ipk}|${deps.deviceKeys.key(req.ip, req.headers)}`;
      const t = now();
      const until = seen.get(entry);
      if (until !== undefined && until > t) return 0;
      return count(req.ip, ipk, entry, t).catch((err: unknown) => {
        onStoreError(err, 'header_entropy');
        return 0;
      });
    },
    get cached() {
      return seen.size;
    },
  };
}
