// Plan limits (plans.request_limit: requests per calendar month and account), exact across every
// worker and node: before a request of a limited key is served, one unit is counted against its
// account's monthly counter in the state store (StateStore.countUpTo, atomic), so of any number of
// concurrent requests exactly as many pass as the plan has left; the others get 429
// PLAN_LIMIT_EXCEEDED. A refused request counts nothing.
//
// The counter `plan|<account>|<month>` starts, at its first use, from the requests the database
// holds for the month plus those this worker counted and has not written yet (so a service
// upgraded mid-month, or a Redis that lost its data, goes on from the month's usage). It lives 32
// days, past the end of any month; the month in its name moves on with the usage month (TZ).
//
// What can let more than the limit through, and how many:
// - A counter that disappears mid-month is seeded again from the database. Redis drops none
//   (noeviction, required for claims) unless it loses its data. The shared-memory table evicts a
//   counter only to make room for another counter, when its whole 64-slot probe window holds
//   counters (native/shm-table.h): no flood of addresses or other keys can push one out. A counter
//   seeded again misses what the other workers (or nodes) admitted and have not written yet: at
//   most what they served for that account in one usage flush interval (1 s) plus the write.
// - Requests counted here but never in usage (a /v1/verify whose body does not parse) are
//   forgotten by such a re-seed: the counter is otherwise the stricter of the two.
// When the store fails (or a plan's limit exceeds what the store counts, maxCounter = 16,777,215 a
// month), the check falls back to the usage count (src/usage/account-usage.ts: the database's
// count, cached up to 10 s, plus this worker's unwritten requests; a cluster can pass it by what it
// serves in about that time), and when that cannot be read either, plan limits fail open.
import { isPalisadeError, PalisadeError } from '../errors.js';
import { createPlanLimitCheck, type AccountRequestCounter } from '../keys/authorize.js';
import type { ApiKey } from '../keys/types.js';
import { STORE_LIMITS, type CountResult, type StateStore } from '../store/state-store.js';
import type { UsageBuffer } from './usage-buffer.js';

/**
 * plan.requestLimit of an unlimited plan in usage answers (GET /usage, the CLI): the spec types it
 * a number, and 0 is a real limit (a plan of no requests).
 */
export const UNLIMITED_REQUEST_LIMIT = -1;

export interface PlanLimitDeps {
  readonly store: StateStore;
  /** Requests of an account in a month as the database holds them (src/db/usage.ts accountRequests). */
  readonly durable: (accountId: string, month: string) => Promise<number>;
  readonly buffer: Pick<UsageBuffer, 'pendingAccountRequests' | 'currentMonth'>;
  /** The usage count the fallback check reads (createAccountUsage). */
  readonly approximate: AccountRequestCounter;
  /** A store failure or an unreadable database count (the fallback decided). Default: ignore. */
  readonly onError?: (err: unknown) => void;
}

export interface PlanLimitOptions {
  /** How long a counter lives after its first use. Default 32 days (past the end of any month). */
  readonly counterTtlMs?: number;
  /** Epoch-ms clock. Default Date.now. */
  readonly now?: () => number;
}

export const PLAN_LIMIT_DEFAULTS = Object.freeze({ counterTtlMs: 32 * 86_400_000 });

/**
 * `chargePlan(key)`: counts one request of the key's account against its plan; throws (or
 * rejects with) PLAN_LIMIT_EXCEEDED when the plan is used up. Nothing at all for keys without a
 * limit, and no Promise when the store answers on this thread and the counter exists.
 */
export type ChargePlan = (key: ApiKey) => void | Promise<void>;

export function createPlanLimit(deps: PlanLimitDeps, options: PlanLimitOptions = {}): ChargePlan {
  const ttlMs = options.counterTtlMs ?? PLAN_LIMIT_DEFAULTS.counterTtlMs;
  const now = options.now ?? Date.now;
  const { store, buffer } = deps;
  const fallback = createPlanLimitCheck(deps.approximate);
  // One database read per counter at a time in this worker, however many requests wait for it.
  const seeds = new Map<string, Promise<number>>();

  const storeFailed = (err: unknown, key: ApiKey): void | Promise<void> => {
    if (!isPalisadeError(err) || (err.code !== 'STORE_UNAVAILABLE' && err.code !== 'STORE_FULL')) throw err;
    deps.onError?.(err);
    return fallback(key);
  };

  const seedOf = (counter: string, accountId: string, month: string): Promise<number> => {
    let p = seeds.get(counter);
    if (p === undefined) {
      p = deps.durable(accountId, month).finally(() => seeds.delete(counter));
      seeds.set(counter, p);
    }
    return p.then((durable) => durable + buffer.pendingAccountRequests(accountId, month));
  };

  const seeded = async (key: ApiKey, counter: string, limit: number, month: string): Promise<void> => {
    let seed: number;
    try {
      seed = await seedOf(counter, key.accountId, month);
    } catch (err) {
      deps.onError?.(err);
      return fallback(key);
    }
    let r: CountResult | null;
    try {
      r = await store.countUpTo(counter, limit, seed, now() + ttlMs);
    } catch (err) {
      return storeFailed(err, key);
    }
    admitted(r);
  };

  return (key) => {
    const limit = key.requestLimit;
    // Unlimited plans (the default) cost nothing, not even a Promise.
    if (limit === undefined || limit === null) return;
    if (limit > STORE_LIMITS.maxCounter) return fallback(key);
    const month = buffer.currentMonth();
    const counter = `plan|${key.accountId}|${month}`;
    const sync = store.sync;
    if (sync === undefined) {
      return store.countUpTo(counter, limit, null, now() + ttlMs).then(
        (r) => (r === null ? seeded(key, counter, limit, month) : admitted(r)),
        (err: unknown) => storeFailed(err, key),
      );
    }
    let r: CountResult | null;
    try {
      r = sync.countUpToSync(counter, limit, null, now() + ttlMs);
    } catch (err) {
      return storeFailed(err, key);
    }
    return r === null ? seeded(key, counter, limit, month) : admitted(r);
  };
}

function admitted(r: CountResult | null): void {
  if (r === null || !r.allowed) throw new PalisadeError('PLAN_LIMIT_EXCEEDED');
}
