// Picks the StateStore: Redis when a URL is configured (state shared between hosts), otherwise the
// shared-memory file (state shared between the workers of one host).
import { openRedisStore, type RedisStore } from './redis-store.js';
import { defaultClaimReplicas } from './redis-url.js';
import { openSharedMemoryStore, type SharedMemoryStore } from './shared-memory-store.js';
import type { StoreLogger } from './state-store.js';

export type { CountResult, HitResult, StateStore, StoreLogger } from './state-store.js';
export { STORE_LIMITS, claimUntil } from './state-store.js';
export { limitKey, ipKey, type LimitKeyContext } from './limit-key.js';
export { SharedMemoryStore, type SharedMemoryStats, type ClaimMemoryStats, type Evictions } from './shared-memory-store.js';
export { RedisStore } from './redis-store.js';

export interface StateStoreOptions {
  /** REDIS_URL; when set the Redis store is used and the shm* options are ignored. Default: unset. */
  redisUrl?: string | undefined;
  /** The state file (EMBEDDED_DB_REDIS_LOCATION; the caller resolves `db/state.shm` under DATA_DIR). */
  shmPath: string;
  /** Soft-state slots in the state file, 16 bytes each. Default 1,048,576 (16 MiB). */
  shmCapacity?: number | undefined;
  /**
   * Whether this process deletes ended claim buckets and prepares the next ones (the primary's
   * store does; workers only unmap, so no file work lands on the request path). Default true.
   */
  shmSweepFiles?: boolean | undefined;
  /** STATE_STORE_MAX_MEMORY: bytes the shared-memory store's claims may take. Default 1 GiB. */
  shmMaxClaimBytes?: number | undefined;
  /** REDIS_ALLOW_EVICTION: start (with a warning) although Redis may evict claim keys. Default false. */
  redisAllowEviction?: boolean | undefined;
  /** Prefix of every Redis key. Default 'palisade:'. */
  redisKeyPrefix?: string | undefined;
  /** REDIS_COMMAND_TIMEOUT, ms. Default 5000. */
  redisCommandTimeout?: number | undefined;
  /** REDIS_CONNECT_TIMEOUT, ms. Default 10000. */
  redisConnectTimeout?: number | undefined;
  /** REDIS_MAX_RETRIES. Default 2. */
  redisMaxRetries?: number | undefined;
  /** REDIS_CLAIM_REPLICAS (null: auto, by the URL's form). */
  redisClaimReplicas?: number | null | undefined;
  /** For Redis connection problems and the eviction-policy warning. Default: stderr. */
  logger?: StoreLogger | undefined;
}

export async function createStateStore(options: StateStoreOptions): Promise<SharedMemoryStore | RedisStore> {
  if (options.redisUrl) {
    return openRedisStore(options.redisUrl, defined({
      keyPrefix: options.redisKeyPrefix,
      commandTimeout: options.redisCommandTimeout,
      connectTimeout: options.redisConnectTimeout,
      maxRetries: options.redisMaxRetries,
      allowEviction: options.redisAllowEviction,
      claimReplicas: options.redisClaimReplicas ?? defaultClaimReplicas(options.redisUrl),
      logger: options.logger,
    }));
  }
  return openSharedMemoryStore(options.shmPath, defined({
    capacity: options.shmCapacity, maxClaimBytes: options.shmMaxClaimBytes, sweepFiles: options.shmSweepFiles, logger: options.logger,
  }));
}

/** Drops undefined fields so the stores' own defaults apply. */
function defined<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
