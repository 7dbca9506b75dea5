// Snapshots on every engine: take one, wipe every row, restore, and find every account, key, usage
// row, referrer, request log (HMACs still verifying), audit entry, training example, submission and
// plan as they were; the same snapshot restored into another engine; `npm run cli -- snapshot` and
// `restore FILE`; the catalogue covers every table and column the migrations create.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, test } from 'node:test';
import { createAccount, ensureDefaultAccount, listAccounts } from '../../src/db/accounts.js';
import { listApiKeys } from '../../src/db/api-keys.js';
import type { Sql } from '../../src/db/client.js';
import { listKeyAudit } from '../../src/db/key-audit.js';
import { listPlans, setPlan } from '../../src/db/plans.js';
import { listRequestLogs, verifyRequestLog } from '../../src/db/request-logs.js';
import { scheduledSnapshot, snapshotFile, snapshotProblems } from '../../src/db/snapshot-files.js';
import { restoreSnapshot, SNAPSHOT_EXCLUDED, SNAPSHOT_TABLES, writeSnapshot } from '../../src/db/snapshot.js';
import { insertSpamSubmissions, listSpamSubmissions } from '../../src/db/spam-submissions.js';
import { addTrainingExample, listTrainingData } from '../../src/db/training-data.js';
import { accountRequests, keyUsage, writeUsageBatch } from '../../src/db/usage.js';
import { createApiKey, revokeApiKey } from '../../src/keys/api-keys.js';
import { runCli } from '../helpers/cli.js';
import { DB_KINDS, dbAvailability, openTestDatabase, testKeySecrets } from '../helpers/db.js';

const available = await dbAvailability();
const secrets = testKeySecrets();
const HMAC = 'snapshot-test-hmac-secret-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'pal-snap-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function populate(sql: Sql): Promise<void> {
  const dflt = await ensureDefaultAccount(sql, 'Default Account');
  const other = await createAccount(sql, 'Other "quoted" \\ account');
  await setPlan(sql, 'gold', 123_456_789_012);
  const keys: { id: string; accountId: string }[] = [];
  for (const [i, accountId] of [dflt.id, dflt.id, other.id].entries()) {
    keys.push((await createApiKey(sql, secrets, {
      accountId, hostnames: [`site${i}.example`, '*.example.org'], plan: i === 2 ? 'gold' : 'free', name: `key ${i} ✓`,
      ...(i === 1 ? { challengePolicy: { algorithm: 'SHA-256', cost: 5000 }, rateLimit: '30/1m' } : {}),
    }, 'test')).key);
  }
  await createApiKey(sql, secrets, { hostnames: ['free.example'], kind: 'free' }, 'api:generate');
  await revokeApiKey(sql, keys[1]!.id, 'test');
  for (let b = 0; b < 3; b++) {
    await writeUsageBatch(sql, {
      id: `snap-batch-${b}`,
      counters: keys.map((k, i) => ({ apiKeyId: k.id, accountId: k.accountId, month: '2030-0' + (1 + b), requests: 10 + i + b, good: i, neutral: b, bad: 1 })),
      referrers: keys.map((k) => ({ apiKeyId: k.id, month: '2030-01', origin: `https://r${b}.example`, requests: 3 + b })),
      logs: Array.from({ length: 700 }, (_, i) => ({
        time: Date.parse('2030-01-02T00:00:00Z') + b * 1_000_000 + i, apiKeyId: keys[i % 3]!.id, accountId: keys[i % 3]!.accountId,
        ip: i % 2 ? '192.0.2.0' : null, method: 'GET', path: `/v1/challenge?i=${i}&q='"\\`, status: 200 + (i % 3), durationMs: i / 7,
        country: i % 5 ? 'DE' : null, threats: i % 11 ? null : 'proxy,tor',
      })),
      lastUsed: [{ apiKeyId: keys[0]!.id, at: new Date('2030-01-03T00:00:00.123Z') }],
    }, { requestLogHmacSecret: HMAC, node: b === 2 ? 'node "b"' : null });
  }
  await addTrainingExample(sql, { accountId: dflt.id, text: 'buy cheap pills\nnow', group: 'pharma', threshold: 0.65, weight: 2.5 });
  await insertSpamSubmissions(sql, [{
    accountId: other.id, apiKeyId: keys[2]!.id, source: 'classifier', score: 7.25, reasons: ['A', 'B'], text: null,
    textHash: 'cd'.repeat(32), fields: ['message'], emailDomain: 'x.example', ip: '198.51.100.0', country: 'FR', time: new Date('2030-01-05T01:02:03.456Z'),
  }]);
}

/** Everything a restore must bring back, read through the repositories. */
async function state(sql: Sql): Promise<unknown> {
  const keys = await listApiKeys(sql);
  const accounts = await listAccounts(sql);
  const logs = await listRequestLogs(sql, { limit: 10_000 });
  assert.ok(logs.every((l) => verifyRequestLog(l, HMAC)), 'every request log still verifies');
  assert.equal(logs.filter((l) => l.node === 'node "b"').length, 700);
  // The HMAC covers the node: another node's name no longer verifies.
  assert.equal(verifyRequestLog({ ...logs.find((l) => l.node !== null)!, node: 'node-c' }, HMAC), false);
  return {
    accounts, keys, plans: await listPlans(sql),
    usage: await Promise.all(keys.flatMap((k) => ['2030-01', '2030-02', '2030-03'].map((m) => keyUsage(sql, k.id, m)))),
    totals: await Promise.all(accounts.map((a) => accountRequests(sql, a.id, '2030-01'))),
    logs: logs.map(({ id: _id, ...rest }) => rest),
    audit: await Promise.all(keys.map((k) => listKeyAudit(sql, k.id))),
    training: await Promise.all(accounts.map((a) => listTrainingData(sql, a.id))),
    submissions: await listSpamSubmissions(sql, { limit: 1000 }),
  };
}

let pgliteFile: string | null = null;

for (const kind of DB_KINDS) {
  test(`${kind}: snapshot, wipe, restore: every key, usage row, log and audit entry is back`, { skip: available[kind] ? false : `${kind} unreachable` }, async () => {
    const t = (await openTestDatabase(kind))!;
    try {
      const sql = t.db.sql;
      await populate(sql);
      const before = await state(sql);
      const file = join(dir, `${kind}.jsonl.gz`);
      const taken = await writeSnapshot(sql, file);
      assert.equal(taken.rows.request_logs, 2100);
      assert.equal(taken.rows.api_keys, 4);
      if (kind === 'pglite') pgliteFile = file;
      // Wipe: every row of every table goes.
      for (const table of [...SNAPSHOT_TABLES].reverse()) await sql.unsafe(`delete from "${table.name}"`);
      assert.equal((await listApiKeys(sql)).length, 0);
      const restored = await restoreSnapshot(sql, file);
      assert.deepEqual(restored.rows, taken.rows);
      assert.deepEqual(await state(sql), before);
      // Restoring again replaces rather than duplicates.
      await restoreSnapshot(sql, file);
      assert.deepEqual(await state(sql), before);
      // The same snapshot into another engine (libSQL; PGlite's into each of the others).
      if (kind !== 'libsql' || pgliteFile !== null) {
        const other = (await openTestDatabase('libsql'))!;
        try {
          await restoreSnapshot(other.db.sql, kind === 'libsql' ? pgliteFile! : file);
          const fromPglite = kind === 'libsql';
          if (!fromPglite) assert.deepEqual(await state(other.db.sql), before);
          else assert.equal((await listRequestLogs(other.db.sql, { limit: 10_000 })).length, 2100);
        } finally {
          await other.close();
        }
      }
      // New rows after a restore get fresh ids (the engine numbers restored serial rows).
      await revokeApiKey(sql, (await listApiKeys(sql))[0]!.id, 'after-restore');
    } finally {
      await t.close();
    }
  });
}

test('a damaged or foreign file, or a snapshot from a newer schema, is refused and changes nothing', async () => {
  const t = (await openTestDatabase('libsql'))!;
  try {
    await populate(t.db.sql);
    const before = await state(t.db.sql);
    const foreign = join(dir, 'foreign.gz');
    writeFileSync(foreign, gzipSync('{"hello":1}\n'));
    await assert.rejects(restoreSnapshot(t.db.sql, foreign), /is not a Palisade database snapshot/);
    const newer = join(dir, 'newer.gz');
    writeFileSync(newer, gzipSync(`${JSON.stringify({ palisade: 'snapshot', format: 1, kind: 'main', version: 999, engine: 'x', createdAt: '' })}\n`));
    await assert.rejects(restoreSnapshot(t.db.sql, newer), /schema version 999; this build knows up to/);
    const truncated = join(dir, 'bad-row.gz');
    writeFileSync(truncated, gzipSync([
      JSON.stringify({ palisade: 'snapshot', format: 1, kind: 'main', version: 1, engine: 'x', createdAt: '' }),
      JSON.stringify({ table: 'plans', columns: ['name', 'request_limit', 'created_at', 'updated_at'] }),
      JSON.stringify(['NOT A VALID NAME', 1, '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z']),
    ].join('\n')));
    await assert.rejects(restoreSnapshot(t.db.sql, truncated));
    assert.deepEqual(await state(t.db.sql), before, 'a failed restore rolls back entirely');
    const text = join(dir, 'not-gzip');
    writeFileSync(text, 'plain text');
    await assert.rejects(restoreSnapshot(t.db.sql, text));
    assert.deepEqual(await state(t.db.sql), before);
  } finally {
    await t.close();
  }
});

test('the catalogue covers every table and column the migrations create', { skip: available.postgres ? false : 'postgres unreachable' }, async () => {
  const t = (await openTestDatabase('postgres'))!;
  try {
    const rows = await t.db.sql<{ table_name: string; column_name: string }[]>`
      select table_name, column_name from information_schema.columns where table_schema = current_schema() order by table_name, column_name`;
    const actual = new Map<string, string[]>();
    for (const r of rows) actual.set(r.table_name, [...(actual.get(r.table_name) ?? []), r.column_name]);
    for (const excluded of SNAPSHOT_EXCLUDED) actual.delete(excluded);
    assert.deepEqual(new Map(SNAPSHOT_TABLES.map((s) => [s.name, Object.keys(s.columns).sort()])), new Map([...actual].map(([k, v]) => [k, v.sort()])));
  } finally {
    await t.close();
  }
});

test('a scheduled snapshot is written by one node: the others find the lease taken', async () => {
  const t = (await openTestDatabase('libsql'))!;
  try {
    await populate(t.db.sql);
    const at = Date.parse('2031-05-06T07:08:09Z');
    const file = (d: Date) => snapshotFile(dir, 'backups', 'sched/db:${iso_date()}', d);
    const runs = await Promise.all(['a', 'b', 'c'].map((holder) => scheduledSnapshot({ sql: t.db.sql, schedule: '* * * * *', holder, file, now: () => at })));
    const written = runs.filter((r) => r !== null);
    assert.equal(written.length, 1);
    assert.equal(written[0]!.file, join(dir, 'backups', 'sched', 'db:2031-05-06T07:08:09Z.jsonl.gz'));
    const other = (await openTestDatabase('libsql'))!;
    try {
      await restoreSnapshot(other.db.sql, written[0]!.file);
      assert.equal((await listApiKeys(other.db.sql)).length, 4);
    } finally {
      await other.close();
    }
    // Five minutes later the lease is free again.
    assert.notEqual(await scheduledSnapshot({ sql: t.db.sql, schedule: '* * * * *', holder: 'b', file, now: () => at + 5 * 60_000 + 1 }), null);
  } finally {
    await t.close();
  }
});

test('file names: ${iso_date()} expanded, kept below the directory; S3 and Azure refused clearly', () => {
  assert.equal(snapshotFile('/data', 'backups', 'palisade-backups/db:${iso_date()}', new Date('2026-11-27T16:30:05.123Z')),
    '/data/backups/palisade-backups/db:2026-11-27T16:30:05Z.jsonl.gz');
  assert.throws(() => snapshotFile('/data', 'backups', '../../etc/x', new Date()), /leaves SNAPSHOTS_STORAGE_LOCAL_DIR/);
  assert.deepEqual(snapshotProblems({ SNAPSHOTS_STORAGE_PROVIDER: 's3', SNAPSHOTS_DB_PREFIX: 'db' }),
    ['SNAPSHOTS_STORAGE_PROVIDER=s3 is not supported yet: only local (SNAPSHOTS_STORAGE_LOCAL_DIR) is implemented']);
  assert.deepEqual(snapshotProblems({ SNAPSHOTS_STORAGE_PROVIDER: 'azure', SNAPSHOTS_DB_PREFIX: '/abs/${iso_date()}' }), [
    'SNAPSHOTS_STORAGE_PROVIDER=azure is not supported yet: only local (SNAPSHOTS_STORAGE_LOCAL_DIR) is implemented',
    'SNAPSHOTS_DB_PREFIX must be a relative path below SNAPSHOTS_STORAGE_LOCAL_DIR',
  ]);
  assert.deepEqual(snapshotProblems({ SNAPSHOTS_STORAGE_PROVIDER: 'local', SNAPSHOTS_DB_PREFIX: 'x/${date}' }), ['SNAPSHOTS_DB_PREFIX: the only placeholder is ${iso_date()}']);
  assert.deepEqual(snapshotProblems({ SNAPSHOTS_STORAGE_PROVIDER: 'local', SNAPSHOTS_DB_PREFIX: 'palisade-backups/db:${iso_date()}' }), []);
});

test('npm run cli -- snapshot, then restore FILE into a wiped database (LIBSQL_URL)', async () => {
  const data = mkdtempSync(join(tmpdir(), 'pal-snap-cli-'));
  try {
    writeFileSync(join(data, 'secrets.json'), JSON.stringify({
      PALISADE_HMAC_SECRET: 'snap-cli-palisade-hmac-secret-0123456789', CODE_CHALLENGE_SECRET: 'snap-cli-code-challenge-secret-012345',
      JWT_SECRET: 'snap-cli-jwt-secret-0123456789-0123456789', HASHING_SALT: 'snap-cli-hashing-salt-0123456789', NODE_ID: '0123456789abcdef',
    }), { mode: 0o600 });
    const env = { DATA_DIR: data, LIBSQL_URL: `file:${join(data, 'p.db')}` };
    const created = await runCli(['keys', 'create', '--hostname', 'example.com', '--json'], env);
    assert.equal(created.code, 0, created.err);
    const key = JSON.parse(created.out) as { apiKey: string };
    const snap = await runCli(['snapshot', '--json'], env);
    assert.equal(snap.code, 0, snap.err);
    const taken = JSON.parse(snap.out) as { file: string; rows: Record<string, number> };
    assert.match(taken.file, new RegExp(`^${data}/backups/palisade-backups/db:\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\.jsonl\\.gz$`));
    assert.equal(taken.rows.api_keys, 1);
    rmSync(join(data, 'p.db'));
    rmSync(join(data, 'p.db-wal'), { force: true });
    rmSync(join(data, 'p.db-shm'), { force: true });
    const empty = await runCli(['keys', 'list', '--json'], env);
    assert.deepEqual(JSON.parse(empty.out), []);
    const restored = await runCli(['restore', taken.file, '--json'], env);
    assert.equal(restored.code, 0, restored.err);
    assert.equal((JSON.parse(restored.out) as { rows: Record<string, number> }).rows.api_keys, 1);
    const listed = JSON.parse((await runCli(['keys', 'list', '--json'], env)).out) as { id: string }[];
    assert.deepEqual(listed.map((k) => k.id), [key.apiKey]);
    const missing = await runCli(['restore', join(data, 'nope.gz')], env);
    assert.deepEqual([missing.code, missing.err.trim()], [1, `error: no such file: ${join(data, 'nope.gz')}`]);
    const usage = await runCli(['restore'], env);
    assert.equal(usage.code, 2);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
});
