// The usage buffer: exact counts under concurrency and failures, bounded logs, retries, flush().
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestLogEntry } from '../../src/db/request-logs.js';
import type { UsageBatch } from '../../src/db/usage.js';
import { createUsageBuffer, type Classification } from '../../src/usage/usage-buffer.js';

/** An in-memory database with writeUsageBatch's semantics: additive, each batch id once. */
function fakeDb() {
  const applied = new Set<string>();
  const counters = new Map<string, { requests: number; good: number; neutral: number; bad: number }>();
  const referrers = new Map<string, number>();
  const logs: RequestLogEntry[] = [];
  const batches: UsageBatch[] = [];
  let down = false;
  let ambiguous = false;
  let delayMs = 0;
  const write = async (batch: UsageBatch) => {
    batches.push(batch);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, Math.random() * delayMs));
    if (down) throw new Error('database down');
    if (!applied.has(batch.id)) {
      applied.add(batch.id);
      for (const c of batch.counters) {
        const k = `${c.apiKeyId}/${c.month}`;
        const cur = counters.get(k) ?? { requests: 0, good: 0, neutral: 0, bad: 0 };
        counters.set(k, { requests: cur.requests + c.requests, good: cur.good + c.good, neutral: cur.neutral + c.neutral, bad: cur.bad + c.bad });
      }
      for (const r of batch.referrers) referrers.set(`${r.apiKeyId}/${r.month}/${r.origin}`, (referrers.get(`${r.apiKeyId}/${r.month}/${r.origin}`) ?? 0) + r.requests);
      logs.push(...batch.logs);
    }
    // Committed, but the acknowledgement is lost.
    if (ambiguous) throw new Error('connection lost after commit');
  };
  return {
    write, counters, referrers, logs, batches, applied,
    set down(v: boolean) { down = v; }, set ambiguous(v: boolean) { ambiguous = v; }, set delayMs(v: number) { delayMs = v; },
  };
}

const MONTH_MS = Date.UTC(2024, 4, 15);
const classes: (Classification | null)[] = ['GOOD', 'NEUTRAL', 'BAD', null];

test('10,000 concurrent increments from 20 tasks are counted exactly, with slow and failing writes in between', async () => {
  const db = fakeDb();
  db.delayMs = 3;
  const buffer = createUsageBuffer(db.write, { flushIntervalMs: 2, timeZone: 'UTC', now: () => MONTH_MS });
  buffer.start();
  const expected = new Map<string, { requests: number; good: number; neutral: number; bad: number }>();
  const keys = ['key_a', 'key_b', 'key_c'].map((id, i) => ({ id, accountId: `acc_${i % 2}` }));
  let flips = 0;
  await Promise.all(Array.from({ length: 20 }, async (_, task) => {
    for (let i = 0; i < 500; i++) {
      const key = keys[(task + i) % 3]!;
      const cls = classes[(task * 7 + i) % 4]!;
      buffer.countUsage(key, cls, i % 10 === 0 ? 'https://ref.example' : null);
      const e = expected.get(key.id) ?? { requests: 0, good: 0, neutral: 0, bad: 0 };
      e.requests++;
      if (cls === 'GOOD') e.good++;
      if (cls === 'NEUTRAL') e.neutral++;
      if (cls === 'BAD') e.bad++;
      expected.set(key.id, e);
      if (i % 50 === 0) {
        // The database goes away and comes back now and then; an acknowledgement is lost now and then.
        flips++;
        db.down = flips % 3 === 0;
        db.ambiguous = flips % 5 === 0;
        await new Promise((r) => setTimeout(r, 1));
      }
    }
  }));
  db.down = false;
  db.ambiguous = false;
  assert.equal(await buffer.close(10_000), true);
  for (const [id, e] of expected) assert.deepEqual(db.counters.get(`${id}/2024-05`), e, id);
  const total = [...db.counters.values()].reduce((n, c) => n + c.requests, 0);
  assert.equal(total, 10_000);
  assert.equal([...db.referrers.values()].reduce((a, b) => a + b, 0), 1000);
  assert.ok(db.batches.length > 2, 'written in several batches');
  assert.ok(db.batches.some((b, i) => db.batches.findIndex((x) => x.id === b.id) !== i), 'some batch was retried as it was');
  assert.equal(buffer.stats().pendingCounters, 0);
  assert.equal(buffer.pendingAccountRequests('acc_0', '2024-05'), 0);
});

test('while the database is away: counters kept, the oldest log rows dropped beyond the bound and counted', async () => {
  const db = fakeDb();
  db.down = true;
  const buffer = createUsageBuffer(db.write, { maxBufferedLogs: 100, maxBatchRows: 30, timeZone: 'UTC', now: () => MONTH_MS, anonymizeIp: false });
  const key = { id: 'key_a', accountId: 'acc_1' };
  for (let i = 0; i < 250; i++) {
    buffer.countUsage(key, 'GOOD', null);
    buffer.logRequest({ apiKeyId: key.id, accountId: key.accountId, ip: '10.1.2.3', method: 'GET', path: `/p${i}`, status: 200, durationMs: 1 });
  }
  await assert.rejects(buffer.flush(), /database down/);
  assert.equal(buffer.stats().droppedLogs, 150);
  assert.equal(buffer.pendingAccountRequests('acc_1', '2024-05'), 250);
  for (let i = 250; i < 300; i++) {
    buffer.countUsage(key, 'BAD', null);
    buffer.logRequest({ apiKeyId: key.id, accountId: key.accountId, ip: '10.1.2.3', method: 'GET', path: `/p${i}`, status: 200, durationMs: 1 });
  }
  await assert.rejects(buffer.flush());
  assert.equal(buffer.stats().failedWrites, 2);
  db.down = false;
  await buffer.flush();
  assert.deepEqual(db.counters.get('key_a/2024-05'), { requests: 300, good: 250, neutral: 0, bad: 50 });
  // The in-flight batch (30 rows, /p150–/p179) was kept whole; after it, the newest rows that fit.
  const paths = db.logs.map((l) => Number(l.path.slice(2)));
  assert.deepEqual(paths.slice(0, 30), Array.from({ length: 30 }, (_, i) => 150 + i));
  assert.equal(paths.at(-1), 299);
  assert.equal(buffer.stats().droppedLogs + db.logs.length, 300);
  assert.equal(new Set(paths).size, paths.length);
  assert.equal(buffer.pendingAccountRequests('acc_1', '2024-05'), 0);
  assert.deepEqual(buffer.stats(), {
    pendingCounters: 0, pendingLogs: 0, droppedLogs: buffer.stats().droppedLogs, rateLimitedLogs: 0, batchesWritten: db.applied.size, failedWrites: 2,
    outsideLedger: 0, ledgerRegion: -1,
  });
});

test('a batch whose commit was not acknowledged is retried with the same id and counted once', async () => {
  const db = fakeDb();
  const buffer = createUsageBuffer(db.write, { timeZone: 'UTC', now: () => MONTH_MS });
  buffer.countUsage({ id: 'key_a', accountId: 'acc' }, 'NEUTRAL', 'https://x.example');
  db.ambiguous = true;
  await assert.rejects(buffer.flush());
  db.ambiguous = false;
  buffer.countUsage({ id: 'key_a', accountId: 'acc' }, null, null);
  await buffer.flush();
  assert.equal(db.batches[0]!.id, db.batches[1]!.id);
  assert.deepEqual(db.counters.get('key_a/2024-05'), { requests: 2, good: 0, neutral: 1, bad: 0 });
  assert.equal(db.referrers.get('key_a/2024-05/https://x.example'), 1);
});

test('flush() writes every log row recorded before it, in batches of maxBatchRows; IPs anonymised', async () => {
  const db = fakeDb();
  const buffer = createUsageBuffer(db.write, { maxBatchRows: 40, timeZone: 'UTC', now: () => MONTH_MS });
  for (let i = 0; i < 100; i++) {
    buffer.logRequest({
      apiKeyId: null, accountId: null, ip: i % 2 ? '2001:db8:abcd:12::1' : '203.0.113.77', method: 'POST', path: `/x${'y'.repeat(3000)}`,
      status: 201, durationMs: 1.23456, time: 1_700_000_000_000 + i,
    });
  }
  await buffer.flush();
  assert.deepEqual(db.batches.map((b) => b.logs.length), [40, 40, 20]);
  assert.equal(db.logs[0]!.ip, '203.0.113.0');
  assert.equal(db.logs[1]!.ip, '2001:db8:abcd::');
  assert.equal(db.logs[0]!.path.length, 2048);
  assert.equal(db.logs[0]!.durationMs, 1.235);
  assert.equal(db.logs[99]!.time, 1_700_000_000_099);
  await buffer.flush();
  assert.equal(db.batches.length, 3, 'nothing left to write');
});

test('maxBatchRows waiting rows trigger a write before the interval', async () => {
  const db = fakeDb();
  const buffer = createUsageBuffer(db.write, { maxBatchRows: 10, flushIntervalMs: 3_600_000, timeZone: 'UTC' });
  buffer.start();
  for (let i = 0; i < 10; i++) buffer.logRequest({ apiKeyId: null, accountId: null, ip: null, method: 'GET', path: '/', status: 200, durationMs: 0 });
  for (let i = 0; i < 200 && db.logs.length < 10; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(db.logs.length, 10);
  assert.equal(await buffer.close(1000), true);
});

test('referrers: at most maxReferrersPerKey distinct origins per key and month, the rest as "other"', async () => {
  const db = fakeDb();
  const buffer = createUsageBuffer(db.write, { maxReferrersPerKey: 3, timeZone: 'UTC', now: () => MONTH_MS });
  const key = { id: 'key_r', accountId: 'acc' };
  for (const o of ['https://a.x', 'https://b.x', 'https://a.x', 'https://c.x', 'https://d.x', 'https://e.x', 'https://b.x']) {
    buffer.countUsage(key, null, o);
  }
  await buffer.flush();
  buffer.countUsage(key, null, 'https://f.x');
  await buffer.flush();
  assert.deepEqual(Object.fromEntries([...db.referrers].map(([k, v]) => [k.split('/').slice(2).join('/'), v])), {
    'https://a.x': 2, 'https://b.x': 2, 'https://c.x': 1, other: 3,
  });
});

test('counts land in the month of the time zone; pending account requests follow writes', async () => {
  const db = fakeDb();
  let now = Date.UTC(2024, 0, 31, 23, 30);
  const buffer = createUsageBuffer(db.write, { timeZone: 'Europe/Berlin', now: () => now });
  const key = { id: 'key_m', accountId: 'acc_m' };
  buffer.countUsage(key, null, null);
  now = Date.UTC(2024, 1, 29, 22, 59, 59);
  buffer.countUsage(key, null, null);
  now = Date.UTC(2024, 1, 29, 23, 0, 1);
  buffer.countUsage(key, null, null);
  assert.equal(buffer.pendingAccountRequests('acc_m', '2024-02'), 2);
  assert.equal(buffer.pendingAccountRequests('acc_m', '2024-03'), 1);
  assert.equal(buffer.currentMonth(), '2024-03');
  await buffer.flush();
  assert.equal(db.counters.get('key_m/2024-02')?.requests, 2);
  assert.equal(db.counters.get('key_m/2024-03')?.requests, 1);
  assert.equal(db.counters.get('key_m/2024-01'), undefined);
  assert.equal(buffer.pendingAccountRequests('acc_m', '2024-02'), 0);
});

test('close() gives up after its timeout while the database stays away, and reports it', async () => {
  const db = fakeDb();
  db.down = true;
  const errors: unknown[] = [];
  const buffer = createUsageBuffer(db.write, { flushIntervalMs: 20, onError: (e) => errors.push(e) });
  buffer.countUsage({ id: 'key_z', accountId: 'acc' }, 'GOOD', null);
  assert.equal(await buffer.close(100), false);
  assert.ok(errors.length >= 1);
  assert.equal(buffer.stats().pendingCounters, 1);
});

test('maxLogsPerSecond: rows beyond the rate in one second are left out and counted; usage counters are not limited', async () => {
  const db = fakeDb();
  let now = MONTH_MS;
  const buffer = createUsageBuffer(db.write, { maxLogsPerSecond: 3, timeZone: 'UTC', now: () => now });
  const row = { apiKeyId: 'key_a', accountId: 'acc_a', ip: '203.0.113.1', method: 'GET', path: '/v1/challenge', status: 200, durationMs: 1 };
  for (let i = 0; i < 5; i++) {
    buffer.logRequest(row);
    buffer.countUsage({ id: 'key_a', accountId: 'acc_a' }, null, null);
  }
  now += 1000;
  for (let i = 0; i < 2; i++) buffer.logRequest(row);
  await buffer.flush();
  assert.equal(db.logs.length, 5);
  assert.equal(buffer.stats().rateLimitedLogs, 2);
  assert.equal([...db.counters.values()][0]!.requests, 5);
});
