// Applies src/db/migrations under the database's migration lock, so nodes starting together
// against one server apply each migration exactly once: the second waits for the lock, then sees
// the first one's rows in schema_migrations. On PostgreSQL (a transaction-scoped advisory lock;
// the embedded database shares one session among all clients) and SQLite (a write transaction)
// the whole run is one transaction: a failing migration leaves nothing half-applied. MySQL commits
// DDL as it goes: each migration is recorded right after its statements ran.
import type { Queryable, Sql } from './client.js';
import { MIGRATIONS, statements, type Migration } from './migrations/index.js';

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
  return sql.exclusive(async (tx: Queryable) => {
    const t = tx.dialect.ddl;
    await tx.unsafe(`
      create table if not exists schema_migrations (
        id integer primary key,
        name ${t.str(200)} not null,
        applied_at ${t.timestamp} not null default ${t.now}
      )${t.table}`);
    const done = new Set((await tx<{ id: number | string }[]>`select id from schema_migrations`).map((r) => Number(r.id)));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      for (const statement of statements(m.ddl(t))) await tx.unsafe(statement);
      await m.data?.(tx);
      await tx`insert into schema_migrations (id, name) values (${m.id}, ${m.name})`;
      applied.push(m.id);
    }
    const known = [...done, ...applied];
    return { applied, version: known.length === 0 ? 0 : Math.max(...known) };
  });
}
