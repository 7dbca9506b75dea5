// Battery item 11, the soak (`npm run test:soak`; SOAK_MINUTES, default 30): mixed traffic at 30% of
// the service's maximum rate. The maximum is measured first (closed loop, 10 s): flows of a challenge,
// solved, then verified. The soak then starts flows at 30% of that rate, open loop; each flow may add
// a replay of its payload (10%), a server-side check of its server payload (10%), an HMAC-signed
// GET /usage (2%), /.health (1%) or /.metrics (0.5%). Bounds: 0 errors (every answer the expected
// one); RSS and open file descriptors of the primary and each worker flat (the last quarter's
// highest within 20% / 16 descriptors of the second quarter's highest); shared-memory entries ≈
// rate × TTL for each kind of claim, counted as the claims made within the last TTL (within 15% +
// 50), sampled every 30 s. Counting what was made rather than multiplying the run's average rate
// keeps the check exact when the rate the machine sustains changes during the run.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { childPids, createTestKey, type Service, type TestKey } from '../helpers/service.js';
import { ConnectionPool, report, sleep, startBatteryService, Tally } from './harness.js';
import { outcomeOf } from './verify-load.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const SHARE = 0.3;
const CALIBRATION_MS = 10_000;
const SAMPLE_EVERY_MS = Math.min(30_000, (MINUTES * 60_000) / 20);
/** Short lifetimes so that the table reaches its steady state within the soak. */
const CHALLENGE_TTL_MS = 60_000;
const USED_CHALLENGES_TTL_MS = 60_000;
/** Claims outlive their expiry by this much (src/pow/verify.ts, server-signature.ts). */
const SKEW_MS = 60_000;
/** A verified challenge's claim: its expiry plus the skew, at least CACHE_DURATION_USED_CHALLENGES. */
const VERIFY_CLAIM_TTL_MS = Math.max(USED_CHALLENGES_TTL_MS, CHALLENGE_TTL_MS + SKEW_MS);
const SERVER_PAYLOAD_TTL_MS = 20 * 60_000;
const SALT_TTL_MS = 11 * 60_000;
/** The address replays are sent from (see before()). */
const REPLAYER = '198.51.100.7';
/** STATE_STORE_CAPACITY's default. */
const CAPACITY = 4_194_304;

let svc: Service;
let key: TestKey;
let pool: ConnectionPool;

before(async () => {
  // Replays come from another client (REPLAYER, through a trusted proxy header): each one is a
  // failed verification that adds penalty points to its sender, and penalty points make that
  // sender's challenges up to 16 times harder. Sent from the honest flows' own address, they would
  // soon make every honest challenge 16 times the work and the load generator its own bottleneck.
  svc = await startBatteryService({
    WORKERS: '2', CACHE_DURATION_USED_CHALLENGES: `${USED_CHALLENGES_TTL_MS / 1000}s`, X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32',
  });
  key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50, expiresInMs: CHALLENGE_TTL_MS } });
  pool = new ConnectionPool(svc.port, 128);
});

after(async () => {
  pool?.close();
  await svc?.stop();
});

interface Sample {
  atMin: number;
  rssMb: Record<string, number>;
  fds: Record<string, number>;
  live: number;
  expected: number;
}

test(`soak: ${MINUTES} min of mixed traffic at ${SHARE * 100}% of the maximum rate; no error, flat memory and descriptors, table ≈ rate × TTL`, async () => {
  const tally = new Tally();
  const errors: string[] = [];
  /** When each claim was made (performance.now()), by kind. */
  const claims: Claims = { verify: [], server: [], salt: [] };

  const flow = async (extras: boolean) => {
    const ch = await pool.request('GET', `/v1/challenge?apiKey=${key.id}`);
    if (ch.status !== 200) return fail(`challenge ${ch.status} ${ch.body.slice(0, 80)}`);
    const { payload } = await solveV2(ch.body);
    const body = JSON.stringify({ payload });
    const v = await pool.request('POST', `/v1/verify?apiKey=${key.id}`, body);
    const outcome = outcomeOf(v.status, v.body);
    tally.add(`verify ${outcome}`);
    if (outcome !== 'VERIFIED') return fail(`verify ${outcome}`);
    claims.verify.push(performance.now());
    if (!extras) return;
    const roll = Math.random();
    if (roll < 0.10) {
      const again = outcomeOf(...answer(await pool.request('POST', `/v1/verify?apiKey=${key.id}`, body, { 'x-forwarded-for': REPLAYER })));
      tally.add(`replay ${again}`);
      if (again !== 'PAYLOAD_ALREADY_USED') fail(`replay ${again}`);
    } else if (roll < 0.20) {
      const server = (JSON.parse(v.body) as { payload: string }).payload;
      const r = await pool.request('POST', '/challenge/verify', JSON.stringify({ payload: server }), { authorization: `Bearer ${key.secret}` });
      tally.add(`server ${r.status}`);
      claims.server.push(performance.now());
      if (r.status !== 200 || r.body !== '{"verified":true}') fail(`server check ${r.status} ${r.body}`);
    } else if (roll < 0.22) {
      const salt = `${Math.floor(Date.now() / 1000)}.${randomBytes(16).toString('base64url')}`;
      const signature = createHmac('sha256', key.secret).update(`${salt}\nGET\n/usage\n`).digest('hex');
      const r = await pool.request('GET', '/usage', undefined, { authorization: `Bearer ${key.id}`, 'x-hmac-signature': signature, 'x-hmac-signature-salt': salt });
      tally.add(`usage ${r.status}`);
      claims.salt.push(performance.now());
      if (r.status !== 200) fail(`usage ${r.status} ${r.body}`);
    } else if (roll < 0.23) {
      const r = await pool.request('GET', '/.health');
      tally.add(`health ${r.status}`);
      if (r.status !== 200) fail(`health ${r.status} ${r.body}`);
    } else if (roll < 0.235) {
      const r = await pool.request('GET', '/.metrics');
      tally.add(`metrics ${r.status}`);
      if (r.status !== 200) fail(`metrics ${r.status}`);
    }
  };
  const fail = (what: string) => { if (errors.length < 50) errors.push(what); tally.add('ERROR'); };
  const safe = (extras: boolean) => flow(extras).catch((err: Error) => fail(`socket: ${err.message}`));

  // Calibration: as many flows as 64 closed loops complete.
  let done = 0;
  const calibrateUntil = performance.now() + CALIBRATION_MS;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (performance.now() < calibrateUntil) { await safe(false); done++; }
  }));
  const maxRate = done / (CALIBRATION_MS / 1000);
  const rate = maxRate * SHARE;
  assert.deepEqual(errors, [], 'no error at full rate');
  await sleep(VERIFY_CLAIM_TTL_MS + 10_000); // the calibration's claims expire
  claims.verify.length = 0;

  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  const end = started + MINUTES * 60_000;
  const samples: Sample[] = [];
  let inflight = 0;
  let maxInflight = 0;
  let ticks = 0;
  const store = openSharedMemoryStore(`${svc.dataDir}/db/state.shm`, { capacity: CAPACITY });
  try {
    let nextSample = started + SAMPLE_EVERY_MS;
    // Every few milliseconds, the flows that are due start together: a timer per flow would cap the
    // rate near what setTimeout's millisecond granularity allows.
    while (performance.now() < end) {
      const dueNow = Math.floor(((performance.now() - started) * rate) / 1000);
      while (ticks < dueNow) {
        inflight++;
        maxInflight = Math.max(maxInflight, inflight);
        void safe(true).finally(() => { inflight--; });
        ticks++;
      }
      if (performance.now() >= nextSample) {
        samples.push(await sample(svc, store, (performance.now() - started) / 60_000, claims));
        nextSample += SAMPLE_EVERY_MS;
      }
      await sleep(5);
    }
    while (inflight > 0) await sleep(50);
  } finally {
    await store.close();
  }

  const quarter = Math.floor(samples.length / 4);
  const second = samples.slice(quarter, 2 * quarter);
  const last = samples.slice(-quarter);
  const names = Object.keys(samples[0]!.rssMb);
  const growth = names.map((n) => {
    const before = Math.max(...second.map((s) => s.rssMb[n] ?? 0));
    const after = Math.max(...last.map((s) => s.rssMb[n] ?? 0));
    const fdBefore = Math.max(...second.map((s) => s.fds[n] ?? 0));
    const fdAfter = Math.max(...last.map((s) => s.fds[n] ?? 0));
    return { n, before, after, fdBefore, fdAfter };
  });
  const table = samples.map((s) => ({ atMin: s.atMin, live: s.live, expected: s.expected }));
  const off = table.filter((t) => Math.abs(t.live - t.expected) > 0.15 * t.expected + 50);

  const achieved = ticks / ((performance.now() - started) / 1000);
  const cpu = process.cpuUsage(cpuAtStart);
  const clientCpu = (cpu.user + cpu.system) / 1000 / (performance.now() - started);
  report('soak', `${MINUTES} min at ${rate.toFixed(0)} flows/s (${SHARE * 100}% of ${maxRate.toFixed(0)}; achieved ${achieved.toFixed(0)}, this client's CPU ${(clientCpu * 100).toFixed(0)}% of a core), ${ticks} flows, ` +
    `most in flight ${maxInflight}; ${tally}; errors ${errors.length}; RSS MB (2nd quarter → last quarter) ` +
    `${growth.map((g) => `${g.n} ${g.before.toFixed(0)}→${g.after.toFixed(0)}`).join(', ')}; fds ` +
    `${growth.map((g) => `${g.n} ${g.fdBefore}→${g.fdAfter}`).join(', ')}; table live/expected ` +
    `${table.filter((_, i) => i % Math.max(1, Math.floor(table.length / 6)) === 0 || i === table.length - 1).map((t) => `${t.atMin.toFixed(1)}m ${t.live}/${t.expected.toFixed(0)}`).join(', ')}`);

  assert.deepEqual(errors, [], 'no error');
  assert.ok(samples.length >= 8, `${samples.length} samples`);
  assert.ok(achieved >= rate * 0.9, `the load held its rate: ${achieved.toFixed(0)} of ${rate.toFixed(0)} flows/s`);
  for (const g of growth) {
    assert.ok(g.after <= g.before * 1.2, `${g.n}: RSS ${g.before.toFixed(0)} → ${g.after.toFixed(0)} MB`);
    assert.ok(g.fdAfter <= g.fdBefore + 16, `${g.n}: descriptors ${g.fdBefore} → ${g.fdAfter}`);
  }
  assert.deepEqual(off, [], 'the table holds about rate × TTL entries');
});

function answer(r: { status: number; body: string }): [number, string] {
  return [r.status, r.body];
}

interface Claims {
  readonly verify: number[];
  readonly server: number[];
  readonly salt: number[];
}

/** RSS and descriptors of the primary and each worker; live table entries against the claims made within their TTL. */
async function sample(svc: Service, store: ReturnType<typeof openSharedMemoryStore>, atMin: number, claims: Claims): Promise<Sample> {
  const pids: Record<string, number> = { primary: svc.proc.pid! };
  (await childPids(svc.proc.pid!)).forEach((p, i) => { pids[`worker${i + 1}`] = p; });
  const rssMb: Record<string, number> = {};
  const fds: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    rssMb[name] = Number(m?.[1] ?? 0) / 1024;
    fds[name] = readdirSync(`/proc/${pid}/fd`).length;
  }
  // Claims: verified challenges (expiry + skew, at least CACHE_DURATION_USED_CHALLENGES), server
  // payloads (their 20 min + skew), HMAC salts (11 min); a handful of penalty and header entries.
  const now = performance.now();
  const within = (times: readonly number[], ttlMs: number) => times.reduce((n, t) => (t > now - ttlMs ? n + 1 : n), 0);
  const expected = within(claims.verify, VERIFY_CLAIM_TTL_MS) + within(claims.server, SERVER_PAYLOAD_TTL_MS + SKEW_MS) +
    within(claims.salt, SALT_TTL_MS);
  return { atMin, rssMb, fds, live: store.occupancy().live, expected };
}
