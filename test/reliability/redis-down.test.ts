// Battery item 3: Redis down. Verifications go out at a steady rate (fresh payloads and replays of
// accepted ones) while the test-owned Redis is SIGKILLed, left down for 4 s and restarted. Bounds as
// for the stalls: 0 replays accepted (also of payloads accepted before the kill and replayed after the
// restart), every request answered within REDIS_COMMAND_TIMEOUT + 100 ms (as the service measures it;
// see redis-stall.test.ts), 503 STORE_UNAVAILABLE while it is down, fresh payloads verified again
// within 5 s; /.ready 503 while down, 200 after.
//
// The Redis here keeps an append-only file: used challenges exist only in Redis, so one that restarts
// empty forgets them, and payloads verified before the restart verify again (measured: 59 of the
// ~560 replays after such a restart were accepted). The service warns at start-up when Redis runs
// without it (the second test).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startThrowawayRedis, type ThrowawayRedis } from '../helpers/redis-server.js';
import type { Service, TestKey } from '../helpers/service.js';
import {
  awaitAccessLines, ConnectionPool, HttpConnection, percentile, report, sleep, solvePayloads, startBatteryService, startRedisBattery,
  stopRedisBattery, waitFor,
} from './harness.js';
import { runVerifyLoad, summarizeOutages } from './verify-load.js';

const COMMAND_TIMEOUT_MS = 500;
const ANSWER_BOUND_MS = COMMAND_TIMEOUT_MS + 100;
const RECOVERY_BOUND_MS = 5000;
const DOWN_MS = 4000;
const RATE = 40;

let redis: ThrowawayRedis;
let svc: Service;
let key: TestKey;
let pool: ConnectionPool;

before(async () => {
  ({ redis, svc, key, pool } = await startRedisBattery(COMMAND_TIMEOUT_MS, { persistent: true }));
});

after(() => stopRedisBattery({ redis, svc, pool }));

test('redis killed and restarted: no replay accepted, every request answered in time, /.ready follows, recovery within 5 s', async () => {
  const payloads = await solvePayloads(pool, key.id, RATE * 14);
  const probe = new HttpConnection(svc.port);
  const ready = async () => (await probe.request('GET', '/.ready')).status;
  assert.equal(await ready(), 200);

  const load = runVerifyLoad(pool, key.id, payloads, { rate: RATE });
  await sleep(2000);
  const killedAt = performance.now();
  await redis.kill();
  const readyWhileDown: number[] = [];
  while (performance.now() - killedAt < DOWN_MS) {
    readyWhileDown.push(await ready());
    await sleep(250);
  }
  await redis.restart();
  const back = performance.now();
  const readyAfterMs = await waitFor('/.ready 200 after the restart', async () => (await ready()) === 200, 10_000, 20);
  await sleep(Math.max(0, 6000 - (performance.now() - back)));
  const records = await load.stop();
  probe.close();
  const served = await awaitAccessLines(svc, '/v1/verify', records.length);

  const summary = summarizeOutages(records, [{ from: killedAt, to: back }]);
  const retried = await load.retryUnavailable();
  const slowestServed = Math.max(...served.map((l) => l.ms));
  report('redis down', `${records.length} verifications, slowest ${slowestServed.toFixed(0)} ms in the service ` +
    `(bound ${ANSWER_BOUND_MS}; client view: slowest ${summary.slowest.toFixed(0)}, p99 ${percentile(records.map((r) => r.ms), 99).toFixed(0)} ms), ` +
    `${summary.unavailable} × 503 STORE_UNAVAILABLE, /.ready while down: ${readyWhileDown.length} × ${[...new Set(readyWhileDown)].join(',')}, ` +
    `200 again ${readyAfterMs} ms after the restart, recovery ${summary.recovery[0]!.toFixed(0)} ms (bound ${RECOVERY_BOUND_MS}), ` +
    `replays accepted ${load.replaysAccepted()}; 503 payloads sent again: ${retried}`);

  assert.equal(load.replaysAccepted(), 0, 'a payload was verified twice');
  assert.deepEqual(summary.unexpected, []);
  assert.ok(summary.unavailable > 0, 'the outage was felt');
  assert.equal(served.length, records.length, 'the service logged every request it answered');
  assert.deepEqual(served.filter((l) => l.ms > ANSWER_BOUND_MS), [], `every request answered within ${ANSWER_BOUND_MS} ms`);
  assert.ok(readyWhileDown.length >= 8 && readyWhileDown.every((s) => s === 503), `/.ready while down: ${readyWhileDown.join(',')}`);
  assert.ok(readyAfterMs <= RECOVERY_BOUND_MS, `/.ready 200 ${readyAfterMs} ms after the restart`);
  assert.ok(summary.recovery[0]! <= RECOVERY_BOUND_MS, `recovered ${summary.recovery[0]!.toFixed(0)} ms after the restart`);
});

test('redis without an append-only file: the service warns at start-up that a restart forgets used challenges', async () => {
  const volatile = await startThrowawayRedis();
  const other = await startBatteryService({ WORKERS: '1', REDIS_URL: volatile.url });
  try {
    const line = await other.waitForOutput(/append-only file/, 10_000);
    const entry = JSON.parse(line) as { level: number; appendonly: string; msg: string };
    assert.equal(entry.level, 40);
    assert.equal(entry.appendonly, 'no');
    assert.match(entry.msg, /forgets the used challenges/);
    assert.equal(svc.output.some((l) => l.includes('append-only file')), false, 'no warning with appendonly yes');
  } finally {
    await other.stop();
    await volatile.stop();
  }
});
