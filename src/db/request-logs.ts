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
}

export interface StoredRequestLog extends RequestLogEntry {
  readonly id: string;
  readonly hmac: string | null;
}

/**
 * Columns of one row, in the order the HMAC covers them. country and threats only when either is
 * set, so rows written before they existed (and rows without them) keep their HMAC.
 */
function canonical(e: RequestLogEntry): string {
  const row: unknown[] = [
    new Date(e.time).toISOString(), e.apiKeyId, e.accountId, e.ip, e.method, e.path, e.status, e.durationMs,
  ];
  if (e.country != null || e.threats != null) row.push(e.country ?? null, e.threats ?? null);
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
 * Rows per INSERT. All rows go in as eleven array parameters through unnest(), so the statement text
 * is the same whatever the row count: the server parses and plans it once per connection (a
 * multi-row VALUES list was a new statement with 9 parameters per row for every batch).
 */
const ROWS_PER_INSERT = 5000;

export async function insertRequestLogs(q: Queryable, entries: readonly RequestLogEntry[], hmacSecret: string | null): Promise<void> {
  for (let i = 0; i < entries.length; i += ROWS_PER_INSERT) {
    const rows = entries.slice(i, i + ROWS_PER_INSERT);
    const column = <T>(pick: (e: RequestLogEntry) => T) => q.array(rows.map(pick) as never[]);
    await q`
      insert into request_logs (time, api_key_id, account_id, ip, method, path, status, duration_ms, country, threats, hmac)
      select * from unnest(
        ${column((e) => new Date(e.time).toISOString())}::timestamptz[], ${column((e) => e.apiKeyId)}::text[],
        ${column((e) => e.accountId)}::text[], ${column((e) => e.ip)}::text[], ${column((e) => e.method)}::text[],
        ${column((e) => e.path)}::text[], ${column((e) => e.status)}::smallint[], ${column((e) => e.durationMs)}::float8[],
        ${column((e) => e.country ?? null)}::text[], ${column((e) => e.threats ?? null)}::text[],
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
    method: r.method, path: r.path, status: r.status, durationMs: r.duration_ms, country: r.country, threats: r.threats, hmac: r.hmac,
  }));
}

interface LogRow {
  id: string; time: Date; api_key_id: string | null; account_id: string | null; ip: string | null;
  method: string; path: string; status: number; duration_ms: number; country: string | null; threats: string | null;
  hmac: string | null;
}

/** REQUEST_LOGS_TTL: deletes rows older than `ttlMs`; returns how many. */
export async function deleteOldRequestLogs(q: Queryable, ttlMs: number, now = Date.now()): Promise<number> {
  if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new Error('ttlMs must be a non-negative number');
  const rows = await q`delete from request_logs where time < ${new Date(now - ttlMs)} returning 1`;
  return rows.length;
}
