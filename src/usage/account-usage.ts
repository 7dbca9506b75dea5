// Monthly requests of an account, for the plan-limit check when the state store cannot count
// (src/usage/plan-limit.ts): the durable count (cached per worker for `ttlMs`, refreshed in the
// background) plus what this worker counted and has not written yet.
// Other workers' unwritten counts are missing for at most one flush interval, and the durable
// count is at most ttlMs old: a plan limit can be passed by what the whole cluster serves in
// about ttlMs + 1 s. When the database fails and no count is known yet, 0 is assumed: plan limits
// fail open, requests are not refused because usage cannot be read.
import type { AccountRequestCounter } from '../keys/authorize.js';
import type { UsageBuffer } from './usage-buffer.js';

export interface AccountUsageOptions {
  /** How long a durable count is used before it is read again. Default 10,000 ms. */
  readonly ttlMs?: number;
  /** Most accounts kept. Default 10,000. */
  readonly maxEntries?: number;
  /** Called when reading the durable count fails. Default: ignore. */
  readonly onError?: (err: unknown) => void;
  readonly now?: () => number;
}

export const ACCOUNT_USAGE_DEFAULTS = Object.freeze({ ttlMs: 10_000, maxEntries: 10_000 });

/** `read` is src/db/usage.ts accountRequests bound to the database. */
export function createAccountUsage(
  read: (accountId: string, month: string) => Promise<number>,
  buffer: Pick<UsageBuffer, 'pendingAccountRequests' | 'currentMonth'>,
  options: AccountUsageOptions = {},
): AccountRequestCounter {
  const { ttlMs, maxEntries } = { ...ACCOUNT_USAGE_DEFAULTS, ...options };
  const now = options.now ?? Date.now;
  const cache = new Map<string, { value: number; expiresAt: number }>();
  // One read per account and month at a time.
  const loading = new Map<string, Promise<number>>();

  const load = (cacheKey: string, accountId: string, month: string): Promise<number> => {
    let p = loading.get(cacheKey);
    if (p !== undefined) return p;
    p = read(accountId, month).then(
      (value) => {
        if (!cache.has(cacheKey) && cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        cache.set(cacheKey, { value, expiresAt: now() + ttlMs });
        return value;
      },
      (err) => {
        options.onError?.(err);
        const last = cache.get(cacheKey);
        if (last === undefined) return 0;
        last.expiresAt = now() + Math.min(ttlMs, 1000);
        return last.value;
      },
    ).finally(() => loading.delete(cacheKey));
    loading.set(cacheKey, p);
    return p;
  };

  return {
    currentMonth: () => buffer.currentMonth(),
    async requests(accountId, month) {
      const cacheKey = `${month}\n${accountId}`;
      const entry = cache.get(cacheKey);
      let durable: number;
      if (entry === undefined) {
        durable = await load(cacheKey, accountId, month);
      } else {
        durable = entry.value;
        // Stale: answer with the last value now, refresh for the next request.
        if (now() >= entry.expiresAt) void load(cacheKey, accountId, month);
      }
      return durable + buffer.pendingAccountRequests(accountId, month);
    },
  };
}
