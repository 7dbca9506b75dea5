// What a serving process holds besides its HTTP server: the state store, the database pool, the
// API-key cache, the usage buffer, the proof-of-work secrets and challenge pool. Opened once per
// worker (or once with WORKERS=0) and closed in the reverse order on shutdown.
import { type Config, dataPath } from './config/index.js';
import { openDatabase, type Database, type DatabaseOptions } from './db/client.js';
import { externalDatabaseOptions, postgresPool } from './db/engines.js';
import { accountRequests, writeUsageBatch } from './db/usage.js';
import { nodeLabel } from './log.js';
import { findApiKeyIdBySecretHash } from './db/api-keys.js';
import { loadApiKey } from './keys/api-keys.js';
import { createKeyCache, type KeyCache } from './keys/key-cache.js';
import { createKeySecrets, deriveApiKeySecretKey, type KeySecrets } from './keys/secrets.js';
import type { Logger } from './log.js';
import { embeddedSocketPath } from './db/embedded-paths.js';
import { configureDerivation } from './pow/derive.js';
import { createChallengePool, poolSizeOptions, type ChallengePool } from './pow/pool.js';
import { preparePowSecrets, type PowSecrets } from './pow/secrets.js';
import { claimMemoryBytes } from './primary/resources.js';
import { createStateStore, type StateStore } from './store/index.js';
import { createAccountUsage } from './usage/account-usage.js';
import { createPlanLimit, type ChargePlan } from './usage/plan-limit.js';
import { createUsageBuffer, type UsageBuffer } from './usage/usage-buffer.js';
import { openUsageLedger, usageLedgerPath } from './usage/usage-ledger.js';

export interface Services {
  readonly store: StateStore;
  readonly db: Database;
  readonly keys: KeyCache;
  readonly keySecrets: KeySecrets;
  readonly usage: UsageBuffer;
  /** Counts a request against its account's plan limit (src/usage/plan-limit.ts). */
  readonly planLimit: ChargePlan;
  readonly pow: PowSecrets;
  readonly pool: ChallengePool;
  /** Flushes usage and releases everything; never throws. */
  close(timeoutMs: number): Promise<void>;
}

/** The state store options every process uses (the primary opens it once first to create the file). */
export function stateStoreOptions(config: Config, logger: Logger) {
  return {
    redisUrl: config.REDIS_URL ?? undefined,
    shmPath: dataPath(config, config.EMBEDDED_DB_REDIS_LOCATION),
    shmCapacity: config.STATE_STORE_CAPACITY,
    shmMaxClaimBytes: claimMemoryBytes(config.STATE_STORE_MAX_MEMORY, config.CONTAINER_MEMORY_LIMIT_MB),
    redisAllowEviction: config.REDIS_ALLOW_EVICTION,
    redisClaimReplicas: config.REDIS_CLAIM_REPLICAS,
    redisCommandTimeout: config.REDIS_COMMAND_TIMEOUT,
    redisConnectTimeout: config.REDIS_CONNECT_TIMEOUT,
    redisMaxRetries: config.REDIS_MAX_RETRIES,
    logger,
  };
}

/**
 * The database options every process uses: the external engine's URL with its pool settings
 * (src/db/engines.ts), or the primary's embedded database socket with the POSTGRES_* ones.
 */
export function databaseOptions(config: Config): DatabaseOptions {
  return externalDatabaseOptions(config) ?? { socketPath: embeddedSocketPath(config.dataDir), ...postgresPool(config) };
}

export async function openServices(config: Config, logger: Logger): Promise<Services> {
  configureDerivation({ maxThreads: config.powMaxThreads });
  // The primary's store deletes and prepares claim buckets (src/primary/data.ts): workers only map them.
  const store = await createStateStore({ ...stateStoreOptions(config, logger), shmSweepFiles: false });
  const db = openDatabase(databaseOptions(config));
  const keySecrets = createKeySecrets(deriveApiKeySecretKey(config.secrets.PALISADE_HMAC_SECRET), config.secrets.HASHING_SALT);
  const keys = createKeyCache({
    byId: (id) => loadApiKey(db.sql, keySecrets, id),
    idBySecretHash: (hash) => findApiKeyIdBySecretHash(db.sql, hash),
  }, keySecrets, { ttlMs: config.CACHE_DURATION_API_KEYS });
  // Usage counts live in a region of the host's usage ledger, where a worker killed at any
  // instruction cannot take them along (src/usage/usage-ledger.ts).
  const ledger = openUsageLedger(usageLedgerPath(config.dataDir));
  const region = ledger.claim();
  if (region === null) {
    logger.warn({ path: ledger.path }, 'every usage ledger region is held: usage counts of this process live in its heap and die with it');
  }
  const usage = createUsageBuffer(
    (batch) => writeUsageBatch(db.sql, batch, { requestLogHmacSecret: config.EMBEDDED_DB_HMAC_SECRET, node: nodeLabel(config) }),
    {
      ...(region === null ? {} : { region }),
      anonymizeIp: config.ANONYMIZE_IP_ADDRESS,
      maxLogsPerSecond: config.REQUEST_LOGS_MAX_RATE ?? Infinity,
      timeZone: config.TZ || undefined,
      onError: warnEvery(logger, 10_000, 'usage write failed; counts stay buffered and are retried'),
    },
  );
  usage.start();
  const durable = (accountId: string, month: string) => accountRequests(db.sql, accountId, month);
  const accountUsage = createAccountUsage(durable, usage, {
    onError: warnEvery(logger, 10_000, 'reading account usage failed; plan limits fail open meanwhile'),
  });
  const planLimit = createPlanLimit({
    store, durable, buffer: usage, approximate: accountUsage,
    onError: warnEvery(logger, 10_000, 'plan limit counters unavailable; plan limits follow the usage count (up to 10 s behind) meanwhile'),
  });
  const pow = preparePowSecrets(config.secrets.PALISADE_HMAC_SECRET);
  const pool = createChallengePool({ secrets: pow }, poolSizeOptions(config.CHALLENGE_POOL_SIZE));

  return {
    store, db, keys, keySecrets, usage, planLimit, pow, pool,
    async close(timeoutMs) {
      pool.close();
      const flushed = await usage.close(timeoutMs).catch(() => false);
      // What is not written stays in the ledger region for its next owner (or the primary).
      if (!flushed) logger.error(usage.stats(), 'usage not fully written at shutdown; the counts stay in the usage ledger');
      ledger.close();
      await db.close(1000).catch(() => {});
      await store.close().catch(() => {});
    },
  };
}

/** A logger callback that logs at most once per `intervalMs` (failures repeat every second). */
function warnEvery(logger: Logger, intervalMs: number, msg: string): (err: unknown) => void {
  let last = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    logger.warn({ err: (err as Error)?.message ?? String(err) }, msg);
  };
}
