// Which engine a configuration opens, and its pool settings applied for real: <ENGINE>_MAX_CONNECTIONS
// bounds the connections a process opens, <ENGINE>_CONNECT_TIMEOUT bounds the wait for a server that
// accepts and never answers, POSTGRES_IDLE_TIMEOUT closes idle connections and
// POSTGRES_MIN_CONNECTIONS keeps that many open. Also the dialect's statement shapes, exactly.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { compile, openDatabase } from '../../src/db/client.js';
import { fragment, MYSQL, POSTGRES, SQLITE } from '../../src/db/dialect.js';
import { databaseOptions } from '../../src/services.js';
import { openTestDatabase } from '../helpers/db.js';
import { MARIADB_URL, POSTGRES_URL, requireService } from '../helpers/services.js';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const config = (env: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'pal-engines-'));
  dirs.push(dir);
  return loadConfig({ env: { DATA_DIR: dir, ...env }, persistSecrets: true, detectedCpus: 1 });
};

test('the configuration names the engine and its pool settings', () => {
  assert.deepEqual(databaseOptions(config({
    MARIADB_URL: 'mysql://u@db:3306/p', MARIADB_MAX_CONNECTIONS: '3', MARIADB_CONNECT_TIMEOUT: '1500', MYSQL_MAX_CONNECTIONS: '9',
  })), { mysqlUrl: 'mysql://u@db:3306/p', maxConnections: 3, connectTimeoutMs: 1500 });
  assert.deepEqual(databaseOptions(config({ MYSQL_URL: 'mysql://u@db/p', MYSQL_MAX_CONNECTIONS: '4', MYSQL_CONNECT_TIMEOUT: '700' })),
    { mysqlUrl: 'mysql://u@db/p', maxConnections: 4, connectTimeoutMs: 700 });
  assert.deepEqual(databaseOptions(config({ LIBSQL_URL: 'file:/srv/p.db', LIBSQL_MAX_CONNECTIONS: '2' })),
    { libsqlUrl: 'file:/srv/p.db', maxConnections: 2 });
  assert.deepEqual(databaseOptions(config({
    POSTGRES_URL: 'postgres://db/p', POSTGRES_MAX_CONNECTIONS: '5', POSTGRES_MIN_CONNECTIONS: '2', POSTGRES_IDLE_TIMEOUT: '0', POSTGRES_CONNECT_TIMEOUT: '900',
  })), { postgresUrl: 'postgres://db/p', maxConnections: 5, minConnections: 2, idleTimeoutMs: 0, connectTimeoutMs: 900 });
  const embedded = databaseOptions(config({ POSTGRES_MAX_CONNECTIONS: '6' }));
  assert.equal(embedded.maxConnections, 6);
  assert.match(embedded.socketPath!, /\.s\.PGSQL|sock/);
});

test('the dialects: placeholders, upserts, ignored duplicates and batched deletes as each engine takes them', () => {
  const cols = { k: 'text', n: 'bigint' } as const;
  const rows = [['a', 1], ['b', 2]];
  const upsert = { keys: ['k'], add: ['n'] };
  assert.deepEqual(POSTGRES.insertRows('t', cols, rows, upsert).map((f) => compile(POSTGRES, f)), [{
    text: 'insert into "t" ("k", "n") select * from unnest($1::text[], $2::bigint[]) on conflict ("k") do update set "n" = "t"."n" + excluded."n"',
    params: ['{"a","b"}', '{"1","2"}'],
  }]);
  assert.deepEqual(MYSQL.insertRows('t', cols, rows, upsert).map((f) => compile(MYSQL, f)), [{
    text: 'insert into "t" ("k", "n") values (?, ?), (?, ?) on duplicate key update "n" = "n" + values("n")', params: ['a', 1, 'b', 2],
  }]);
  assert.deepEqual(SQLITE.insertRows('t', cols, rows, upsert).map((f) => compile(SQLITE, f)), [{
    text: 'insert into "t" ("k", "n") values (?, ?), (?, ?) on conflict ("k") do update set "n" = "t"."n" + excluded."n"', params: ['a', 1, 'b', 2],
  }]);
  assert.equal(compile(MYSQL, MYSQL.insertRows('t', cols, rows, { ignore: true })[0]!).text, 'insert ignore into "t" ("k", "n") values (?, ?), (?, ?)');
  assert.equal(compile(SQLITE, SQLITE.insertRows('t', cols, rows, { ignore: true })[0]!).text, 'insert into "t" ("k", "n") values (?, ?), (?, ?) on conflict do nothing');
  // SQLite binds at most 32,766 parameters: 40,000 two-column rows go in three statements.
  assert.equal(SQLITE.insertRows('t', cols, Array.from({ length: 40_000 }, (_, i) => [`k${i}`, i])).length, 3);
  const cutoff = new Date('2024-01-01T00:00:00Z');
  assert.deepEqual(compile(MYSQL, MYSQL.deleteBatch('logs', 'id', fragment`time < ${cutoff}`, 100)),
    { text: 'delete from "logs" where time < ? limit 100', params: [cutoff] });
  assert.deepEqual(compile(POSTGRES, POSTGRES.deleteBatch('logs', 'id', fragment`time < ${cutoff}`, 100)),
    { text: 'delete from "logs" where "id" in (select "id" from "logs" where time < $1 limit 100)', params: [cutoff] });
  assert.deepEqual(compile(SQLITE, fragment`select ${cutoff}, ${true}`).params, ['2024-01-01T00:00:00.000Z', 1]);
  // Array literals quote every element; quotes and backslashes are escaped.
  assert.deepEqual(compile(POSTGRES, POSTGRES.insertRows('t', { k: 'text' }, [['a"b\\c'], [null]])[0]!).params, ['{"a\\"b\\\\c",NULL}']);
});

/** A TCP server that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; server: Server; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((s) => { sockets.push(s); s.on('error', () => undefined); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, server, sockets };
}

for (const engine of ['postgres', 'mariadb'] as const) {
  test(`${engine}: CONNECT_TIMEOUT bounds the wait for a server that never answers`, async () => {
    const silent = await silentServer();
    const url = engine === 'postgres' ? `postgres://u@127.0.0.1:${silent.port}/db` : `mysql://u@127.0.0.1:${silent.port}/db`;
    const db = openDatabase({ ...(engine === 'postgres' ? { postgresUrl: url } : { mysqlUrl: url }), connectTimeoutMs: 400, maxConnections: 1 });
    const started = Date.now();
    try {
      await assert.rejects(db.sql`select 1`);
      const took = Date.now() - started;
      assert.ok(took >= 350 && took < 3000, `gave up after ${took} ms`);
    } finally {
      await db.close(100).catch(() => undefined);
      for (const s of silent.sockets) s.destroy();
      silent.server.close();
    }
  });
}

const mariadbUp = await requireService('mariadb');
test('mariadb: MAX_CONNECTIONS bounds the connections one process opens', { skip: mariadbUp ? false : 'mariadb unreachable' }, async () => {
  const db = openDatabase({ mysqlUrl: MARIADB_URL, maxConnections: 2 });
  try {
    const ids = await Promise.all(Array.from({ length: 6 }, async () =>
      (await db.sql<{ id: unknown }[]>`select connection_id() as id, sleep(0.1) as s`)[0]!.id));
    assert.equal(new Set(ids.map(String)).size, 2);
  } finally {
    await db.close(1000);
  }
});

const postgresUp = await requireService('postgres');
test('postgres: MAX_CONNECTIONS bounds connections; IDLE_TIMEOUT closes idle ones; MIN_CONNECTIONS keeps them', { skip: postgresUp ? false : 'postgres unreachable' }, async () => {
  const pid = async (db: ReturnType<typeof openDatabase>) => String((await db.sql<{ p: unknown }[]>`select pg_backend_pid() as p`)[0]!.p);
  const bounded = openDatabase({ postgresUrl: POSTGRES_URL, maxConnections: 2 });
  const idle = openDatabase({ postgresUrl: POSTGRES_URL, maxConnections: 1, idleTimeoutMs: 150 });
  const kept = openDatabase({ postgresUrl: POSTGRES_URL, maxConnections: 1, minConnections: 1, idleTimeoutMs: 150 });
  try {
    const pids = await Promise.all(Array.from({ length: 6 }, async () =>
      String((await bounded.sql<{ p: unknown }[]>`select pg_backend_pid() as p, pg_sleep(0.1)`)[0]!.p)));
    assert.equal(new Set(pids).size, 2);
    const first = await pid(idle);
    await kept.ready();
    const keptFirst = await pid(kept);
    await new Promise((r) => setTimeout(r, 600));
    assert.notEqual(await pid(idle), first, 'the idle connection was closed and a new one opened');
    assert.equal(await pid(kept), keptFirst, 'with a minimum the connection stays');
  } finally {
    for (const d of [bounded, idle, kept]) await d.close(1000);
  }
});

test('libsql: a file: database; network URLs are refused before anything is opened', async () => {
  assert.throws(() => openDatabase({ libsqlUrl: 'libsql://user:secret@db.example' }), (err: Error) =>
    /^LIBSQL_URL must be a file: URL/.test(err.message) && !err.message.includes('secret'));
  const t = (await openTestDatabase('libsql'))!;
  try {
    assert.equal(t.db.kind, 'libsql');
    assert.ok(await t.db.ping());
    assert.ok((await t.tables()).includes('api_keys'));
  } finally {
    await t.close();
  }
});
