// Durable data through the running cluster: usage counted exactly across workers and across a
// graceful restart, revoked keys refused within CACHE_DURATION_API_KEYS, request logs kept — on the
// embedded database, on a real PostgreSQL server, on MariaDB (MARIADB_URL) and on libSQL (LIBSQL_URL).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { revokeApiKey } from '../../src/keys/api-keys.js';
import { RawClient } from '../helpers/http-client.js';
import { MARIADB_URL, POSTGRES_URL, requireService } from '../helpers/services.js';
import { createTestKey, newDataDir, startService, withServiceDb, type Service, type TestKey } from '../helpers/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Usage { requests: { account: number; apiKey: number }; referrers: Record<string, number>; plan: { name: string } }

async function usage(svc: Service, key: TestKey): Promise<Usage> {
  const res = await fetch(`${svc.url}/usage`, { headers: { authorization: `Bearer ${key.secret}` } });
  assert.equal(res.status, 200);
  return (await res.json()) as Usage;
}

/** `n` challenge requests for `key` from 64 connections spread over the workers; all must be 200. */
async function challenges(svc: Service, key: TestKey, n: number): Promise<void> {
  const client = new RawClient(svc.port, 64);
  try {
    const statuses = await Promise.all(Array.from({ length: n }, () =>
      client.request('GET', `/v1/challenge?apiKey=${key.id}`, undefined, { origin: 'https://shop.example' }).then((r) => r.status)));
    assert.deepEqual([...new Set(statuses)], [200]);
  } finally {
    client.close();
  }
}

function suite(name: string, env: () => Promise<Record<string, string> | null>): void {
  describe(name, () => {
    test('10,000 concurrent requests across workers are counted exactly, and survive a SIGTERM restart', async (t) => {
      const e = await env();
      if (e === null) return t.skip(`${name} not reachable`);
      // Our own data directory: it must outlive the first service.
      const dataDir = await newDataDir(e);
      let svc = await startService({ env: { ...e, WORKERS: '2', CACHE_DURATION_API_KEYS: '1s', REQUEST_LOGS_MAX_RATE: '' }, dataDir });
      try {
        const key = await createTestKey(svc, { name: 'shop' });
        await challenges(svc, key, 10_000);
        // Written within a second; then exactly what was served.
        await sleep(1500);
        const u = await usage(svc, key);
        assert.equal(u.requests.apiKey, 10_000);
        assert.equal(u.requests.account >= 10_000, true);
        assert.equal(u.referrers['https://shop.example'], 10_000);

        // Requests right before a graceful stop are flushed by it.
        await challenges(svc, key, 500);
        assert.equal(await svc.stop('SIGTERM'), 0);
        svc = await startService({ env: { ...e, WORKERS: '2', REQUEST_LOGS_MAX_RATE: '' }, dataDir });
        const after = await usage(svc, key);
        assert.equal(after.requests.apiKey, 10_500);
        await sleep(1200);
        const logs = await withServiceDb(svc, (sql) => sql<{ n: number; ip: string }[]>`
          select count(*) as n, ip from request_logs where api_key_id = ${key.id} group by ip`);
        // One row per request: 10,500 challenges and both /usage calls; IPs anonymised.
        assert.deepEqual(logs.map((r) => ({ n: Number(r.n), ip: r.ip })), [{ n: 10_502, ip: '127.0.0.0' }]);
      } finally {
        await svc.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    test('a revoked key stops working within CACHE_DURATION_API_KEYS', async (t) => {
      const e = await env();
      if (e === null) return t.skip(`${name} not reachable`);
      const svc = await startService({ env: { ...e, WORKERS: '2', CACHE_DURATION_API_KEYS: '1s' } });
      try {
        const key = await createTestKey(svc);
        assert.equal((await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`)).status, 200);
        await withServiceDb(svc, (sql) => revokeApiKey(sql, key.id, 'test'));
        const revokedAt = Date.now();
        let refusedAfter = -1;
        while (Date.now() - revokedAt < 5000) {
          // Fresh connections, so both workers' caches are exercised.
          const res = await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`, { headers: { connection: 'close' } });
          if (res.status === 401) {
            assert.deepEqual(await res.json(), { error: 'API_KEY_INVALID', statusCode: 401 });
            refusedAfter = Date.now() - revokedAt;
            break;
          }
          await sleep(50);
        }
        assert.ok(refusedAfter >= 0 && refusedAfter <= 1500, `refused after ${refusedAfter} ms`);
        // Once a TTL has passed since the revocation, every worker refuses it.
        await sleep(Math.max(0, revokedAt + 1200 - Date.now()));
        for (let i = 0; i < 20; i++) {
          assert.equal((await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`, { headers: { connection: 'close' } })).status, 401);
        }
      } finally {
        await svc.stop();
      }
    });
  });
}

suite('embedded database', async () => ({}));

// A fresh database on the real server for this run, dropped afterwards.
const dbName = `palisade_test_${process.pid}_${randomBytes(3).toString('hex')}`;
let created = false;
suite('PostgreSQL', async () => {
  if (!(await requireService('postgres'))) return null;
  if (!created) {
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${dbName}`);
    await admin.end();
    created = true;
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${dbName}`;
  return { POSTGRES_URL: url.toString() };
});

let mariadbCreated = false;
suite('MariaDB', async () => {
  if (!(await requireService('mariadb'))) return null;
  if (!mariadbCreated) {
    const admin = await mysql.createConnection({ uri: MARIADB_URL });
    await admin.query(`create database ${dbName} character set utf8mb4 collate utf8mb4_bin`);
    await admin.end();
    mariadbCreated = true;
  }
  const url = new URL(MARIADB_URL);
  url.pathname = `/${dbName}`;
  return { MARIADB_URL: url.toString() };
});

const libsqlDir = mkdtempSync(join(tmpdir(), 'pal-libsql-cluster-'));
suite('libSQL', async () => ({ LIBSQL_URL: `file:${join(libsqlDir, 'palisade.db')}` }));

after(async () => {
  rmSync(libsqlDir, { recursive: true, force: true });
  if (mariadbCreated) {
    const admin = await mysql.createConnection({ uri: MARIADB_URL });
    await admin.query(`drop database if exists ${dbName}`);
    await admin.end();
  }
  if (!created) return;
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
});
