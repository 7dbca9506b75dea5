// Battery item 9: 100,000 random and mutated requests over every public route, generated with
// fast-check from the routes' shapes: GET /v1/challenge, POST /v1/verify, /v1/verify/signature,
// /challenge/verify (Bearer secret or HMAC-signed), GET /usage, POST /api_key/generate (Altcha
// authorization), the operational endpoints (/.logs, a stream, excepted), plus requests with any
// method, path, query, headers and body. Real material is mutated: solved v2 and v1 payloads, a
// server payload, key ids, secrets and signatures. HEAD is left out (its answers carry a
// Content-Length but no body, which this client does not frame). Bounds: no 5xx (no store is made
// unavailable here, so not even 503), every request answered, no worker or primary exits.
// FUZZ_SEED=<n> replays a run; FUZZ_RUNS=<n> changes the count.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { solveV1, solveV2 } from '../helpers/pow-test-server.js';
import { childPids, createTestKey, type Service, type TestKey } from '../helpers/service.js';
import { requestArb, type Material } from './fuzz-requests.js';
import { ConnectionError, ConnectionPool, rawRequest, report, startBatteryService, Tally } from './harness.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 100_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const CONNECTIONS = 64;
/** Requests generated per fast-check sample. */
const CHUNK = 5000;

let svc: Service;
let key: TestKey;
let v1Key: TestKey;

before(async () => {
  svc = await startBatteryService({ WORKERS: '2' });
  key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
  v1Key = await createTestKey(svc, { challengePolicy: { version: 1, counterMin: 1, maxnumber: 200 } });
});

after(async () => {
  await svc?.stop();
});

test(`fuzz: ${RUNS.toLocaleString('en')} random and mutated requests over every route; no 5xx, no exit`, async () => {
  const pool = new ConnectionPool(svc.port, CONNECTIONS);
  const workers = await childPids(svc.proc.pid!);
  const material = await prepare(pool);
  const arb = requestArb(material);
  const statuses = new Tally();
  const fiveHundreds: string[] = [];
  const unanswered: string[] = [];
  const started = performance.now();
  let sent = 0;
  let slowest = { ms: 0, what: '' };
  for (let chunk = 0; sent < RUNS; chunk++) {
    const requests = fc.sample(arb, { numRuns: Math.min(CHUNK, RUNS - sent), seed: SEED + chunk });
    let next = 0;
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        try {
          const res = await pool.send(rawRequest(r.method, r.path, r.body, r.headers));
          statuses.add(String(res.status));
          if (res.ms > slowest.ms) slowest = { ms: res.ms, what: `${r.method} ${r.path.slice(0, 60)} → ${res.status}` };
          if (res.status >= 500) fiveHundreds.push(`${res.status} ${r.method} ${r.path.slice(0, 80)} → ${res.body.slice(0, 80)}`);
        } catch (err) {
          unanswered.push(`${r.method} ${r.path.slice(0, 80)}: ${err instanceof ConnectionError ? err.code : String(err)}`);
        }
      }
    }));
    sent += requests.length;
  }
  const seconds = (performance.now() - started) / 1000;
  pool.close();
  const workersAfter = await childPids(svc.proc.pid!);
  const deaths = svc.output.filter((l) => l.includes('worker died') || l.includes('crash loop'));

  report('fuzz', `${sent.toLocaleString('en')} requests in ${seconds.toFixed(1)} s (${(sent / seconds).toFixed(0)}/s), seed ${SEED}: ` +
    `statuses ${statuses}; 5xx ${fiveHundreds.length}, unanswered ${unanswered.length}, worker exits ${deaths.length}; ` +
    `slowest ${slowest.ms.toFixed(0)} ms (${slowest.what})`);

  assert.deepEqual(fiveHundreds.slice(0, 10), [], `no 5xx (seed ${SEED})`);
  assert.deepEqual(unanswered.slice(0, 10), [], `every request answered (seed ${SEED})`);
  assert.deepEqual(deaths, []);
  assert.deepEqual(workersAfter, workers, 'the same workers');
  assert.equal(svc.proc.exitCode, null, 'the primary runs');
});

async function prepare(pool: ConnectionPool): Promise<Material> {
  const solve = async (id: string, v1: boolean) => {
    const ch = await pool.request('GET', `/v1/challenge?apiKey=${id}`);
    assert.equal(ch.status, 200, ch.body);
    return v1 ? (await solveV1(ch.body)).payload : (await solveV2(ch.body)).payload;
  };
  const payloads = await Promise.all(Array.from({ length: 200 }, () => solve(key.id, false)));
  const v1Payloads = await Promise.all(Array.from({ length: 50 }, () => solve(v1Key.id, true)));
  const verified = await pool.request('POST', `/v1/verify?apiKey=${key.id}`, JSON.stringify({ payload: await solve(key.id, false) }));
  const serverPayload = (JSON.parse(verified.body) as { payload: string }).payload;
  assert.equal(typeof serverPayload, 'string');
  return { keyId: key.id, secret: key.secret, v1KeyId: v1Key.id, payloads, v1Payloads, serverPayload };
}
