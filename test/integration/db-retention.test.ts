// The retention job on every engine, with a fake clock: rows past REQUEST_LOGS_TTL and
// DELETE_SPAM_SUBMISSIONS_IN go, newer ones stay; deletes run in batches; two nodes at once run it
// once (a lease), the other node takes over when the holder's lease expires (a node that died).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { compile, type Sql } from '../../src/db/client.js';
import { acquireLease, leaseHolder, releaseLease } from '../../src/db/leases.js';
import { insertRequestLogs, listRequestLogs } from '../../src/db/request-logs.js';
import { insertSpamSubmissions, listSpamSubmissions } from '../../src/db/spam-submissions.js';
import { writeUsageBatch } from '../../src/db/usage.js';
import { createRetentionJob, RETENTION_LEASE } from '../../src/primary/retention.js';
import { DB_KINDS, dbAvailability, openTestDatabase, type TestDatabase } from '../helpers/db.js';

const available = await dbAvailability();
const HOUR = 3_600_000;
const INTERVAL = 15 * 60_000;

/** `sql` counting the DELETE statements it runs. */
function counting(sql: Sql): { sql: Sql; deletes: () => number } {
  let deletes = 0;
  const spy = Object.assign((strings: TemplateStringsArray, ...values: unknown[]) => sql(strings, ...values), {
    ...sql,
    run: (f: Parameters<Sql['run']>[0]) => {
      if (/^delete /.test(compile(sql.dialect, f).text)) deletes++;
      return sql.run(f);
    },
  }) as unknown as Sql;
  return { sql: spy, deletes: () => deletes };
}

for (const kind of DB_KINDS) {
  describe(`retention on ${kind}`, () => {
    let t: TestDatabase | null = null;
    let accountId = '';
    before(async () => {
      if (!available[kind]) return;
      t = await openTestDatabase(kind);
      accountId = (await ensureDefaultAccount(t!.db.sql, 'Default Account')).id;
    });
    after(async () => { await t?.close(); });
    const it = (name: string, fn: () => Promise<void>) => test(name, { skip: available[kind] ? false : `${kind} unreachable` }, fn);

    it('leases: one holder at a time; renewed by its holder; taken over once expired; released', async () => {
      const q = t!.db.sql;
      const at = Date.parse('2031-03-01T00:00:00Z');
      assert.equal(await acquireLease(q, 'job-x', 'a', 1000, at), true);
      assert.equal(await acquireLease(q, 'job-x', 'b', 1000, at + 999), false);
      assert.equal(await acquireLease(q, 'job-x', 'a', 1000, at + 500), true, 'the holder renews');
      assert.equal(await acquireLease(q, 'job-x', 'b', 1000, at + 1499), false, 'renewed until at + 1500');
      assert.equal(await acquireLease(q, 'job-x', 'b', 1000, at + 1501), true, 'expired: taken over');
      assert.deepEqual(await leaseHolder(q, 'job-x'), { holder: 'b', expiresAt: new Date(at + 2501) });
      await releaseLease(q, 'job-x', 'a', at + 1600);
      assert.equal((await leaseHolder(q, 'job-x'))!.holder, 'b', 'only the holder releases');
      await releaseLease(q, 'job-x', 'b', at + 1600);
      assert.equal(await acquireLease(q, 'job-x', 'a', 1000, at + 1601), true);
      // Ten contenders at the same instant: exactly one wins.
      const won = await Promise.all(Array.from({ length: 10 }, (_, i) => acquireLease(q, 'job-y', `n${i}`, 1000, at)));
      assert.equal(won.filter(Boolean).length, 1);
    });

    it('two nodes: one runs, in batches; newer rows stay; the other takes over when the lease expires', async () => {
      const sql = t!.db.sql;
      let clock = Date.parse('2030-01-01T00:00:00Z');
      const log = (ageMs: number, path: string) => ({
        time: clock - ageMs, apiKeyId: 'key_r', accountId, ip: '192.0.2.0', method: 'GET', path, status: 200, durationMs: 1,
      });
      await insertRequestLogs(sql, [
        ...Array.from({ length: 23 }, (_, i) => log(72 * HOUR + 1 + i * 1000, '/old')),
        ...Array.from({ length: 5 }, (_, i) => log(72 * HOUR - 60_000 - i, '/fresh')),
      ], null);
      const sub = (ageMs: number, text: string) => ({
        time: new Date(clock - ageMs), accountId, apiKeyId: 'key_r', source: 'classifier', score: 9, reasons: ['X'], text,
        textHash: 'ab'.repeat(32), fields: [], emailDomain: null, ip: null, country: null,
      });
      await insertSpamSubmissions(sql, [
        ...Array.from({ length: 12 }, (_, i) => sub(14 * 24 * HOUR + 1 + i, 'old')),
        ...Array.from({ length: 3 }, () => sub(13 * 24 * HOUR, 'fresh')),
      ]);
      for (const id of ['b1', 'b2']) await writeUsageBatch(sql, { id: `ret-${kind}-${id}`, counters: [], referrers: [], logs: [], lastUsed: [] });

      const a = counting(sql);
      const b = counting(sql);
      const job = (s: Sql, holder: string) => createRetentionJob({
        sql: s, holder, requestLogsTtlMs: 72 * HOUR, spamSubmissionsTtlMs: 14 * 24 * HOUR, intervalMs: INTERVAL, batch: 5, now: () => clock,
      });
      const [ra, rb] = await Promise.all([job(a.sql, 'node-a').runOnce(), job(b.sql, 'node-b').runOnce()]);
      const ran = [ra, rb].filter((r) => r.ran);
      assert.equal(ran.length, 1, 'exactly one node ran');
      assert.deepEqual({ ...ran[0]! }, { ran: true, requestLogs: 23, spamSubmissions: 12, usageFlushes: 2 });
      // 23 rows in 5 batches of at most 5, 12 in 3, the flush ids in 1: nothing else deleted anything.
      assert.equal(a.deletes() + b.deletes(), 5 + 3 + 1);
      const logs = await listRequestLogs(sql, { limit: 100 });
      assert.deepEqual([logs.length, new Set(logs.map((l) => l.path)).size, logs[0]!.path], [5, 1, '/fresh']);
      const subs = await listSpamSubmissions(sql, { limit: 100 });
      assert.deepEqual(subs.map((s) => s.text), ['fresh', 'fresh', 'fresh']);
      const winner = ra.ran ? 'node-a' : 'node-b';
      const loser = ra.ran ? 'node-b' : 'node-a';

      // Within the interval the other node does nothing, even with rows now due.
      clock += 2 * 60_000;
      assert.equal((await job(sql, loser).runOnce()).ran, false);
      assert.equal((await listRequestLogs(sql, { limit: 100 })).length, 5);
      // The winner "dies" holding the lease; once it expires the other node runs.
      clock += INTERVAL;
      const handed = await job(sql, loser).runOnce();
      assert.deepEqual({ ...handed }, { ran: true, requestLogs: 5, spamSubmissions: 0, usageFlushes: 0 });
      assert.equal((await leaseHolder(sql, RETENTION_LEASE))!.holder, loser);
      assert.equal((await job(sql, winner).runOnce()).ran, false);
    });

    it('start() runs at once and stop() waits for the run; a failing run is logged, not thrown', async () => {
      const warnings: string[] = [];
      const job = createRetentionJob({
        sql: t!.db.sql, holder: 'node-s', requestLogsTtlMs: -1, spamSubmissionsTtlMs: 1, intervalMs: 60_000,
        now: () => Date.parse('2040-01-01T00:00:00Z'),
        logger: { info() {}, warn: (_o, msg) => { warnings.push(msg); } },
      });
      job.start();
      await job.stop();
      assert.deepEqual(warnings, ['retention (request logs, spam submissions) failed; retrying at the next interval']);
    });
  });
}
