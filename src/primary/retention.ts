// Retention: request logs past REQUEST_LOGS_TTL, spam submissions past DELETE_SPAM_SUBMISSIONS_IN and
// applied usage-batch ids past a week are deleted by a job that runs on one node at a time: each
// primary tries every interval, and only the one that takes the `retention` lease (src/db/leases.ts)
// runs; the lease lasts one interval, so the cluster runs it once per interval, and a node that
// dies mid-run hands over when its lease expires. Rows go `batch` at a time, each batch its own
// statement, so no table is locked for long; the lease is renewed between tables.
import type { Sql } from '../db/client.js';
import { acquireLease } from '../db/leases.js';
import { deleteOldRequestLogs, RETENTION_BATCH } from '../db/request-logs.js';
import { deleteOldSpamSubmissions } from '../db/spam-submissions.js';
import { pruneUsageFlushes } from '../db/usage.js';

export const RETENTION_LEASE = 'retention';

export interface RetentionOptions {
  readonly sql: Sql;
  /** Who runs it: NODE_ID and process. */
  readonly holder: string;
  readonly requestLogsTtlMs: number;
  readonly spamSubmissionsTtlMs: number;
  /** Applied usage-batch ids are kept this long (a retry comes within seconds). Default 7 days. */
  readonly usageFlushesTtlMs?: number;
  /** How often each node tries, and how long a run's lease lasts. Default 15 minutes. */
  readonly intervalMs?: number;
  /** Rows per DELETE. Default 5,000. */
  readonly batch?: number;
  /** The clock (tests use a fake one). Default Date.now. */
  readonly now?: () => number;
  readonly logger?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface RetentionRun {
  /** False when another node holds the lease. */
  readonly ran: boolean;
  readonly requestLogs: number;
  readonly spamSubmissions: number;
  readonly usageFlushes: number;
}

export interface RetentionJob {
  /** One attempt: takes the lease or returns { ran: false }. */
  runOnce(): Promise<RetentionRun>;
  /** Runs now, then every interval. */
  start(): void;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

export const RETENTION_DEFAULTS = Object.freeze({ intervalMs: 15 * 60_000, usageFlushesTtlMs: 7 * 86_400_000 });

export function createRetentionJob(o: RetentionOptions): RetentionJob {
  const now = o.now ?? Date.now;
  const intervalMs = o.intervalMs ?? RETENTION_DEFAULTS.intervalMs;
  const batch = o.batch ?? RETENTION_BATCH;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  const skipped: RetentionRun = Object.freeze({ ran: false, requestLogs: 0, spamSubmissions: 0, usageFlushes: 0 });
  const hold = () => acquireLease(o.sql, RETENTION_LEASE, o.holder, intervalMs, now());

  async function runOnce(): Promise<RetentionRun> {
    if (!(await hold())) return skipped;
    const requestLogs = await deleteOldRequestLogs(o.sql, o.requestLogsTtlMs, now(), batch);
    if (!(await hold())) return { ran: true, requestLogs, spamSubmissions: 0, usageFlushes: 0 };
    const spamSubmissions = await deleteOldSpamSubmissions(o.sql, o.spamSubmissionsTtlMs, now(), batch);
    if (!(await hold())) return { ran: true, requestLogs, spamSubmissions, usageFlushes: 0 };
    const usageFlushes = await pruneUsageFlushes(o.sql, o.usageFlushesTtlMs ?? RETENTION_DEFAULTS.usageFlushesTtlMs, now());
    if (requestLogs > 0) o.logger?.info({ deleted: requestLogs }, 'request logs past REQUEST_LOGS_TTL deleted');
    if (spamSubmissions > 0) o.logger?.info({ deleted: spamSubmissions }, 'spam submissions past DELETE_SPAM_SUBMISSIONS_IN deleted');
    return { ran: true, requestLogs, spamSubmissions, usageFlushes };
  }

  const tick = () => {
    running = running.then(() => runOnce()).catch((err: unknown) => {
      o.logger?.warn({ err: (err as Error).message }, 'retention (request logs, spam submissions) failed; retrying at the next interval');
    });
  };

  return {
    runOnce,
    start() {
      if (timer !== null) return;
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
