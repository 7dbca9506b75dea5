// Battery item 2: Redis stalls. Verifications go out at a steady rate (fresh payloads and replays of
// accepted ones) while a test-owned Redis first pauses writes (CLIENT PAUSE 2000 WRITE) and then is
// frozen with SIGSTOP for 5 s. Bounds: 0 replays accepted (no payload verified twice); every request
// answered, within REDIS_COMMAND_TIMEOUT + 100 ms as the service measures it (its access log: from
// the request's arrival to its response; the client's view adds this shared machine's scheduling
// noise and is reported, not bounded); a stalled request answered 503 STORE_UNAVAILABLE; fresh
// payloads verified again within 5 s of Redis returning.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { deriveChallengeSync, signChallenge } from '../../src/pow/challenge.js';
import { resolvePolicy } from '../../src/pow/policy.js';
import { preparePowSecrets } from '../../src/pow/secrets.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { startHungRedis, type ThrowawayRedis } from '../helpers/redis-server.js';
import { createTestKey, type Service, type TestKey } from '../helpers/service.js';
import {
  awaitAccessLines, ConnectionPool, HttpConnection, percentile, report, sleep, solvePayloads, startBatteryService, startRedisBattery,
  stopRedisBattery, timingBound,
} from './harness.js';
import { runVerifyLoad, summarizeOutages, type Outage } from './verify-load.js';

const COMMAND_TIMEOUT_MS = 500;
/** The bound for one request. */
const ANSWER_BOUND_MS = COMMAND_TIMEOUT_MS + 100;
const RECOVERY_BOUND_MS = 5000;
/** Fresh payloads per second, and as many replays. */
const RATE = 40;

let redis: ThrowawayRedis;
let svc: Service;
let key: TestKey;
let pool: ConnectionPool;

before(async () => {
  ({ redis, svc, key, pool } = await startRedisBattery(COMMAND_TIMEOUT_MS));
});

after(() => stopRedisBattery({ redis, svc, pool }));

test('redis stalls (CLIENT PAUSE WRITE, then SIGSTOP 5 s): no replay accepted, every request answered in time, recovery within 5 s', async () => {
  // 2 s calm, 2 s paused, 2 s calm, 5 s frozen, 6 s after: 17 s at RATE.
  const payloads = await solvePayloads(pool, key.id, RATE * 18);
  const stalls: Outage[] = [];
  const load = runVerifyLoad(pool, key.id, payloads, { rate: RATE });
  await sleep(2000);
  const pausedAt = performance.now();
  assert.equal(redis.command('CLIENT', 'PAUSE', '2000', 'WRITE'), 'OK');
  await sleep(4000);
  stalls.push({ from: pausedAt, to: pausedAt + 2000 });
  const frozenAt = performance.now();
  redis.freeze();
  await sleep(5000);
  redis.thaw();
  stalls.push({ from: frozenAt, to: performance.now() });
  await sleep(6000);
  const records = await load.stop();
  const served = await awaitAccessLines(svc, '/v1/verify', records.length);

  const summary = summarizeOutages(records, stalls);
  // Payloads answered 503 are sent once more now: each is then verified at most once overall.
  const retried = await load.retryUnavailable();
  const slowestServed = Math.max(...served.map((l) => l.ms));
  report('redis stalls', `${records.length} verifications, slowest ${slowestServed.toFixed(0)} ms in the service ` +
    `(bound ${ANSWER_BOUND_MS}; client view: slowest ${summary.slowest.toFixed(0)}, p99 ${percentile(records.map((r) => r.ms), 99).toFixed(0)} ms), ` +
    `${summary.unavailable} × 503 STORE_UNAVAILABLE, recovery ${summary.recovery.map((r) => r.toFixed(0)).join(' / ')} ms ` +
    `(bound ${RECOVERY_BOUND_MS}), replays accepted ${load.replaysAccepted()}; 503 payloads sent again: ${retried}`);

  assert.equal(load.replaysAccepted(), 0, 'a payload was verified twice');
  assert.deepEqual(summary.unexpected, [], 'every answer is a verification, a refusal as used, or 503 STORE_UNAVAILABLE');
  assert.ok(summary.unavailable > 0, 'the stalls were felt (some requests answered 503)');
  assert.equal(served.length, records.length, 'the service logged every request it answered');
  const late = served.filter((l) => l.ms > ANSWER_BOUND_MS).length;
  timingBound(late === 0, `${late} requests answered after more than ${ANSWER_BOUND_MS} ms`);
  for (const r of summary.recovery) timingBound(r <= RECOVERY_BOUND_MS, `recovered ${r.toFixed(0)} ms after Redis returned`);
  // However slow the machine, the service is verifying again once Redis is back for good.
  assert.ok(Number.isFinite(summary.recovery.at(-1)!), 'fresh payloads verified after the last stall');
});

// Regression: a verification read the penalty and then the failed attempts after its claim, each
// waiting up to REDIS_COMMAND_TIMEOUT, so a Redis that stalled right after the claim held the
// request for 2 × 500 ms on top of the claim (measured: 1,060 ms).
test('a store that stalls after the claim costs one command timeout, not one per read', async () => {
  // Grants every claim (SET … NX) and then never answers again on that connection.
  const fake = await startHungRedis((args) => (args[0]!.toUpperCase() === 'SET' ? '+OK\r\n' : null));
  const stalled = await startBatteryService({
    WORKERS: '1', REDIS_URL: fake.url, REDIS_COMMAND_TIMEOUT: String(COMMAND_TIMEOUT_MS), LOG_LEVEL: 'info',
  });
  const conn = new HttpConnection(stalled.port);
  try {
    const k = await createTestKey(stalled, { challengePolicy: { counterMin: 1, counterMax: 50 } });
    // Made here with the service's own secret: fetching one would read the stalled store.
    const secrets = preparePowSecrets(loadConfig({ env: stalled.env, persistSecrets: false }).secrets.PALISADE_HMAC_SECRET);
    const policy = resolvePolicy({ counterMin: 1, counterMax: 50 }, { maxMemoryBytes: 128 * 1024 * 1024 });
    const { payload } = await solveV2(signChallenge(policy, deriveChallengeSync(policy, secrets), { secrets, apiKeyId: k.id }));
    const res = await conn.request('POST', `/v1/verify?apiKey=${k.id}`, JSON.stringify({ payload }));
    const [served] = await awaitAccessLines(stalled, '/v1/verify', 1);
    report('redis stall after the claim', `verification answered in ${served!.ms.toFixed(0)} ms in the service ` +
      `(bound ${ANSWER_BOUND_MS}; client view ${res.ms.toFixed(0)} ms)`);
    assert.equal(res.status, 200);
    const json = JSON.parse(res.body) as { verified: boolean; verificationData: string };
    assert.equal(json.verified, true);
    // The reads that did not come back count as nothing known, as on a store failure.
    const data = new URLSearchParams(json.verificationData);
    assert.deepEqual([data.get('penalty'), data.get('score'), data.get('classification')], ['0', '0', 'GOOD']);
    assert.ok(served!.ms >= COMMAND_TIMEOUT_MS - 10 && served!.ms <= ANSWER_BOUND_MS, `answered after ${served!.ms} ms`);
  } finally {
    conn.close();
    await stalled.stop();
    await fake.close();
  }
});
