// Applies src/db/migrations in one transaction under a transaction-scoped advisory lock, so nodes
// starting together against one server apply each migration exactly once: the second waits for
// the lock, then sees the first one's rows in schema_migrations. Transaction-scoped, not session,
// because the embedded database shares one session among all clients (src/db/pglite-server.ts).
// PostgreSQL DDL is transactional: a failing migration leaves nothing half-applied.
import type { Sql } from './client.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/** First key of the advisory lock: 'PALI' as int32. The second is the schema's hash. */
const LOCK_CLASS = 0x50414c49;

export interface MigrateResult {
  /** Ids applied by this call (empty when the database was up to date). */
  readonly applied: readonly number[];
  /** Latest id now in the database. */
  readonly version: number;
}

export async function migrate(sql: Sql, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrateResult> {
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.id <= migrations[i - 1]!.id) throw new Error('migrations must be in increasing id order');
  }
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(coalesce(current_schema(), ''))::int)`;
    await tx`
      create table if not exists schema_migrations (
        id integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`;
    const done = new Set((await tx<{ id: number }[]>`select id from schema_migrations`).map((r) => r.id));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await tx.unsafe(m.sql);
      await tx`insert into schema_migrations (id, name) values (${m.id}, ${m.name})`;
      applied.push(m.id);
    }
    const known = [...done, ...applied];
    return { applied, version: known.length === 0 ? 0 : Math.max(...known) };
  });
}
