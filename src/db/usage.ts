// Usage counters per API key and month (requests, GOOD/NEUTRAL/BAD, referrers by origin) and the
// batch writer the usage buffer (src/usage/usage-buffer.ts) flushes through. Counters are upserted
// as increments, so any number of processes can write the same rows; each batch carries an id
// recorded in usage_flushes in the same transaction, so retrying a batch whose commit was not
// acknowledged cannot count it twice.
import type { Queryable, Sql } from './client.js';
import { touchApiKeys } from './api-keys.js';
import { fragment, raw, toCount } from './dialect.js';
import { deleteOlderThan, insertRequestLogs, type RequestLogEntry } from './request-logs.js';

export interface UsageCounterRow {
  readonly apiKeyId: string;
  readonly accountId: string;
  /** `YYYY-MM` in the service's time zone. */
  readonly month: string;
  readonly requests: number;
  readonly good: number;
  readonly neutral: number;
  readonly bad: number;
}

export interface ReferrerRow {
  readonly apiKeyId: string;
  readonly month: string;
  /** `https://example.com` (scheme, host, port). */
  readonly origin: string;
  readonly requests: number;
}

export interface UsageBatch {
  /** Unique per batch; a retry of the same batch keeps its id. */
  readonly id: string;
  readonly counters: readonly UsageCounterRow[];
  readonly referrers: readonly ReferrerRow[];
  readonly logs: readonly RequestLogEntry[];
  /** Latest use per key (api_keys.last_used_at), best effort. */
  readonly lastUsed: readonly { readonly apiKeyId: string; readonly at: Date }[];
}

export interface WriteUsageOptions {
  /** EMBEDDED_DB_HMAC_SECRET: signs each request-log row. Default none. */
  readonly requestLogHmacSecret?: string | null;
  /** The node writing (NODE_NAME, else NODE_ID): recorded in each request-log row. Default none. */
  readonly node?: string | null;
}

/** Writes one batch atomically. Resolves false when this batch id was already applied. */
export async function writeUsageBatch(sql: Sql, batch: UsageBatch, options: WriteUsageOptions = {}): Promise<boolean> {
  const applied = await sql.begin(async (tx) => {
    let fresh = 0;
    for (const statement of tx.dialect.insertRows('usage_flushes', { id: 'text', flushed_at: 'timestamp' }, [[batch.id, new Date()]], { ignore: true })) {
      fresh += (await tx.run(statement)).count;
    }
    if (fresh === 0) return false;
    // Rows in key order: concurrent writers then take row locks in the same order (no deadlock).
    const counters = [...batch.counters].sort((a, b) => compare(a.apiKeyId, b.apiKeyId) || compare(a.month, b.month));
    if (counters.length > 0) {
      const rows = counters.map((c) => [c.apiKeyId, c.month, c.accountId, c.requests, c.good, c.neutral, c.bad]);
      const columns = { api_key_id: 'text', month: 'text', account_id: 'text', requests: 'bigint', good: 'bigint', neutral: 'bigint', bad: 'bigint' } as const;
      const upsert = { keys: ['api_key_id', 'month'], add: ['requests', 'good', 'neutral', 'bad'] };
      for (const statement of tx.dialect.insertRows('usage_monthly', columns, rows, upsert)) await tx.run(statement);
    }
    const referrers = [...batch.referrers].sort((a, b) =>
      compare(a.apiKeyId, b.apiKeyId) || compare(a.month, b.month) || compare(a.origin, b.origin));
    if (referrers.length > 0) {
      const rows = referrers.map((r) => [r.apiKeyId, r.month, r.origin, r.requests]);
      const columns = { api_key_id: 'text', month: 'text', origin: 'text', requests: 'bigint' } as const;
      const upsert = { keys: ['api_key_id', 'month', 'origin'], add: ['requests'] };
      for (const statement of tx.dialect.insertRows('usage_referrers', columns, rows, upsert)) await tx.run(statement);
    }
    const node = options.node ?? null;
    const logs = node === null ? batch.logs : batch.logs.map((l) => (l.node == null ? { ...l, node } : l));
    await insertRequestLogs(tx, logs, options.requestLogHmacSecret ?? null);
    return true;
  });
  if (applied && batch.lastUsed.length > 0) {
    // Outside the transaction: a lost last_used_at update must not hold back the counters.
    await touchApiKeys(sql, batch.lastUsed).catch(() => undefined);
  }
  return applied;
}

export interface KeyUsage {
  readonly requests: number;
  /** Decimal strings: bigint counters as the spec's usage result types them. */
  readonly classifications: { readonly BAD: string; readonly GOOD: string; readonly NEUTRAL: string };
  readonly referrers: Readonly<Record<string, number>>;
}

/** Usage of one key in `month` (zeros when none). */
export async function keyUsage(q: Queryable, apiKeyId: string, month: string): Promise<KeyUsage> {
  const [row] = await q<{ requests: unknown; good: unknown; neutral: unknown; bad: unknown }[]>`
    select requests, good, neutral, bad from usage_monthly where api_key_id = ${apiKeyId} and month = ${month}`;
  const refs = await q<{ origin: string; requests: unknown }[]>`
    select origin, requests from usage_referrers where api_key_id = ${apiKeyId} and month = ${month}
    order by requests desc, origin limit 1000`;
  const referrers: Record<string, number> = {};
  for (const r of refs) referrers[r.origin] = Number(r.requests);
  return {
    requests: Number(row?.requests ?? 0),
    classifications: { BAD: toCount(row?.bad), GOOD: toCount(row?.good), NEUTRAL: toCount(row?.neutral) },
    referrers,
  };
}

/** Requests of every key of `accountId` in `month`. */
export async function accountRequests(q: Queryable, accountId: string, month: string): Promise<number> {
  const [row] = await q<{ n: unknown }[]>`
    select sum(requests) as n from usage_monthly where account_id = ${accountId} and month = ${month}`;
  return Number(row?.n ?? 0);
}

export interface MonthSummary {
  readonly total: { readonly requests: number; readonly good: number; readonly neutral: number; readonly bad: number };
  /** Per key, most requests first (at most 1000 keys). */
  readonly keys: readonly { readonly apiKey: string; readonly requests: number; readonly good: number; readonly neutral: number; readonly bad: number }[];
  /** The 20 origins with most requests. */
  readonly referrers: readonly { readonly origin: string; readonly requests: number }[];
}

/** The month's counters of every key of `accountId` (undefined: of every account), with the top referrers. */
export async function monthSummary(q: Queryable, month: string, accountId?: string): Promise<MonthSummary> {
  const ofAccount = accountId === undefined ? raw('') : fragment`and account_id = ${accountId}`;
  const ofAccountU = accountId === undefined ? raw('') : fragment`and u.account_id = ${accountId}`;
  const rows = await q<{ api_key_id: string; requests: unknown; good: unknown; neutral: unknown; bad: unknown }[]>`
    select api_key_id, requests, good, neutral, bad from usage_monthly
    where month = ${month} ${ofAccount} order by requests desc limit 1000`;
  const referrers = await q<{ origin: string; requests: unknown }[]>`
    select r.origin, sum(r.requests) as requests from usage_referrers r
      join usage_monthly u on u.api_key_id = r.api_key_id and u.month = r.month
    where r.month = ${month} ${ofAccountU}
    group by r.origin order by sum(r.requests) desc, r.origin limit 20`;
  const keys = rows.map((r) => ({ apiKey: r.api_key_id, requests: Number(r.requests), good: Number(r.good), neutral: Number(r.neutral), bad: Number(r.bad) }));
  const total = { requests: 0, good: 0, neutral: 0, bad: 0 };
  for (const k of keys) {
    total.requests += k.requests;
    total.good += k.good;
    total.neutral += k.neutral;
    total.bad += k.bad;
  }
  return { total, keys, referrers: referrers.map((r) => ({ origin: r.origin, requests: Number(r.requests) })) };
}

/** Forgets applied batch ids older than `ageMs` (a retry comes within seconds, not days). */
export function pruneUsageFlushes(q: Queryable, ageMs: number, now = Date.now()): Promise<number> {
  return deleteOlderThan(q, 'usage_flushes', 'flushed_at', ageMs, now);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
