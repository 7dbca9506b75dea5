// The embedded database: PGlite served on a Unix socket (and optionally loopback TCP) to many
// `postgres` pools at once, its lock, its files, its address rules.
import assert from 'node:assert/strict';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import postgres from 'postgres';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { openDatabase } from '../../src/db/client.js';
import { assertSupportedEngine, parseEmbeddedDbAddr } from '../../src/db/engines.js';
import { migrate } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { createApiKey, loadApiKey } from '../../src/keys/api-keys.js';
import { embeddedSocketPath, startEmbeddedDatabase } from '../../src/primary/embedded-db.js';
import { freshPgliteDataDir, testKeySecrets } from '../helpers/db.js';


test('many pools at once: parameters, errors and transactions never cross between connections', async () => {
  const dir = await freshPgliteDataDir();
  const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
  const pools = [1, 2, 3, 4].map(() => openDatabase({ socketPath: embedded.socketPath, maxConnections: 4 }));
  try {
    const sql = pools[0]!.sql;
    await sql`create table t (id int primary key, n int not null default 0)`;
    await sql`insert into t values (1, 0)`;
    let mismatches = 0;
    const tasks: Promise<void>[] = [];
    pools.forEach((pool, p) => {
      for (let k = 0; k < 6; k++) {
        tasks.push((async () => {
          for (let i = 0; i < 8; i++) {
            const v = p * 10_000 + k * 100 + i;
            if (i % 4 === 0) {
              await assert.rejects(pool.sql`insert into t (id) values (1)`, { code: '23505' });
            } else if (i % 4 === 1) {
              await pool.sql.begin(async (tx) => {
                await tx`update t set n = n + 1 where id = 1`;
                await tx`select ${v}::int`;
                await tx`update t set n = n + 1 where id = 1`;
              });
            } else if (i % 4 === 2) {
              await assert.rejects(pool.sql.begin(async (tx) => {
                await tx`update t set n = n + 1000 where id = 1`;
                await tx`select 1 / ${0}::int`;
              }), { code: '22012' });
            } else {
              const [r] = await pool.sql`select ${v}::int as v, ${`s${v}`}::text as s`;
              if (r!.v !== v || r!.s !== `s${v}`) mismatches++;
            }
          }
        })());
      }
    });
    await Promise.all(tasks);
    assert.equal(mismatches, 0);
    const [{ n }] = await sql`select n from t where id = 1`;
    // 4 pools × 6 tasks × 2 committed transactions (i = 1, 5) × 2 increments; rolled-back ones add nothing.
    assert.equal(n, 4 * 6 * 2 * 2);
  } finally {
    for (const p of pools) await p.close(1);
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('socket 0600 in a 0700 directory; data survives close and reopen; the lock keeps a second opener out', async () => {
  const dir = await freshPgliteDataDir();
  const secrets = testKeySecrets();
  let embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
  try {
    assert.equal(embedded.socketPath, embeddedSocketPath(dir));
    assert.equal(statSync(embedded.socketPath).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'run')).mode & 0o777, 0o700);
    await assert.rejects(startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' }), /in use/);

    let db = openDatabase({ socketPath: embedded.socketPath });
    await migrate(db.sql);
    const account = await ensureDefaultAccount(db.sql, 'Default Account');
    const { key, secret } = await createApiKey(db.sql, secrets, { accountId: account.id, hostnames: ['keep.example'] }, 'test');
    await db.close();
    await embedded.close();

    embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
    db = openDatabase({ socketPath: embedded.socketPath });
    assert.deepEqual(await migrate(db.sql), { applied: [], version: MIGRATIONS.at(-1)!.id });
    const loaded = await loadApiKey(db.sql, secrets, key.id);
    assert.equal(loaded?.secret, secret);
    assert.deepEqual(loaded?.hostnames, ['keep.example']);
    await db.close();
  } finally {
    await embedded.close();
  }
  // A lock left by a process that is gone is taken over.
  writeFileSync(join(dir, 'db', 'palisade.lock'), '999999999\n');
  const again = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
  await again.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a client that dies inside a transaction is rolled back and frees the database for the others', async () => {
  const dir = await freshPgliteDataDir();
  const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
  const a = openDatabase({ socketPath: embedded.socketPath, maxConnections: 1 });
  const b = openDatabase({ socketPath: embedded.socketPath, maxConnections: 1 });
  try {
    await a.sql`create table t (n int)`;
    await a.sql`insert into t values (1)`;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => { entered = resolve; });
    const stuck = a.sql.begin(async (tx) => {
      await tx`update t set n = 2`;
      entered();
      await new Promise(() => {});
    }).catch((err: Error) => err);
    await inside;
    // b waits while a holds the transaction; a's connection is then cut.
    const read = b.sql`select n from t`;
    await a.close(0);
    const [row] = await read;
    assert.equal(row!.n, 1);
    assert.ok((await stuck) instanceof Error);
  } finally {
    await b.close(1);
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an idle transaction holder is cut after ownerIdleTimeoutMs', async () => {
  const dir = await freshPgliteDataDir();
  const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade', ownerIdleTimeoutMs: 300 });
  const a = openDatabase({ socketPath: embedded.socketPath, maxConnections: 1 });
  const b = openDatabase({ socketPath: embedded.socketPath, maxConnections: 1 });
  try {
    await a.sql`create table t (n int)`;
    await a.sql`insert into t values (1)`;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => { entered = resolve; });
    // The transaction body never finishes: the server cuts the connection once it idles 300 ms.
    void a.sql.begin(async (tx) => {
      await tx`update t set n = 5`;
      entered();
      await new Promise(() => {});
    }).catch(() => undefined);
    await inside;
    const [row] = await b.sql`select n from t`;
    assert.equal(row!.n, 1);
    const [again] = await a.sql`select n from t`;
    assert.equal(again!.n, 1);
  } finally {
    await a.close(0);
    await b.close(1);
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('connections beyond maxConnections are refused with SQLSTATE 53300; garbage closes only its connection', async () => {
  const dir = await freshPgliteDataDir();
  const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade', maxConnections: 2 });
  const pool = openDatabase({ socketPath: embedded.socketPath, maxConnections: 2, minConnections: 2 });
  const extra = openDatabase({ socketPath: embedded.socketPath, maxConnections: 1 });
  try {
    // ready() opens minConnections connections, which stay open.
    await pool.ready();
    await assert.rejects(extra.sql`select 1`, { code: '53300' });
    await pool.close(1);
    for (const garbage of [Buffer.from('GET / HTTP/1.1\r\n\r\n'), Buffer.from([0, 0, 0, 8, 1, 2, 3, 4]), Buffer.alloc(64, 0xff)]) {
      const closed = await new Promise<boolean>((resolve) => {
        const s = connect(embedded.socketPath, () => s.write(garbage));
        s.resume();
        s.on('close', () => resolve(true));
        s.on('error', () => undefined);
        s.setTimeout(5000, () => { s.destroy(); resolve(false); });
      });
      assert.equal(closed, true);
    }
    const [{ v }] = await extra.sql`select 42 as v`;
    assert.equal(v, 42);
  } finally {
    await extra.close(1);
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('EMBEDDED_DB_DATABASE_ADDR: loopback only (no authentication); served over TCP when given', async () => {
  for (const bad of ['0.0.0.0:4080', ':::4080', '[::]:4080', '10.0.0.1:5432', 'db.example.com:5432', '192.168.1.1:1']) {
    assert.throws(() => parseEmbeddedDbAddr(bad), /no authentication/, bad);
  }
  assert.throws(() => parseEmbeddedDbAddr('localhost'), /host:port/);
  assert.throws(() => parseEmbeddedDbAddr('127.0.0.1:99999'), /port out of range/);
  assert.deepEqual(parseEmbeddedDbAddr('127.0.0.1:4080'), { host: '127.0.0.1', port: 4080 });
  assert.deepEqual(parseEmbeddedDbAddr('127.8.9.10:1'), { host: '127.8.9.10', port: 1 });
  assert.deepEqual(parseEmbeddedDbAddr('[::1]:4080'), { host: '::1', port: 4080 });
  assert.deepEqual(parseEmbeddedDbAddr('LOCALHOST:5'), { host: 'localhost', port: 5 });

  const dir = await freshPgliteDataDir();
  await assert.rejects(startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade', addr: '0.0.0.0:0' }), /no authentication/);
  const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade', addr: '127.0.0.1:0' });
  const sql = postgres({ host: '127.0.0.1', port: embedded.tcp!.port, user: 'postgres', database: 'postgres', prepare: false, max: 1 });
  try {
    assert.ok(embedded.tcp!.port > 0);
    const [{ v }] = await sql`select ${'over tcp'}::text as v`;
    assert.equal(v, 'over tcp');
  } finally {
    await sql.end({ timeout: 1 });
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('engines without a driver fail start-up naming the variable and the supported engines', () => {
  for (const name of ['MSSQL_URL', 'ORACLE_URL', 'TURBOLITE_URL']) {
    assert.throws(() => assertSupportedEngine({ [name]: 'x://host/db' }),
      { message: new RegExp(`^${name} is not supported \\(no driver in this build\\); supported: POSTGRES_URL \\(PostgreSQL\\), MYSQL_URL \\(MySQL\\), MARIADB_URL \\(MariaDB\\), LIBSQL_URL`) });
  }
  assert.throws(() => assertSupportedEngine({ POSTGRES_URL: 'postgres://x', MARIADB_URL: 'mysql://y' }), /^Error: POSTGRES_URL and MARIADB_URL are all set: set one database/);
  assert.throws(() => assertSupportedEngine({ LIBSQL_URL: 'libsql://db.example' }), /LIBSQL_URL must be a file: URL/);
  for (const ok of [{ POSTGRES_URL: 'postgres://x', MYSQL_URL: '', MARIADB_URL: null }, { MYSQL_URL: 'mysql://x' }, { MARIADB_URL: 'mysql://x' }, { LIBSQL_URL: 'file:/tmp/x.db' }, {}]) {
    assert.doesNotThrow(() => assertSupportedEngine(ok));
  }
});
