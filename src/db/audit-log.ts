// audit_log: every write made through the admin domain (src/admin/), by the console, the admin API or
// the CLI: who (admin:<user>, cli:<os user>), what (action, target, detail; never a secret), when,
// and from which IP.
import type { Queryable } from './client.js';
import { fragment, join, json, raw, toDate, type Fragment } from './dialect.js';

export interface AuditEntry {
  readonly actor: string;
  readonly ip: string | null;
  readonly action: string;
  readonly target: string | null;
  readonly accountId: string | null;
  readonly detail?: Readonly<Record<string, unknown>>;
}

export interface AuditRecord extends AuditEntry {
  readonly id: string;
  readonly time: Date;
  readonly detail: Readonly<Record<string, unknown>>;
}

interface Row { id: string | number; time: unknown; actor: string; ip: string | null; action: string; target: string | null; account_id: string | null; detail: Record<string, unknown> | string }

export async function insertAudit(q: Queryable, e: AuditEntry): Promise<void> {
  await q`
    insert into audit_log (actor, ip, action, target, account_id, detail)
    values (${e.actor.slice(0, 200)}, ${e.ip}, ${e.action}, ${e.target}, ${e.accountId}, ${json(e.detail ?? {})})`;
}

export interface AuditQuery {
  /** Only this account's entries. */
  readonly accountId?: string;
  /** Entries with an id below this one (paging, newest first). */
  readonly before?: string;
  readonly limit?: number;
}

/** Newest first. */
export async function listAudit(q: Queryable, query: AuditQuery = {}): Promise<AuditRecord[]> {
  const limit = Math.min(Math.max(query.limit ?? 100, 1), 1000);
  const where: Fragment[] = [raw('1 = 1')];
  if (query.accountId !== undefined) where.push(fragment`account_id = ${query.accountId}`);
  if (query.before !== undefined) where.push(fragment`id < ${Number(query.before)}`);
  const rows = await q<Row[]>`
    select id, time, actor, ip, action, target, account_id, detail from audit_log
    where ${join(where, ' and ')} order by id desc limit ${limit}`;
  return rows.map((r) => Object.freeze({
    id: String(r.id), time: toDate(r.time), actor: r.actor, ip: r.ip, action: r.action, target: r.target, accountId: r.account_id,
    // JSON comes back parsed from PostgreSQL, as text from the other engines.
    detail: (typeof r.detail === 'string' ? JSON.parse(r.detail) : r.detail) as Record<string, unknown>,
  }));
}
