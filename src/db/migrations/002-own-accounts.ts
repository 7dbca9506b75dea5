// Migration 002: every generated (free) key in an account of its own. Before it, keys from
// POST /api_key/generate all joined the default account, so one holder could spend the plan of
// every other free key, read the account's totals in GET /usage and verify payloads issued to the
// operator's keys. A generated key is one whose id starts with ckey_ (only the generate route makes
// them; free_hostname does not tell, as an operator may give a hostname's hold to a standard key,
// and a released free key holds none). Each such key moves to a new account marked `generated`, named after
// the key; its usage counters follow it (request_logs keep the account they were written with:
// they are a record of what happened, and signed rows must not change). The key's id and secret
// stay as they were, so its holder notices nothing but a plan and totals of their own.
// The schema change is DDL; the move is portable statements run in the same migration (`data`).
import { randomBase62 } from '../../keys/secrets.js';
import { json, type Ddl } from '../dialect.js';
import type { Queryable } from '../client.js';

export const ddl = (t: Ddl) => `
ALTER TABLE accounts ADD COLUMN "generated" ${t.bool} NOT NULL DEFAULT false;

-- one free key per hostname across the service, now that each sits in its own account
CREATE UNIQUE INDEX api_keys_free_hostname ON api_keys (free_hostname);
`;

export async function data(q: Queryable): Promise<void> {
  const keys = await q<{ id: string; account_id: string; created_at: unknown }[]>`
    select id, account_id, created_at from api_keys where substr(id, 1, 5) = 'ckey_' order by id`;
  const now = new Date();
  for (const k of keys) {
    const to = `acc_${randomBase62(16)}`;
    await q`insert into accounts (id, name, "generated", created_at) values (${to}, ${`Free key ${k.id}`}, ${true}, ${k.created_at})`;
    await q`update api_keys set account_id = ${to}, updated_at = ${now} where id = ${k.id}`;
    await q`update usage_monthly set account_id = ${to} where api_key_id = ${k.id}`;
    await q`insert into key_audit (api_key_id, action, actor, detail) values (${k.id}, 'update', 'migration:002',
      ${json({ accountId: to, previousAccountId: k.account_id })})`;
  }
}
