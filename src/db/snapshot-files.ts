// Where snapshots go and when: SNAPSHOTS_STORAGE_PROVIDER (local only; s3 and azure are refused at
// start-up), SNAPSHOTS_STORAGE_LOCAL_DIR (relative to DATA_DIR), SNAPSHOTS_DB_PREFIX (a path below
// it, with ${iso_date()} replaced by the time of the snapshot; a Redis snapshot takes the same path
// with .redis.jsonl.gz instead of .jsonl.gz), SNAPSHOTS_MAIN_SCHEDULE and SNAPSHOTS_REDIS_SCHEDULE
// (cron; empty disables). A scheduled snapshot runs on one node at a time: the node that takes the
// `snapshot-main` (or `snapshot-redis`) lease for the next five minutes writes it.
import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { Cron } from 'croner';
import type { Sql } from './client.js';
import { acquireLease } from './leases.js';
import { writeSnapshot, type SnapshotStats } from './snapshot.js';

export const SNAPSHOT_LEASE_MS = 5 * 60_000;

/** Configuration problems (empty when fine): the providers not implemented yet, a prefix leaving the directory. */
export function snapshotProblems(values: object): string[] {
  const v = values as Record<string, unknown>;
  const problems: string[] = [];
  const provider = v.SNAPSHOTS_STORAGE_PROVIDER;
  if (provider !== undefined && provider !== 'local') {
    problems.push(`SNAPSHOTS_STORAGE_PROVIDER=${String(provider)} is not supported yet: only local (SNAPSHOTS_STORAGE_LOCAL_DIR) is implemented`);
  }
  const redisSchedule = v.SNAPSHOTS_REDIS_SCHEDULE;
  if (typeof redisSchedule === 'string' && redisSchedule !== '' && !(typeof v.REDIS_URL === 'string' && v.REDIS_URL !== '')) {
    problems.push('SNAPSHOTS_REDIS_SCHEDULE needs REDIS_URL: the shared-memory state store of a single node is a file in DATA_DIR (copy it with the node stopped)');
  }
  const prefix = v.SNAPSHOTS_DB_PREFIX;
  if (typeof prefix === 'string') {
    const rest = prefix.replace(/\$\{iso_date\(\)\}/g, '');
    if (/\$\{/.test(rest)) problems.push('SNAPSHOTS_DB_PREFIX: the only placeholder is ${iso_date()}');
    if (isAbsolute(prefix) || prefix.split('/').includes('..') || prefix.trim() === '') {
      problems.push('SNAPSHOTS_DB_PREFIX must be a relative path below SNAPSHOTS_STORAGE_LOCAL_DIR');
    }
  }
  return problems;
}

/** The time as ${iso_date()} writes it: ISO 8601 in UTC, to the second (2026-11-27T16:30:00Z). */
export function isoDate(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The snapshot file for `at`: DATA_DIR/SNAPSHOTS_STORAGE_LOCAL_DIR/SNAPSHOTS_DB_PREFIX(expanded).jsonl.gz (.redis.jsonl.gz for Redis). */
export function snapshotFile(dataDir: string, localDir: string, prefix: string, at: Date, kind: 'main' | 'redis' = 'main'): string {
  const root = resolve(dataDir, localDir);
  const file = resolve(root, `${prefix.replace(/\$\{iso_date\(\)\}/g, isoDate(at))}${kind === 'redis' ? '.redis' : ''}.jsonl.gz`);
  const inside = relative(root, file);
  if (inside.startsWith('..') || isAbsolute(inside)) throw new Error('SNAPSHOTS_DB_PREFIX leaves SNAPSHOTS_STORAGE_LOCAL_DIR');
  return file;
}

export interface SnapshotScheduleOptions {
  readonly sql: Sql;
  readonly schedule: string;
  /** 'snapshot-main' or 'snapshot-redis'. Default 'snapshot-main'. */
  readonly lease?: string;
  /** Writes the snapshot to `file`; default the database (writeSnapshot). */
  readonly write?: (file: string, at: Date) => Promise<unknown>;
  /** NODE_ID and process: who holds the lease. */
  readonly holder: string;
  readonly file: (at: Date) => string;
  readonly now?: () => number;
  readonly logger?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** Takes the lease and writes one snapshot; null when another node holds the lease. */
export async function scheduledSnapshot(o: SnapshotScheduleOptions): Promise<{ file: string; stats: SnapshotStats | unknown } | null> {
  const now = (o.now ?? Date.now)();
  if (!(await acquireLease(o.sql, o.lease ?? 'snapshot-main', o.holder, SNAPSHOT_LEASE_MS, now))) return null;
  const at = new Date(now);
  const file = o.file(at);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const stats = await (o.write ?? ((f: string, t: Date) => writeSnapshot(o.sql, f, t)))(file, at);
  return { file, stats };
}

/** Runs scheduledSnapshot on the cron schedule; stop() ends it. */
export function startSnapshotSchedule(o: SnapshotScheduleOptions): { stop(): void } {
  const job = new Cron(o.schedule, { protect: true }, async () => {
    try {
      const done = await scheduledSnapshot(o);
      if (done !== null) o.logger?.info({ file: done.file, stats: done.stats }, `${o.lease === 'snapshot-redis' ? 'Redis' : 'database'} snapshot written`);
    } catch (err) {
      o.logger?.warn({ err: (err as Error).message }, `${o.lease === 'snapshot-redis' ? 'Redis' : 'database'} snapshot failed; trying again at the next scheduled time`);
    }
  });
  return { stop: () => job.stop() };
}
