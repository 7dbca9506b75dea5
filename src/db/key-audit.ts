// key_audit: who created, revoked, updated or rotated which API key, and when.
import type { Queryable } from './client.js';
import { json, toDate, toJson } from './dialect.js';

export type KeyAuditAction = 'create' | 'revoke' | 'update' | 'rotate';

export interface KeyAuditEntry {
  readonly apiKeyId: string;
  readonly action: KeyAuditAction;
  /** Who: `cli:<os user>`, `api:generate`, `admin:<user>`, … */
  readonly actor: string;
  /** What changed (never a secret). */
  readonly detail?: Readonly<Record<string, unknown>>;
}

export interface KeyAuditRecord extends KeyAuditEntry {
  readonly time: Date;
  readonly detail: Readonly<Record<string, unknown>>;
}

export async function insertKeyAudit(q: Queryable, entry: KeyAuditEntry): Promise<void> {
  await q`
    insert into key_audit (api_key_id, action, actor, detail)
    values (${entry.apiKeyId}, ${entry.action}, ${entry.actor.slice(0, 200)}, ${json(entry.detail ?? {})})`;
}

export async function listKeyAudit(q: Queryable, apiKeyId: string): Promise<KeyAuditRecord[]> {
  const rows = await q<{ time: unknown; api_key_id: string; action: KeyAuditAction; actor: string; detail: unknown }[]>`
    select time, api_key_id, action, actor, detail from key_audit where api_key_id = ${apiKeyId} order by id`;
  return rows.map((r) => Object.freeze({ time: toDate(r.time), apiKeyId: r.api_key_id, action: r.action, actor: r.actor, detail: toJson<Record<string, unknown>>(r.detail) }));
}
