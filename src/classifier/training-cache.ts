// The similarity index of each account's training data, cached for CACHE_DURATION_TRAINING_DATA.
// An expired index keeps serving while its successor loads (one load per account at a time), so
// only an account's first classification waits for the database. Building an index is
// synchronous: about 0.3 ms per example of 500 characters, so at most ~0.5 s for the 1,000
// examples an account may hold (TRAINING_LIMITS), once per account and cache period.
import { createSimilarityIndex, type SimilarityIndex, type TrainingExample } from './similarity.js';

export interface TrainingCache {
  /** The account's index (empty when it has no training data). */
  index(accountId: string): SimilarityIndex | Promise<SimilarityIndex>;
  /** Forgets the account's index (its training data changed through this process). */
  invalidate(accountId: string): void;
}

export interface TrainingCacheOptions {
  /** CACHE_DURATION_TRAINING_DATA in ms; default 1 h. */
  readonly ttlMs?: number;
  /** Accounts kept; default 1,000 (the least recently used goes first). */
  readonly maxAccounts?: number;
  readonly now?: () => number;
  readonly onError?: (err: unknown) => void;
}

interface Entry {
  index: SimilarityIndex | null;
  expires: number;
  loading: Promise<SimilarityIndex> | null;
}

export function createTrainingCache(load: (accountId: string) => Promise<readonly TrainingExample[]>, options: TrainingCacheOptions = {}): TrainingCache {
  const ttlMs = options.ttlMs ?? 3_600_000;
  const maxAccounts = options.maxAccounts ?? 1000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const refresh = (accountId: string, entry: Entry): Promise<SimilarityIndex> => {
    entry.loading ??= load(accountId).then((examples) => {
      const index = createSimilarityIndex(examples);
      entry.index = index;
      entry.expires = now() + ttlMs;
      return index;
    }).finally(() => { entry.loading = null; });
    return entry.loading;
  };

  return {
    index(accountId) {
      let entry = entries.get(accountId);
      if (entry === undefined) {
        entry = { index: null, expires: 0, loading: null };
        entries.set(accountId, entry);
        if (entries.size > maxAccounts) entries.delete(entries.keys().next().value!);
      } else {
        // Most recently used last.
        entries.delete(accountId);
        entries.set(accountId, entry);
      }
      if (entry.index !== null) {
        if (now() >= entry.expires) refresh(accountId, entry).catch((err: unknown) => options.onError?.(err));
        return entry.index;
      }
      const e = entry;
      return refresh(accountId, e).catch((err: unknown) => {
        // Never cached: the next classification tries again.
        if (entries.get(accountId) === e && e.index === null) entries.delete(accountId);
        throw err;
      });
    },
    invalidate(accountId) {
      entries.delete(accountId);
    },
  };
}
