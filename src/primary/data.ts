// The primary's part of the durable data: it hosts the embedded database (unless an external one
// is configured: src/db/engines.ts), applies migrations under an advisory lock, creates the default account, the state file and
// the usage ledger, writes the usage dead processes left in the ledger (usage-drain.ts), and runs
// the retention job. Workers connect afterwards (src/services.ts). Without Redis it also keeps the
// shared-memory store open for its sweep: ended claim buckets are deleted and the next ones
// prepared here, off the workers' request path.
import type { Config } from '../config/index.js';
import { ensureRootUser, ROOT_USERNAME } from '../admin/auth/root.js';
import { ensureDefaultAccount } from '../db/accounts.js';
import { openDatabase, type Database } from '../db/client.js';
import { externalEngine } from '../db/engines.js';
import { migrate } from '../db/migrate.js';
import { writeUsageBatch } from '../db/usage.js';
import { nodeLabel } from '../log.js';
import type { Logger } from '../log.js';
import { databaseOptions, stateStoreOptions } from '../services.js';
import { createStateStore, type StateStore } from '../store/index.js';
import { openRedisStore } from '../store/redis-store.js';
import { openUsageLedger, usageLedgerPath } from '../usage/usage-ledger.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded-db.js';
import { snapshotFile, startSnapshotSchedule } from '../db/snapshot-files.js';
import { writeRedisSnapshot } from '../store/redis-snapshot.js';
import { createRetentionJob } from './retention.js';
import { startUsageDrain, type UsageDrain } from './usage-drain.js';

export interface PrimaryData {
  readonly embedded: EmbeddedDatabase | null;
  readonly db: Database;
  /** Writes the usage counts of processes that died (sweep it when a worker exits). */
  readonly usage: UsageDrain;
  close(): Promise<void>;
}

/** Every this often each primary tries the retention job (src/primary/retention.ts); one node runs it. */
const RETENTION_INTERVAL_MS = 15 * 60_000;

export async function preparePrimaryData(config: Config, logger: Logger, workers: number): Promise<PrimaryData> {
  const embedded = externalEngine(config) !== null ? null : await startEmbeddedDatabase({
    dataDir: config.dataDir,
    location: config.EMBEDDED_DB_DATABASE_LOCATION,
    ...(config.EMBEDDED_DB_DATABASE_ADDR ? { addr: config.EMBEDDED_DB_DATABASE_ADDR } : {}),
    // Every worker's pool, the primary's own and a few for the CLI.
    maxConnections: Math.max(1, workers) * config.POSTGRES_MAX_CONNECTIONS + 8,
  });
  let db: Database | null = null;
  let janitor: StateStore | null = null;
  let usage: UsageDrain | null = null;
  try {
    db = openDatabase({ ...databaseOptions(config), maxConnections: 2 });
    const applied = await migrate(db.sql);
    if (applied.applied.length > 0) logger.info({ migrations: applied.applied }, 'database migrated');
    await ensureDefaultAccount(db.sql, config.DEFAULT_ACCOUNT_NAME);
    const root = await ensureRootUser(db.sql, config.DEFAULT_ROOT_PASSWORD);
    if (root !== null) {
      // Said once, at warn so that LOG_LEVEL=warn still shows it; the password is never logged again.
      if (root.generatedPassword !== null) {
        // In the message: the logger redacts fields named password.
        logger.warn({ username: ROOT_USERNAME }, `root user created; its generated first password is ${root.generatedPassword} (shown only this once): log in to the console and change it`);
      } else {
        logger.warn({ username: ROOT_USERNAME }, 'root user created with DEFAULT_ROOT_PASSWORD: log in to the console and change it');
      }
    }
    // Create (or check) the state file once here, so workers never race to create it.
    if (!config.REDIS_URL) janitor = await createStateStore(stateStoreOptions(config, logger));
    const sql = db.sql;
    usage = startUsageDrain(openUsageLedger(usageLedgerPath(config.dataDir)), (batch) => writeUsageBatch(sql, batch, { requestLogHmacSecret: config.EMBEDDED_DB_HMAC_SECRET, node: nodeLabel(config) }), {
      onError: (err) => logger.warn({ err: (err as Error).message }, 'writing usage left in the usage ledger failed; retrying later'),
      onDrained: (region, requests) => logger.info({ region, requests }, 'usage left in the usage ledger written'),
    });
    // What the last run left (a worker killed, or the whole node) is written before anything new is counted.
    await usage.sweep().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'writing usage left in the usage ledger failed; retrying later'));
  } catch (err) {
    await usage?.close().catch(() => {});
    await janitor?.close().catch(() => {});
    await db?.close().catch(() => {});
    await embedded?.close().catch(() => {});
    throw err;
  }
  const openDb = db;
  const drain = usage;
  // One node at a time runs it (a lease in the database), whichever primary takes the lease first.
  const retention = createRetentionJob({
    sql: openDb.sql,
    holder: `${config.secrets.NODE_ID}/${process.pid}`,
    requestLogsTtlMs: config.REQUEST_LOGS_TTL,
    spamSubmissionsTtlMs: config.DELETE_SPAM_SUBMISSIONS_IN,
    intervalMs: RETENTION_INTERVAL_MS,
    logger,
  });
  const redisUrl = config.REDIS_URL;
  const redisSnapshots = config.SNAPSHOTS_REDIS_SCHEDULE === null || !redisUrl ? null : startSnapshotSchedule({
    sql: openDb.sql,
    schedule: config.SNAPSHOTS_REDIS_SCHEDULE,
    lease: 'snapshot-redis',
    write: (file, at) => writeRedisSnapshot(redisUrl, file, at.getTime()),
    holder: `${config.secrets.NODE_ID}/${process.pid}`,
    file: (at) => snapshotFile(config.dataDir, config.SNAPSHOTS_STORAGE_LOCAL_DIR, config.SNAPSHOTS_DB_PREFIX, at, 'redis'),
    logger,
  });
  if (config.REDIS_URL) warnUnlessRedisPersists(config, logger).catch(() => {});
  retention.start();
  const snapshots = config.SNAPSHOTS_MAIN_SCHEDULE === null ? null : startSnapshotSchedule({
    sql: openDb.sql,
    schedule: config.SNAPSHOTS_MAIN_SCHEDULE,
    holder: `${config.secrets.NODE_ID}/${process.pid}`,
    file: (at) => snapshotFile(config.dataDir, config.SNAPSHOTS_STORAGE_LOCAL_DIR, config.SNAPSHOTS_DB_PREFIX, at),
    logger,
  });
  return {
    embedded,
    db: openDb,
    usage: drain,
    async close() {
      snapshots?.stop();
      redisSnapshots?.stop();
      await retention.stop();
      await drain.close().catch((err: unknown) => logger.error({ err: (err as Error).message }, 'usage left in the usage ledger not written; it is written at the next start'));
      await janitor?.close().catch(() => {});
      await openDb.close(2000).catch(() => {});
      await embedded?.close();
    },
  };
}

const QUIET = { info() {}, warn() {}, error() {} };

/**
 * Used challenges live only in Redis: a Redis that restarts without its append-only file forgets
 * them, and every payload verified before the restart can be verified again until its challenge
 * expires (test/reliability/redis-down.test.ts). Checked once per start, off the start-up path.
 */
async function warnUnlessRedisPersists(config: Config, logger: Logger): Promise<void> {
  const store = await openRedisStore(config.REDIS_URL!, {
    commandTimeout: config.REDIS_COMMAND_TIMEOUT, connectTimeout: config.REDIS_CONNECT_TIMEOUT, maxRetries: 0,
    // The workers report unreachable servers and the eviction policy; this connection only asks.
    logger: QUIET,
  });
  try {
    if ((await store.appendOnly()) === false) {
      logger.warn(
        { appendonly: 'no' },
        'Redis runs without its append-only file: when it restarts it forgets the used challenges, and payloads verified ' +
          'before the restart can be verified again until their challenges expire. Set "appendonly yes" on the Redis server.',
      );
    }
  } finally {
    await store.close();
  }
}
