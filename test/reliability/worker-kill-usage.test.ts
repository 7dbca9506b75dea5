// Battery item 5, usage: a worker SIGKILLed under load loses no usage count. Usage counts (requests,
// GOOD/NEUTRAL/BAD, referrers) live in the usage ledger, memory shared with the primary
// (src/usage/usage-ledger.ts): a request is counted there as its reply is written, and whoever
// owns the dead worker's region next (its replacement, or the primary) writes what the worker had
// not. The service counts what its clients received: every request answered 200 counted exactly
// once, none more (a request answered with a broken connection was not served).
//
// Before the ledger, each worker aggregated counts in its own heap for up to a second: of 4,000
// challenges with one worker killed 0.7 s in, 172 answered requests (4.3 %) were never counted.
//
// The whole node SIGKILLed (primary, its embedded database and every worker at once) loses no
// count either: the ledger is a file, and the page cache keeps what the processes stored; the next
// start writes it before the workers start. Only what the kernel had not yet written back to disk
// when the machine itself stops (power loss, kernel crash) can be lost.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { keyUsage, type KeyUsage } from '../../src/db/usage.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { rmSync } from 'node:fs';
import { freshPgliteDataDir } from '../helpers/db.js';
import { childPids, createTestKey, withServiceDb, type Service, type TestKey } from '../helpers/service.js';
import { ConnectionPool, report, sleep, startBatteryService } from './harness.js';

const REQUESTS = 5000;
/** Requests per second, all clients together: the run lasts 2 s and the kill comes in its first half. */
const RATE = 2500;
const CLIENTS = 32;
const KILL_AFTER_MS = 700;
/** Every this many requests of a client verifies the challenge it fetched before, and shows an Origin. */
const VERIFY_EVERY = 4;
const ORIGINS = ['https://a.example', 'https://b.example:8443'];

let svc: Service;
let key: TestKey;

before(async () => {
  svc = await startBatteryService({ WORKERS: '2' });
  key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
});

after(async () => {
  await svc?.stop();
});

interface Expected {
  requests: number;
  GOOD: number;
  NEUTRAL: number;
  BAD: number;
  referrers: Record<string, number>;
  failed: number;
}

test('a worker SIGKILLed under load: every request answered 200 is counted exactly once (requests, classifications, referrers)', async () => {
  const workers = await childPids(svc.proc.pid!);
  assert.equal(workers.length, 2);
  const month = new Date().toISOString().slice(0, 7);
  const before = await usageNow(svc, month);
  const victim = workers[0]!;
  const run = await drive(svc, () => process.kill(victim, 'SIGKILL'));
  const { got, expected } = await settled(svc, month, before, run.expected);

  report('worker SIGKILL usage', `${run.sent} requests in ${run.loadMs.toFixed(0)} ms, worker ${victim} killed after ${run.sentAtKill}; ` +
    `${expected.requests} answered 200, ${expected.failed} failed with the connection; counted ${got.requests} ` +
    `(${expected.requests - got.requests} uncounted, ${(100 * (expected.requests - got.requests) / expected.requests).toFixed(1)} %), ` +
    `GOOD ${got.GOOD}/${expected.GOOD}, referrers ${ORIGINS.map((o) => `${got.referrers[o]}/${expected.referrers[o] ?? 0}`).join(' ')}`);

  assert.ok(run.sentAtKill < REQUESTS, 'the kill came while requests were being sent');
  assert.ok(!(await childPids(svc.proc.pid!)).includes(victim), 'the worker is gone');
  assert.deepEqual(got, wanted(expected));
});

test('the whole node SIGKILLed under load (primary, embedded database, workers): after the next start every request answered 200 is counted exactly once', async () => {
  const dataDir = await freshPgliteDataDir();
  let node = await startBatteryService({ WORKERS: '2' }, dataDir);
  try {
    const nodeKey = await createTestKey(node, { challengePolicy: { counterMin: 1, counterMax: 50 } });
    const month = new Date().toISOString().slice(0, 7);
    const pids = [node.proc.pid!, ...await childPids(node.proc.pid!)];
    assert.equal(pids.length, 3);
    const run = await drive(node, () => { for (const pid of pids) process.kill(pid, 'SIGKILL'); }, nodeKey);
    await node.stop();
    node = await startBatteryService({ WORKERS: '2' }, dataDir);
    const { got, expected } = await settled(node, month, null, run.expected, nodeKey);

    report('node SIGKILL usage', `${run.sent} requests, primary and both workers killed after ${run.sentAtKill}; ` +
      `${expected.requests} answered 200, ${expected.failed} failed; counted after the restart ${got.requests}, ` +
      `GOOD ${got.GOOD}/${expected.GOOD}, referrers ${ORIGINS.map((o) => `${got.referrers[o]}/${expected.referrers[o] ?? 0}`).join(' ')}`);

    assert.ok(expected.failed > 0, 'requests were in flight when the node died');
    assert.deepEqual(got, wanted(expected));
  } finally {
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

interface Run {
  expected: Expected;
  sent: number;
  sentAtKill: number;
  loadMs: number;
}

/**
 * REQUESTS requests at RATE from CLIENTS connections (challenges; every VERIFY_EVERY-th also
 * verified, half of those with a wrong solution; those show an Origin), `kill` KILL_AFTER_MS in.
 * What the clients received.
 */
async function drive(target: Service, kill: () => void, k: TestKey = key): Promise<Run> {
  const pool = new ConnectionPool(target.port, CLIENTS);
  const expected: Expected = { requests: 0, GOOD: 0, NEUTRAL: 0, BAD: 0, referrers: {}, failed: 0 };
  const served = (origin: string | null) => {
    expected.requests++;
    if (origin !== null) expected.referrers[origin] = (expected.referrers[origin] ?? 0) + 1;
  };
  let sent = 0;
  const started = performance.now();
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    while (sent < REQUESTS) {
      const n = sent++;
      const due = started + n * 1000 / RATE;
      if (due > performance.now()) await sleep(due - performance.now());
      const origin = n % VERIFY_EVERY === 0 ? ORIGINS[(n / VERIFY_EVERY) % ORIGINS.length]! : null;
      const headers: Record<string, string> = origin === null ? {} : { origin };
      let challenge;
      try {
        challenge = await pool.request('GET', `/v1/challenge?apiKey=${k.id}`, undefined, headers);
      } catch {
        expected.failed++;
        continue;
      }
      if (challenge.status !== 200) throw new Error(`challenge answered ${challenge.status}: ${challenge.body}`);
      served(origin);
      if (n % VERIFY_EVERY !== 0 || sent >= REQUESTS) continue;
      sent++;
      // Every other verification sends a wrong number: a failed verification counts without a classification.
      const { payload } = await solveV2(challenge.body);
      const sentPayload = c % 2 === 0 ? payload : tamper(payload);
      let verify;
      try {
        verify = await pool.request('POST', `/v1/verify?apiKey=${k.id}`, JSON.stringify({ payload: sentPayload }), headers);
      } catch {
        expected.failed++;
        continue;
      }
      if (verify.status !== 200) throw new Error(`verify answered ${verify.status}: ${verify.body}`);
      served(origin);
      const body = JSON.parse(verify.body) as { verified: boolean; score?: number };
      if (body.verified) expected[body.score! < 1 ? 'GOOD' : body.score! < 2 ? 'NEUTRAL' : 'BAD']++;
    }
  });
  await sleep(KILL_AFTER_MS);
  kill();
  const sentAtKill = sent;
  await Promise.all(clients);
  const loadMs = performance.now() - started;
  pool.close();
  return { expected, sent, sentAtKill, loadMs };
}

/** The usage counted since `before` once it has settled: nothing changed for 3 s (the ledger is drained at once; workers write every second). */
async function settled(target: Service, month: string, before: KeyUsage | null, expected: Expected, k: TestKey = key) {
  let last = '';
  let stableSince = performance.now();
  let counted: KeyUsage = before ?? { requests: 0, classifications: { BAD: '0', GOOD: '0', NEUTRAL: '0' }, referrers: {} };
  const deadline = performance.now() + 30_000;
  while (performance.now() - stableSince < 3000 && performance.now() < deadline) {
    await sleep(250);
    counted = await usageNow(target, month, k);
    const now = JSON.stringify(counted);
    if (now !== last) { last = now; stableSince = performance.now(); }
  }
  const base = before ?? { requests: 0, classifications: { BAD: '0', GOOD: '0', NEUTRAL: '0' }, referrers: {} };
  const got = {
    requests: counted.requests - base.requests,
    GOOD: Number(counted.classifications.GOOD) - Number(base.classifications.GOOD),
    NEUTRAL: Number(counted.classifications.NEUTRAL) - Number(base.classifications.NEUTRAL),
    BAD: Number(counted.classifications.BAD) - Number(base.classifications.BAD),
    referrers: Object.fromEntries(ORIGINS.map((o) => [o, (counted.referrers[o] ?? 0) - (base.referrers[o] ?? 0)])),
  };
  return { got, expected };
}

function wanted(expected: Expected) {
  return {
    requests: expected.requests, GOOD: expected.GOOD, NEUTRAL: expected.NEUTRAL, BAD: expected.BAD,
    referrers: Object.fromEntries(ORIGINS.map((o) => [o, expected.referrers[o] ?? 0])),
  };
}

async function usageNow(target: Service, month: string, k: TestKey = key): Promise<KeyUsage> {
  return withServiceDb(target, (sql) => keyUsage(sql, k.id, month));
}

/** The same payload with another number: the solution check fails (after the claim). */
function tamper(payload: string): string {
  const p = JSON.parse(Buffer.from(payload, 'base64').toString()) as { solution: { counter: number } };
  p.solution.counter += 1;
  return Buffer.from(JSON.stringify(p)).toString('base64');
}
