// request_logs: one row per logged request, IP already anonymised by the caller when configured.
// With EMBEDDED_DB_HMAC_SECRET each row carries hmac = hex(HMAC-SHA-256(secret, canonical row)), so a
// row altered in the database afterwards no longer verifies (verifyRequestLog).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Queryable } from './client.js';

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
  /** GOOD, NEUTRAL or BAD when the request was classified (migration 005); null otherwise. */
  readonly classification?: 'GOOD' | 'NEUTRAL' | 'BAD' | null;
}

export interface StoredRequestLog extends RequestLogEntry {
  readonly id: string;
  readonly hmac: string | null;
}

/**
 * Columns of one row, in the order the HMAC covers them. country and threats only when either (or
 * classification) is set, classification only when set, so rows written before they existed (and
 * rows without them) keep their HMAC.
 */
function canonical(e: RequestLogEntry): string {
  const row: unknown[] = [
    new Date(e.time).toISOString(), e.apiKeyId, e.accountId, e.ip, e.method, e.path, e.status, e.durationMs,
  ];
  if (e.country != null || e.threats != null || e.classification != null) row.push(e.country ?? null, e.threats ?? null);
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
 * Rows per INSERT. All rows go in as twelve array parameters through unnest(), so the statement text
 * is the same whatever the row count: the server parses and plans it once per connection (a
 * multi-row VALUES list was a new statement with 9 parameters per row for every batch).
 */
const ROWS_PER_INSERT = 5000;

export async function insertRequestLogs(q: Queryable, entries: readonly RequestLogEntry[], hmacSecret: string | null): Promise<void> {
  for (let i = 0; i < entries.length; i += ROWS_PER_INSERT) {
    const rows = entries.slice(i, i + ROWS_PER_INSERT);
    const column = <T>(pick: (e: RequestLogEntry) => T) => q.array(rows.map(pick) as never[]);
    await q`
      insert into request_logs (time, api_key_id, account_id, ip, method, path, status, duration_ms, country, threats, classification, hmac)
      select * from unnest(
        ${column((e) => new Date(e.time).toISOString())}::timestamptz[], ${column((e) => e.apiKeyId)}::text[],
        ${column((e) => e.accountId)}::text[], ${column((e) => e.ip)}::text[], ${column((e) => e.method)}::text[],
        ${column((e) => e.path)}::text[], ${column((e) => e.status)}::smallint[], ${column((e) => e.durationMs)}::float8[],
        ${column((e) => e.country ?? null)}::text[], ${column((e) => e.threats ?? null)}::text[],
        ${column((e) => e.classification ?? null)}::text[],
        ${column((e) => (hmacSecret === null ? null : requestLogHmac(e, hmacSecret)))}::text[]
      )`;
  }
}

export async function listRequestLogs(q: Queryable, options: { apiKeyId?: string; limit?: number } = {}): Promise<StoredRequestLog[]> {
  const limit = Math.min(options.limit ?? 100, 10_000);
  const rows = options.apiKeyId === undefined
    ? await q<LogRow[]>`select * from request_logs order by time desc, id desc limit ${limit}`
    : await q<LogRow[]>`select * from request_logs where api_key_id = ${options.apiKeyId} order by time desc, id desc limit ${limit}`;
  return rows.map((r) => Object.freeze({
    id: r.id, time: r.time.getTime(), apiKeyId: r.api_key_id, accountId: r.account_id, ip: r.ip,
    method: r.method, path: r.path, status: r.status, durationMs: r.duration_ms, country: r.country, threats: r.threats, classification: r.classification, hmac: r.hmac,
  }));
}

interface LogRow {
  id: string; time: Date; api_key_id: string | null; account_id: string | null; ip: string | null;
  method: string; path: string; status: number; duration_ms: number; country: string | null; threats: string | null;
  classification: 'GOOD' | 'NEUTRAL' | 'BAD' | null; hmac: string | null;
}

/** REQUEST_LOGS_TTL: deletes rows older than `ttlMs`; returns how many. */
export async function deleteOldRequestLogs(q: Queryable, ttlMs: number, now = Date.now()): Promise<number> {
  if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new Error('ttlMs must be a non-negative number');
  const rows = await q`delete from request_logs where time < ${new Date(now - ttlMs)} returning 1`;
  return rows.length;
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
  const prefix = f.pathPrefix === undefined ? null : `${f.pathPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await q<LogRow[]>`
    select * from request_logs where
      (${f.accountId ?? null}::text is null or account_id = ${f.accountId ?? null})
      and (${f.apiKeyId ?? null}::text is null or api_key_id = ${f.apiKeyId ?? null})
      and (${f.statusMin ?? null}::int is null or status >= ${f.statusMin ?? null}::int)
      and (${f.statusMax ?? null}::int is null or status <= ${f.statusMax ?? null}::int)
      and (${prefix}::text is null or path like ${prefix})
      and (${f.since ?? null}::timestamptz is null or time >= ${f.since ?? null})
      and (${f.until ?? null}::timestamptz is null or time < ${f.until ?? null})
      and (${f.before ?? null}::bigint is null or id < ${f.before ?? null}::bigint)
    order by id desc limit ${limit}`;
  return rows.map((r) => Object.freeze({
    id: String(r.id), time: r.time.getTime(), apiKeyId: r.api_key_id, accountId: r.account_id, ip: r.ip,
    method: r.method, path: r.path, status: r.status, durationMs: r.duration_ms, country: r.country, threats: r.threats,
    classification: r.classification, hmac: r.hmac,
  }));
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

/** Counts per hour or day since `since` (request logs, so within REQUEST_LOGS_TTL), oldest first. */
export async function requestStats(q: Queryable, f: { accountId?: string; apiKeyId?: string; since: Date; unit: 'hour' | 'day' }): Promise<RequestStatsRow[]> {
  const unit = f.unit === 'day' ? 'day' : 'hour';
  const rows = await q<{ bucket: string; requests: string; verifications: string; failures: string; good: string; neutral: string; bad: string }[]>`
    select (extract(epoch from date_trunc(${unit}, time, 'UTC')) * 1000)::bigint::text as bucket, count(*) as requests,
      count(*) filter (where path = any(${q.array([...VERIFICATION_PATHS])}::text[]) and status between 200 and 299) as verifications,
      count(*) filter (where status >= 400) as failures,
      count(*) filter (where classification = 'GOOD') as good,
      count(*) filter (where classification = 'NEUTRAL') as neutral,
      count(*) filter (where classification = 'BAD') as bad
    from request_logs where time >= ${f.since}
      and (${f.accountId ?? null}::text is null or account_id = ${f.accountId ?? null})
      and (${f.apiKeyId ?? null}::text is null or api_key_id = ${f.apiKeyId ?? null})
    group by 1 order by 1`;
  return rows.map((r) => Object.freeze({
    bucket: Number(r.bucket),
    requests: Number(r.requests), verifications: Number(r.verifications), failures: Number(r.failures),
    good: Number(r.good), neutral: Number(r.neutral), bad: Number(r.bad),
  }));
}
