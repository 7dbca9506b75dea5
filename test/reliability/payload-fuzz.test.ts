// Widget payloads fuzzed parameter by parameter (fuzz-payloads.ts: solved v1 and v2 payloads with one
// to three parameters changed, some signed again as if issued so the changes fall on both sides of
// the signature check). Two properties, each a bounded run of a few seconds:
// - verifyPayload with a recording claimOnce: nothing is claimed unless the payload's signature
//   holds for the key it is verified for (v2: the parameters' HMAC and data.apiKey; v1: the hash's
//   HMAC, SHA(salt + number) equal to that hash, and the salt's apiKey), and then under the id the
//   protocol names; every claim's moment is one the stores accept (no RangeError → 500); it never
//   throws; a verified payload was claimed exactly once.
// - the real service, POST /v1/verify and POST /challenge/verify: never a 5xx, always
//   200 {verified, reason?} or 400 {error, statusCode}.
// PAYLOAD_FUZZ_SEED=<n> replays a run; PAYLOAD_FUZZ_RUNS=<n> changes the count of the first.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { createChallenge } from '../../src/pow/challenge.js';
import { hmacPreparedHex, sha } from '../../src/pow/crypto.js';
import { canonicalJson, decodePayload, isObject } from '../../src/pow/payload.js';
import { resolvePolicy } from '../../src/pow/policy.js';
import { preparePowSecrets } from '../../src/pow/secrets.js';
import { VERIFY_FAILURES, verifyPayload, type VerifyResult } from '../../src/pow/verify.js';
import { checkUntil } from '../../src/store/state-store.js';
import { solveV1, solveV2 } from '../helpers/pow-test-server.js';
import { createTestKey, type Service, type TestKey } from '../helpers/service.js';
import { payloadArb, V1_HASH, type FuzzPayload, type PayloadMaterial } from './fuzz-payloads.js';
import { ConnectionPool, report, startBatteryService, Tally } from './harness.js';

const SEED = Number(process.env.PAYLOAD_FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.PAYLOAD_FUZZ_RUNS ?? 20_000);
const HTTP_REQUESTS = 2000;
const HMAC_SECRET = 'payload-fuzz-hmac-secret-0123456789abcdef';
const secrets = preparePowSecrets(HMAC_SECRET);
const LIMITS = { maxMemoryBytes: 128 * 1024 * 1024 };

/** The claim id the protocol names when the payload's signature holds for `keyId`, else null. */
function signedClaimId(b64: string, keyId: string): string | null {
  const p = decodePayload(b64);
  if (!isObject(p)) return null;
  if (isObject(p.challenge)) {
    const params = p.challenge.parameters;
    if (!isObject(params) || typeof p.challenge.signature !== 'string') return null;
    if (hmacPreparedHex(secrets.challenge, canonicalJson(params)) !== p.challenge.signature) return null;
    const data = params.data;
    if (!isObject(data) || data.apiKey !== keyId) return null;
    return `pow2:${typeof data.challengeId === 'string' ? data.challengeId : String(params.nonce)}`;
  }
  const alg = V1_HASH[p.algorithm as string];
  if (alg === undefined || typeof p.challenge !== 'string' || typeof p.salt !== 'string' || typeof p.number !== 'number') return null;
  if (hmacPreparedHex(secrets.v1[alg], p.challenge) !== p.signature) return null;
  if (sha(alg, p.salt + p.number).toString('hex') !== p.challenge) return null;
  if (/[?&]apiKey=([^&]*)&/.exec(p.salt)?.[1] !== keyId) return null;
  return `pow1:${p.challenge}`;
}

async function inProcessMaterial(): Promise<PayloadMaterial> {
  const keyId = 'key_payloadfuzz0000000000000';
  const v1KeyId = 'key_payloadfuzzv100000000000';
  const v2 = [];
  for (const [policy, n] of [
    [{ counterMin: 0, counterMax: 20 }, 12],
    [{ mode: 'probabilistic', keyPrefixLength: 1 }, 6],
    [{ algorithm: 'PBKDF2/SHA-256', cost: 10, counterMin: 0, counterMax: 10 }, 3],
  ] as const) {
    for (let i = 0; i < n; i++) {
      v2.push((await solveV2(await createChallenge(resolvePolicy(policy, LIMITS), { secrets, apiKeyId: keyId, params: i % 3 === 0 ? { plan: 'pro' } : null }))).payload);
    }
  }
  const v1 = [];
  for (const algorithm of ['SHA-256', 'SHA-256', 'SHA-384', 'SHA-512'] as const) {
    for (let i = 0; i < 4; i++) {
      v1.push((await solveV1(await createChallenge(resolvePolicy({ version: 1, algorithm, counterMax: 200 }, LIMITS), { secrets, apiKeyId: v1KeyId, params: i % 2 === 0 ? { plan: 'pro' } : null }))).payload);
    }
  }
  return { v2, v1, keyId, v1KeyId, secrets };
}

test(`payload fuzz (verifyPayload): ${RUNS.toLocaleString('en')} changed payloads; nothing claimed before the signature holds`, async () => {
  const material = await inProcessMaterial();
  const outcomes = new Tally();
  let claimed = 0;
  let resignedClaims = 0;
  const started = performance.now();
  await fc.assert(fc.asyncProperty(payloadArb(material), async (fp: FuzzPayload) => {
    const claims: { id: string; untilMs: number; now: number }[] = [];
    const deps = {
      secrets,
      claimOnce: (id: string, untilMs: number) => {
        claims.push({ id, untilMs, now: Date.now() });
        return true;
      },
    };
    let result: VerifyResult;
    try {
      result = await verifyPayload(fp.payload, deps, fp.keyId);
    } catch (err) {
      assert.fail(`verifyPayload threw ${String(err)} after ${fp.changes.join('; ')}`);
    }
    outcomes.add(result.verified ? 'verified' : result.reason);
    if (!result.verified) assert.ok((VERIFY_FAILURES as readonly string[]).includes(result.reason));
    if (claims.length === 0) {
      assert.equal(result.verified, false, `verified without a claim after ${fp.changes.join('; ')}`);
      return;
    }
    claimed++;
    if (fp.changes.some((c) => c.includes('signed again'))) resignedClaims++;
    assert.equal(claims.length, 1, 'one claim per verification');
    const expected = signedClaimId(fp.payload, fp.keyId);
    assert.ok(expected !== null, `claimed ${claims[0]!.id} although the signature does not hold, after ${fp.changes.join('; ')}`);
    assert.equal(claims[0]!.id, expected);
    assert.doesNotThrow(() => checkUntil(claims[0]!.untilMs, claims[0]!.now), `claim moment ${claims[0]!.untilMs} after ${fp.changes.join('; ')}`);
  }), { numRuns: RUNS, seed: SEED });
  const seconds = (performance.now() - started) / 1000;
  report('payload fuzz', `${RUNS} payloads in ${seconds.toFixed(1)} s, seed ${SEED}: ${outcomes}; claimed ${claimed} (${resignedClaims} signed again)`);
  // The run crossed the signature boundary both ways.
  assert.ok(claimed > 0 && resignedClaims > 0 && (outcomes.counts.get('INVALID_SIGNATURE') ?? 0) > 0, String(outcomes));
});

let svc: Service;
let key: TestKey;
let v1Key: TestKey;

before(async () => {
  svc = await startBatteryService({ WORKERS: '2', PALISADE_HMAC_SECRET: HMAC_SECRET });
  key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
  v1Key = await createTestKey(svc, { challengePolicy: { version: 1, counterMin: 1, maxnumber: 200 } });
});

after(async () => {
  await svc?.stop();
});

test(`payload fuzz (HTTP): ${HTTP_REQUESTS.toLocaleString('en')} changed payloads to /v1/verify and /challenge/verify; never a 5xx`, async () => {
  const pool = new ConnectionPool(svc.port, 16);
  const solve = async (k: TestKey, v1: boolean) => {
    const ch = await pool.request('GET', `/v1/challenge?apiKey=${k.id}`);
    assert.equal(ch.status, 200, ch.body);
    return v1 ? (await solveV1(ch.body)).payload : (await solveV2(ch.body)).payload;
  };
  const material: PayloadMaterial = {
    v2: await Promise.all(Array.from({ length: 30 }, () => solve(key, false))),
    v1: await Promise.all(Array.from({ length: 30 }, () => solve(v1Key, true))),
    keyId: key.id, v1KeyId: v1Key.id, secrets,
  };
  const secretOf = (id: string) => (id === v1Key.id ? v1Key.secret : key.secret);
  const samples = fc.sample(payloadArb(material), { numRuns: HTTP_REQUESTS, seed: SEED });
  const statuses = new Tally();
  const bad: string[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < samples.length) {
      const i = next++;
      const fp = samples[i]!;
      const body = JSON.stringify({ payload: fp.payload });
      const res = i % 2 === 0
        ? await pool.request('POST', `/v1/verify?apiKey=${fp.keyId}`, body)
        : await pool.request('POST', '/challenge/verify', body, { authorization: `Bearer ${secretOf(fp.keyId)}` });
      const json = JSON.parse(res.body) as Record<string, unknown>;
      const route = i % 2 === 0 ? '/v1/verify' : '/challenge/verify';
      statuses.add(`${res.status} ${String(json.reason ?? json.error ?? (json.verified === true ? 'verified' : '?'))}`);
      const shaped = (res.status === 200 && typeof json.verified === 'boolean') ||
        (res.status === 400 && typeof json.error === 'string' && json.statusCode === 400);
      if (!shaped) bad.push(`${res.status} ${route} ${res.body.slice(0, 80)} after ${fp.changes.join('; ')}`);
    }
  }));
  pool.close();
  report('payload fuzz (HTTP)', `${samples.length} requests in ${((performance.now() - started) / 1000).toFixed(1)} s, seed ${SEED}: ${statuses}`);
  assert.deepEqual(bad.slice(0, 10), [], `every answer 200 {verified} or 400 {error} (seed ${SEED})`);
});
