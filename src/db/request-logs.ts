// request_logs: one row per logged request, IP already anonymised by the caller when configured.
// With EMBEDDED_DB_HMAC_SECRET each row carries hmac = hex(HMAC-SHA-256(secret, canonical row)), so a
// row altered in the database afterwards no longer verifies (verifyRequestLog).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Queryable } from './client.js';
import { fragment, join, raw, toDate, type Fragment } from './dialect.js';

export interface RequestLogEntry {
  /** Epoch milliseconds. */
  readonly time: number;
  readonly apiKeyId: string | null;
  readonly accountId: string | null;
  readonly ip: string | null;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  /** The client's country (ISO 3166-1 alpha-2) when known. */
  readonly country?: string | null;
  /** Threat kinds listing the client IP, comma-separated (malicious,proxy,tor,bot); null when none. */
  readonly threats?: string | null;
  /** The node that served it (NODE_NAME, else NODE_ID); null in rows written before migration 006. */
  readonly node?: string | null;
  /** GOOD, NEUTRAL or BAD when the request was classified (migration 007); null otherwise. */
  readonly classification?: 'GOOD' | 'NEUTRAL' | 'BAD' | null;
}

export interface StoredRequestLog extends RequestLogEntry {
  readonly id: string;
  readonly hmac: string | null;
}

/**
 * Columns of one row, in the order the HMAC covers them. country and threats only when either (or
 * node or classification) is set, node when it or classification is, classification only when set,
 * so rows written before they existed keep their HMAC.
 */
function canonical(e: RequestLogEntry): string {
  const row: unknown[] = [
    new Date(e.time).toISOString(), e.apiKeyId, e.accountId, e.ip, e.method, e.path, e.status, e.durationMs,
  ];
  if (e.country != null || e.threats != null || e.node != null || e.classification != null) row.push(e.country ?? null, e.threats ?? null);
  if (e.node != null || e.classification != null) row.push(e.node ?? null);
  if (e.classification != null) row.push(e.classification);
  return JSON.stringify(row);
}

export function requestLogHmac(entry: RequestLogEntry, secret: string): string {
  return createHmac('sha256', secret).update(canonical(entry)).digest('hex');
}

/** Does the stored row still match its HMAC? (false when it has none) */
export function verifyRequestLog(row: StoredRequestLog, secret: string): boolean {
  if (row.hmac === null || !/^[0-9a-f]{64}$/.test(row.hmac)) return false;
  return timingSafeEqual(Buffer.from(requestLogHmac(row, secret), 'hex'), Buffer.from(row.hmac, 'hex'));
}

/**
 * Rows per INSERT. On PostgreSQL all rows go in as eleven array parameters through unnest(), so the
 * statement text is the same whatever the row count: the server parses and plans it once per
 * connection. The other engines take a multi-row VALUES list (src/db/dialect.ts, insertRows).
 */
const ROWS_PER_INSERT = 5000;

const LOG_COLUMNS = {
  time: 'timestamp', api_key_id: 'text', account_id: 'text', ip: 'text', method: 'text', path: 'text',
  status: 'smallint', duration_ms: 'double', country: 'text', threats: 'text', node: 'text', classification: 'text', hmac: 'text',
} as const;

export async function insertRequestLogs(q: Queryable, entries: readonly RequestLogEntry[], hmacSecret: string | null): Promise<void> {
  for (let i = 0; i < entries.length; i += ROWS_PER_INSERT) {
    const rows = entries.slice(i, i + ROWS_PER_INSERT).map((e) => [
      new Date(e.time), e.apiKeyId, e.accountId, e.ip, e.method, e.path, e.status, e.durationMs,
      e.country ?? null, e.threats ?? null, e.node ?? null, e.classification ?? null, hmacSecret === null ? null : requestLogHmac(e, hmacSecret),
    ]);
    for (const statement of q.dialect.insertRows('request_logs', LOG_COLUMNS, rows)) await q.run(statement);
  }
}

export async function listRequestLogs(q: Queryable, options: { apiKeyId?: string; limit?: number } = {}): Promise<StoredRequestLog[]> {
  const limit = Math.min(options.limit ?? 100, 10_000);
  const rows = options.apiKeyId === undefined
    ? await q<LogRow[]>`select * from request_logs order by time desc, id desc limit ${limit}`
    : await q<LogRow[]>`select * from request_logs where api_key_id = ${options.apiKeyId} order by time desc, id desc limit ${limit}`;
  return rows.map((r) => Object.freeze({
    id: String(r.id), time: toDate(r.time).getTime(), apiKeyId: r.api_key_id, accountId: r.account_id, ip: r.ip,
    method: r.method, path: r.path, status: Number(r.status), durationMs: Number(r.duration_ms), country: r.country, threats: r.threats,
    node: r.node ?? null, classification: r.classification ?? null, hmac: r.hmac,
  }));
}

interface LogRow {
  id: string | number; time: unknown; api_key_id: string | null; account_id: string | null; ip: string | null;
  method: string; path: string; status: number | string; duration_ms: number | string; country: string | null; threats: string | null;
  node?: string | null;
  classification?: 'GOOD' | 'NEUTRAL' | 'BAD' | null;
  hmac: string | null;
}

/** Rows one retention statement deletes at most: the table is never locked for long. */
export const RETENTION_BATCH = 5000;

/**
 * Deletes the rows of `table` whose `timeColumn` is older than `ageMs` before `now`, `batch` rows
 * per statement (keyed by `id`), so the table is never locked for long; returns how many. The
 * retention of request logs, spam submissions and applied usage batches.
 */
export async function deleteOlderThan(q: Queryable, table: string, timeColumn: string, ageMs: number, now = Date.now(), batch = RETENTION_BATCH): Promise<number> {
  if (!Number.isFinite(ageMs) || ageMs < 0) throw new Error('the age must be a non-negative number of milliseconds');
  const cutoff = new Date(now - ageMs);
  let total = 0;
  for (;;) {
    const { count } = await q.run(q.dialect.deleteBatch(table, 'id', fragment`${raw(timeColumn)} < ${cutoff}`, batch));
    total += count;
    if (count < batch) return total;
  }
}

/** REQUEST_LOGS_TTL: deletes rows older than `ttlMs`, `batch` at a time; returns how many. */
export function deleteOldRequestLogs(q: Queryable, ttlMs: number, now = Date.now(), batch = RETENTION_BATCH): Promise<number> {
  return deleteOlderThan(q, 'request_logs', 'time', ttlMs, now, batch);
}

export interface RequestLogQuery {
  /** Only rows of this account / key. */
  readonly accountId?: string;
  readonly apiKeyId?: string;
  /** Rows with status >= statusMin and <= statusMax. */
  readonly statusMin?: number;
  readonly statusMax?: number;
  /** Rows whose path starts with this. */
  readonly pathPrefix?: string;
  readonly since?: Date;
  readonly until?: Date;
  /** Rows with an id below this one (the next page, newest first). */
  readonly before?: string;
  /** 1..1000, default 100. */
  readonly limit?: number;
}

/** A page of request logs, newest first, filtered (the admin API's GET /api/admin/logs). */
export async function queryRequestLogs(q: Queryable, f: RequestLogQuery): Promise<StoredRequestLog[]> {
  const limit = Math.min(Math.max(f.limit ?? 100, 1), 1000);
  const where: Fragment[] = [raw('1 = 1')];
  if (f.accountId !== undefined) where.push(fragment`account_id = ${f.accountId}`);
  if (f.apiKeyId !== undefined) where.push(fragment`api_key_id = ${f.apiKeyId}`);
  if (f.statusMin !== undefined) where.push(fragment`status >= ${f.statusMin}`);
  if (f.statusMax !== undefined) where.push(fragment`status <= ${f.statusMax}`);
  if (f.pathPrefix !== undefined) {
    // A prefix match without LIKE's wildcards and escapes, the same on every engine.
    where.push(fragment`substr(path, 1, ${f.pathPrefix.length}) = ${f.pathPrefix}`);
  }
  if (f.since !== undefined) where.push(fragment`time >= ${f.since}`);
  if (f.until !== undefined) where.push(fragment`time < ${f.until}`);
  if (f.before !== undefined) where.push(fragment`id < ${Number(f.before)}`);
  const rows = await q<LogRow[]>`select * from request_logs where ${join(where, ' and ')} order by id desc limit ${limit}`;
  return rows.map(toStored);
}

function toStored(r: LogRow): StoredRequestLog {
  return Object.freeze({
    id: String(r.id), time: toDate(r.time).getTime(), apiKeyId: r.api_key_id, accountId: r.account_id, ip: r.ip,
    method: r.method, path: r.path, status: Number(r.status), durationMs: Number(r.duration_ms), country: r.country, threats: r.threats,
    node: r.node ?? null, classification: r.classification ?? null, hmac: r.hmac,
  });
}

/** Paths whose 2xx answers count as verifications on the dashboard. */
export const VERIFICATION_PATHS: readonly string[] = Object.freeze(['/v1/verify', '/challenge/verify', '/v1/verify/signature']);

export interface RequestStatsRow {
  /** Start of the hour or day (UTC), epoch ms. */
  readonly bucket: number;
  readonly requests: number;
  /** 2xx answers of VERIFICATION_PATHS. */
  readonly verifications: number;
  /** Answers with status 400 or more. */
  readonly failures: number;
  readonly good: number;
  readonly neutral: number;
  readonly bad: number;
}

/**
 * Counts per hour or day since `since` (request logs, so within REQUEST_LOGS_TTL), oldest first.
 * The rows' four columns are read and bucketed here: date arithmetic differs between engines, and
 * the logs hold at most REQUEST_LOGS_TTL of traffic.
 */
export async function requestStats(q: Queryable, f: { accountId?: string; apiKeyId?: string; since: Date; unit: 'hour' | 'day' }): Promise<RequestStatsRow[]> {
  const size = f.unit === 'day' ? 86_400_000 : 3_600_000;
  const where: Fragment[] = [fragment`time >= ${f.since}`];
  if (f.accountId !== undefined) where.push(fragment`account_id = ${f.accountId}`);
  if (f.apiKeyId !== undefined) where.push(fragment`api_key_id = ${f.apiKeyId}`);
  const rows = await q<{ time: unknown; path: string; status: number | string; classification: string | null }[]>`
    select time, path, status, classification from request_logs where ${join(where, ' and ')}`;
  const buckets = new Map<number, { requests: number; verifications: number; failures: number; good: number; neutral: number; bad: number }>();
  for (const r of rows) {
    const bucket = Math.floor(toDate(r.time).getTime() / size) * size;
    let b = buckets.get(bucket);
    if (b === undefined) buckets.set(bucket, b = { requests: 0, verifications: 0, failures: 0, good: 0, neutral: 0, bad: 0 });
    const status = Number(r.status);
    b.requests++;
    if (status >= 200 && status <= 299 && VERIFICATION_PATHS.includes(r.path)) b.verifications++;
    if (status >= 400) b.failures++;
    if (r.classification === 'GOOD') b.good++;
    else if (r.classification === 'NEUTRAL') b.neutral++;
    else if (r.classification === 'BAD') b.bad++;
  }
  return [...buckets].sort((x, y) => x[0] - y[0]).map(([bucket, b]) => Object.freeze({ bucket, ...b }));
}
