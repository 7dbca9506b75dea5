// Usage counted by several processes into one database (embedded PGlite through its socket, and
// PostgreSQL) adds up exactly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { listRequestLogs, verifyRequestLog } from '../../src/db/request-logs.js';
import { accountRequests, keyUsage } from '../../src/db/usage.js';
import { createApiKey } from '../../src/keys/api-keys.js';
import { createMonthClock } from '../../src/usage/month.js';
import { openTestDatabase, testKeySecrets, DB_KINDS, dbAvailability } from '../helpers/db.js';

const writer = fileURLToPath(new URL('../helpers/usage-writer.js', import.meta.url));
const available = await dbAvailability();

function run(job: unknown): Promise<{ ok: boolean; stats: { droppedLogs: number } }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d; });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`writer exited ${code}: ${out}`))));
  });
}

for (const kind of DB_KINDS) {
  test(`3 processes × 4 tasks × 1,000 increments on ${kind}: counts, classifications, referrers and logs exact`,
    { skip: available[kind] ? false : `${kind} unreachable` }, async () => {
      const t = (await openTestDatabase(kind))!;
      try {
        const secrets = testKeySecrets();
        const account = await ensureDefaultAccount(t.db.sql, 'Default Account');
        const keys = [];
        for (let i = 0; i < 2; i++) keys.push((await createApiKey(t.db.sql, secrets, { accountId: account.id }, 'test')).key);
        const job = { target: t.target, keys: keys.map((k) => ({ id: k.id, accountId: k.accountId })), perTask: 1000, tasks: 4 };
        const results = await Promise.all([run(job), run(job), run(job)]);
        assert.ok(results.every((r) => r.ok && r.stats.droppedLogs === 0));
        const month = createMonthClock('UTC')();
        // Task t gives key k the iterations of one parity, so classes[i % 4] hits two of the four:
        // over the 4 tasks each key gets 500 GOOD, 500 NEUTRAL, 500 BAD and 500 unclassified per process.
        for (const key of keys) {
          const usage = await keyUsage(t.db.sql, key.id, month);
          assert.equal(usage.requests, 6000);
          assert.deepEqual(usage.classifications, { BAD: '1500', GOOD: '1500', NEUTRAL: '1500' });
        }
        assert.equal(await accountRequests(t.db.sql, account.id, month), 12_000);
        const refs = await t.db.sql<{ n: unknown }[]>`select sum(requests) as n from usage_referrers`;
        assert.equal(Number(refs[0]!.n), 3 * 4 * 200);
        const [{ n }] = await t.db.sql`select count(*) as n from request_logs`;
        assert.equal(Number(n), 12_000);
        const sample = await listRequestLogs(t.db.sql, { limit: 50 });
        assert.ok(sample.every((r) => r.ip === '192.0.2.0' && verifyRequestLog(r, 'usage-writer-hmac-secret-0123456789')));
      } finally {
        await t.close();
      }
    });
}
