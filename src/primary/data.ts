// The primary's part of the durable data: it hosts the embedded database (unless POSTGRES_URL is
// set), applies migrations under an advisory lock, creates the default account, the state file and
// the usage ledger, writes the usage dead processes left in the ledger (usage-drain.ts), and runs
// the retention job. Workers connect afterwards (src/services.ts). Without Redis it also keeps the
// shared-memory store open for its sweep: ended claim buckets are deleted and the next ones
// prepared here, off the workers' request path.
import type { Config } from '../config/index.js';
import { ensureRootUser, ROOT_USERNAME } from '../admin/auth/root.js';
import { ensureDefaultAccount } from '../db/accounts.js';
import { openDatabase, type Database } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { deleteOldRequestLogs } from '../db/request-logs.js';
import { deleteOldSpamSubmissions } from '../db/spam-submissions.js';
import { pruneUsageFlushes, writeUsageBatch } from '../db/usage.js';
import type { Logger } from '../log.js';
import { databaseOptions, stateStoreOptions } from '../services.js';
import { createStateStore, type StateStore } from '../store/index.js';
import { openRedisStore } from '../store/redis-store.js';
import { openUsageLedger, usageLedgerPath } from '../usage/usage-ledger.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded-db.js';
import { startUsageDrain, type UsageDrain } from './usage-drain.js';

export interface PrimaryData {
  readonly embedded: EmbeddedDatabase | null;
  readonly db: Database;
  /** Writes the usage counts of processes that died (sweep it when a worker exits). */
  readonly usage: UsageDrain;
  close(): Promise<void>;
}

/** Every this often the primary deletes request logs older than REQUEST_LOGS_TTL. */
const RETENTION_INTERVAL_MS = 15 * 60_000;

export async function preparePrimaryData(config: Config, logger: Logger, workers: number): Promise<PrimaryData> {
  const embedded = config.POSTGRES_URL ? null : await startEmbeddedDatabase({
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
    usage = startUsageDrain(openUsageLedger(usageLedgerPath(config.dataDir)), (batch) => writeUsageBatch(sql, batch), {
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
  const retention = async () => {
    try {
      const deleted = await deleteOldRequestLogs(openDb.sql, config.REQUEST_LOGS_TTL);
      await pruneUsageFlushes(openDb.sql, 7 * 86_400_000);
      if (deleted > 0) logger.info({ deleted }, 'request logs past REQUEST_LOGS_TTL deleted');
      const submissions = await deleteOldSpamSubmissions(openDb.sql, config.DELETE_SPAM_SUBMISSIONS_IN);
      if (submissions > 0) logger.info({ deleted: submissions }, 'spam submissions past DELETE_SPAM_SUBMISSIONS_IN deleted');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'retention (request logs, spam submissions) failed; retrying later');
    }
  };
  if (config.REDIS_URL) warnUnlessRedisPersists(config, logger).catch(() => {});
  void retention();
  const timer = setInterval(() => void retention(), RETENTION_INTERVAL_MS);
  timer.unref();
  return {
    embedded,
    db: openDb,
    usage: drain,
    async close() {
      clearInterval(timer);
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
