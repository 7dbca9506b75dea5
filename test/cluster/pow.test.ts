// Proof of work end to end against the running clustered service, with altcha-lib as the client.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyFieldsHash, verifyServer, verifyServerSignature } from 'altcha-lib';
import { verifySolution as verifySolutionV1 } from 'altcha-lib/v1';
import { REDIS_URL, requireService } from '../helpers/services.js';
import { createTestKey, startService, type Service, type TestKey } from '../helpers/service.js';
import { connect } from 'node:net';
import { RawClient } from '../helpers/http-client.js';
import { encodePayload, solveV1, solveV2 } from '../helpers/pow-test-server.js';
import { poolCounters } from '../../bench/lib/stocked-pool.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

async function challenge(svc: Service, key: TestKey, query = ''): Promise<string> {
  const res = await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}${query}`);
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('cache-control'), 'no-store');
  return res.text();
}

async function verify(svc: Service, key: TestKey, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${svc.url}/v1/verify?apiKey=${key.id}`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

// Light policies so that solving stays quick; every algorithm in both modes.
const POLICIES: Record<string, Record<string, unknown>> = {
  'SHA-256 deterministic': { algorithm: 'SHA-256', counterMin: 100, counterMax: 300 },
  'SHA-384 deterministic': { algorithm: 'SHA-384', counterMin: 100, counterMax: 300 },
  'SHA-512 deterministic': { algorithm: 'SHA-512', counterMin: 100, counterMax: 300 },
  'PBKDF2/SHA-256 deterministic': { algorithm: 'PBKDF2/SHA-256', cost: 50, counterMin: 10, counterMax: 40 },
  'PBKDF2/SHA-384 deterministic': { algorithm: 'PBKDF2/SHA-384', cost: 50, counterMin: 10, counterMax: 40 },
  'PBKDF2/SHA-512 deterministic': { algorithm: 'PBKDF2/SHA-512', cost: 50, counterMin: 10, counterMax: 40 },
  'SCRYPT deterministic': { algorithm: 'SCRYPT', cost: 256, memoryCost: 8, counterMin: 2, counterMax: 10 },
  'ARGON2ID deterministic': { algorithm: 'ARGON2ID', cost: 1, memoryCost: 256, counterMin: 2, counterMax: 10 },
  'SHA-256 probabilistic': { algorithm: 'SHA-256', mode: 'probabilistic', keyPrefixLength: 2 },
  'SHA-384 probabilistic': { algorithm: 'SHA-384', mode: 'probabilistic', keyPrefixLength: 2 },
  'SHA-512 probabilistic': { algorithm: 'SHA-512', mode: 'probabilistic', keyPrefixLength: 2 },
  'PBKDF2/SHA-256 probabilistic': { algorithm: 'PBKDF2/SHA-256', mode: 'probabilistic', cost: 20, keyPrefixLength: 1 },
  'PBKDF2/SHA-384 probabilistic': { algorithm: 'PBKDF2/SHA-384', mode: 'probabilistic', cost: 20, keyPrefixLength: 1 },
  'PBKDF2/SHA-512 probabilistic': { algorithm: 'PBKDF2/SHA-512', mode: 'probabilistic', cost: 20, keyPrefixLength: 1 },
  'SCRYPT probabilistic': { algorithm: 'SCRYPT', mode: 'probabilistic', cost: 256, memoryCost: 8, keyPrefixLength: 1 },
  'ARGON2ID probabilistic': { algorithm: 'ARGON2ID', mode: 'probabilistic', cost: 1, memoryCost: 256, keyPrefixLength: 1 },
};

describe('proof of work on the clustered service (shared-memory store)', () => {
  let svc: Service;
  let key: TestKey;
  before(async () => {
    svc = await startService({ env: { WORKERS: '2', CACHE_DURATION_API_KEYS: '1s' } });
    key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
  });
  after(async () => { await svc.stop(); });

  for (const [name, policy] of Object.entries(POLICIES)) {
    test(`${name}: altcha-lib solves, /v1/verify accepts once, the server payload checks out`, async () => {
      const k = await createTestKey(svc, { challengePolicy: policy });
      const body = await challenge(svc, k, '&params.plan=pro');
      const parsed = JSON.parse(body) as { parameters: { algorithm: string }; configuration: { verifyUrl: string } };
      assert.equal(parsed.parameters.algorithm, policy.algorithm);
      assert.equal(parsed.configuration.verifyUrl, `/v1/verify?apiKey=${k.id}`);
      const { payload } = await solveV2(body);
      const fields = { name: 'Ann', message: 'hello\nworld' };
      const first = await verify(svc, k, { payload, fields });
      assert.equal(first.status, 200);
      assert.equal(first.json.verified, true, JSON.stringify(first.json));
      assert.equal(first.json.apiKey, k.id);
      const server = first.json.payload as string;
      const decoded = JSON.parse(Buffer.from(server, 'base64').toString('utf8')) as never;
      assert.equal((await verifyServerSignature({ payload: decoded, hmacSecret: k.secret })).verified, true);
      assert.equal((await verifyServerSignature({ payload: decoded, hmacSecret: key.secret })).verified, false);
      const data = new URLSearchParams(first.json.verificationData as string);
      assert.equal(data.get('verified'), 'true');
      // Earlier tests' replays from this address raised its penalty: the class follows the score.
      const score = Number(data.get('score'));
      assert.equal(data.get('classification'), score < 1 ? 'GOOD' : score < 2 ? 'NEUTRAL' : 'BAD');
      assert.equal(data.get('challengeAlgorithm'), policy.algorithm);
      assert.equal(data.get('params.plan'), 'pro');
      assert.equal(data.get('ipAddress'), '127.0.0.0');
      assert.equal(await verifyFieldsHash({ formData: fields, fields: ['name', 'message'], fieldsHash: data.get('fieldsHash')! }), true);
      const again = await verify(svc, k, { payload, fields });
      assert.deepEqual(again, { status: 200, json: { verified: false, reason: 'PAYLOAD_ALREADY_USED' } });
    });
  }

  test('v1 keys: altcha-lib/v1 solves and verifies, the service accepts once', async () => {
    const k = await createTestKey(svc, { challengePolicy: { version: 1, counterMin: 100, maxnumber: 2000 } });
    const body = await challenge(svc, k);
    const c = JSON.parse(body) as { algorithm: string; salt: string };
    assert.equal(c.algorithm, 'SHA-256');
    assert.match(c.salt, /\?expires=\d+&/);
    const { payload, fields } = await solveV1(body);
    const secretless = await verifySolutionV1(fields as never, 'not-the-secret-aaaaaaaaaaaaaaaa');
    assert.equal(secretless, false);
    assert.equal((await verify(svc, k, { payload })).json.verified, true);
    assert.deepEqual((await verify(svc, k, { payload })).json, { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
  });

  test('/v1/verify/signature with altcha-lib verifyServer: once, then PAYLOAD_ALREADY_USED', async () => {
    const { payload } = await solveV2(await challenge(svc, key));
    const server = (await verify(svc, key, { payload })).json.payload as string;
    const url = `${svc.url}/v1/verify/signature`;
    const first = await verifyServer({ payload: server, url, secret: key.secret });
    assert.equal(first.verified, true);
    assert.equal(first.apiKey, key.id);
    const second = await verifyServer({ payload: server, url, secret: key.secret });
    assert.deepEqual([second.verified, second.reason], [false, 'PAYLOAD_ALREADY_USED']);
  });

  test('/challenge/verify (server side, Bearer secret): a widget payload once', async () => {
    const { payload } = await solveV2(await challenge(svc, key));
    const post = (auth: string) => fetch(`${svc.url}/challenge/verify`, {
      method: 'POST', headers: { ...JSON_HEADERS, authorization: auth }, body: JSON.stringify({ payload }),
    });
    let res = await post('Bearer sec_wrongwrongwrongwrongwrongwrongwr');
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'API_KEY_INVALID', statusCode: 401 });
    res = await post(`Bearer ${key.secret}`);
    assert.deepEqual(await res.json(), { verified: true });
    res = await post(`Bearer ${key.secret}`);
    assert.deepEqual(await res.json(), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
  });

  test('hostile input: codes, no 5xx, no acceptance', async () => {
    const { challenge: ch, solution } = await solveV2(await challenge(svc, key)).then((x) => ({ challenge: x.challenge, solution: x.solution }));
    const tampered = encodePayload({ challenge: { ...ch, signature: '0'.repeat(64) }, solution });
    assert.deepEqual((await verify(svc, key, { payload: tampered })).json, { verified: false, reason: 'INVALID_SIGNATURE' });
    const upper = encodePayload({ challenge: ch, solution: { ...solution, derivedKey: solution.derivedKey.toUpperCase() } });
    assert.equal((await verify(svc, key, { payload: upper })).json.verified, false);
    // A payload string that is not a solution is a failed verification the widget can show…
    for (const payload of ['not base64 !!', Buffer.from('not json').toString('base64'), encodePayload({ challenge: 1, solution: [] })]) {
      assert.deepEqual(await verify(svc, key, { payload }), { status: 200, json: { verified: false, reason: 'INVALID_PAYLOAD' } });
    }
    // …a body without one is malformed.
    for (const body of [{ payload: 42 }, {}, [], 'payload']) {
      const r = await verify(svc, key, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.json, { error: 'INVALID_PAYLOAD', statusCode: 400 });
    }
    // A 2 MB body is refused on its declared length and the connection closed at once. Only the
    // header section is sent: a client still writing the body when the service closes may get a
    // reset (EPIPE) instead of the answer, which says nothing about the service.
    assert.match(await rawAnswer(svc.port, `POST /v1/verify?apiKey=${key.id} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      'Content-Type: application/json\r\nContent-Length: 2000015\r\n\r\n'), /^HTTP\/1\.1 413 .*"error":"BODY_TOO_LARGE"/s);
    const noKey = await fetch(`${svc.url}/v1/verify`, { method: 'POST', headers: JSON_HEADERS, body: '{"payload":"x"}' });
    assert.deepEqual(await noKey.json(), { error: 'API_KEY_REQUIRED', statusCode: 401 });
    const wrongKey = await fetch(`${svc.url}/v1/challenge?apiKey=key_AAAAAAAAAAAAAAAAAAAAAAAA`);
    assert.deepEqual(await wrongKey.json(), { error: 'API_KEY_INVALID', statusCode: 401 });
  });

  test('exactly once: 1,000 payloads x 50 concurrent submissions across workers', async () => {
    await exactlyOnce(svc, key);
  });
});

describe('the challenge pool on the service (CHALLENGE_POOL_SIZE=5, one worker)', () => {
  let svc: Service;
  before(async () => {
    svc = await startService({ env: { WORKERS: '1', CHALLENGE_POOL_SIZE: '5' } });
  });
  after(async () => { await svc.stop(); });

  // The pool's gauge and counters from /.metrics (the parser the bench's S4 uses too).
  const pool = () => poolCounters(svc.url);

  async function until(ready: number): Promise<void> {
    const deadline = Date.now() + 15_000;
    while ((await pool()).ready !== ready) {
      assert.ok(Date.now() < deadline, `the pool did not reach ${ready} ready challenges`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  test('fills to the configured size, refills below a quarter of it, and the metrics count every take', async () => {
    // PBKDF2/SHA-256 cost 1,100 is above the inline limit: pooled.
    const k = await createTestKey(svc, { challengePolicy: { algorithm: 'PBKDF2/SHA-256', cost: 1100, counterMin: 1, counterMax: 4 } });
    assert.deepEqual(await pool(), { ready: 0, fromStock: 0, waited: 0, refused: 0 });
    // The first request finds no pool: it waits for a derivation, then the pool fills to exactly 5.
    const first = await challenge(svc, k);
    await until(5);
    assert.deepEqual(await pool(), { ready: 5, fromStock: 0, waited: 1, refused: 0 });
    // Three from stock leave 2, the low-water mark (ceil(5 / 4)): no refill yet.
    const three = await Promise.all([challenge(svc, k), challenge(svc, k), challenge(svc, k)]);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(await pool(), { ready: 2, fromStock: 3, waited: 1, refused: 0 });
    // One more goes below it: refilled back to 5.
    const fifth = await challenge(svc, k);
    await until(5);
    assert.deepEqual(await pool(), { ready: 5, fromStock: 4, waited: 1, refused: 0 });
    // Every pooled challenge is distinct and verifies once.
    const bodies = [first, ...three, fifth];
    const salts = new Set(bodies.map((b) => (JSON.parse(b) as { parameters: { salt: string } }).parameters.salt));
    assert.equal(salts.size, 5);
    for (const body of bodies) {
      const { payload } = await solveV2(body);
      assert.equal((await verify(svc, k, { payload })).json.verified, true);
      assert.deepEqual((await verify(svc, k, { payload })).json, { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
    }
  });
});

describe('proof of work with the Redis store', async () => {
  const skip = !(await requireService('redis'));
  let svc: Service;
  let key: TestKey;
  before(async () => {
    if (skip) return;
    svc = await startService({ env: { WORKERS: '2', REDIS_URL } });
    key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
  });
  after(async () => { await svc?.stop(); });

  test('exactly once: 1,000 payloads x 50 concurrent submissions across workers', { skip }, async () => {
    const health = (await (await fetch(`${svc.url}/.health`)).json()) as { checks: { redis: { kind: string; ok: boolean } } };
    assert.deepEqual([health.checks.redis.kind, health.checks.redis.ok], ['redis', true]);
    await exactlyOnce(svc, key);
  });
});

async function exactlyOnce(svc: Service, key: TestKey): Promise<void> {
  const started = Date.now();
  const payloads: string[] = [];
  for (let i = 0; i < 1000; i += 50) {
    const batch = await Promise.all(Array.from({ length: 50 }, async () => (await solveV2(await challenge(svc, key))).payload));
    payloads.push(...batch);
  }
  const solved = Date.now();
  const outcomes = new Map<string, number>();
  let ok = 0;
  // 64 connections spread over the workers; each payload's 50 submissions go out at once on
  // different connections, 20 payloads at a time.
  const client = new RawClient(svc.port, 64);
  try {
    for (let i = 0; i < payloads.length; i += 20) {
      const results = await Promise.all(payloads.slice(i, i + 20).flatMap((payload) => Array.from({ length: 50 }, async () => {
        const r = await client.request('POST', `/v1/verify?apiKey=${key.id}`, JSON.stringify({ payload }));
        const json = JSON.parse(r.body) as Record<string, unknown>;
        return r.status === 200 && json.verified === true ? 'OK' : `${r.status}:${String(json.reason ?? json.error)}`;
      })));
      for (const r of results) {
        if (r === 'OK') ok++;
        outcomes.set(r, (outcomes.get(r) ?? 0) + 1);
      }
    }
  } finally {
    client.close();
  }
  console.log(`exactly once (${svc.env.REDIS_URL ? 'redis' : 'shared memory'}): 1,000 payloads solved in ${solved - started} ms, 50,000 verifications in ${Date.now() - solved} ms`);
  assert.equal(ok, 1000);
  assert.deepEqual(Object.fromEntries(outcomes), { OK: 1000, '200:PAYLOAD_ALREADY_USED': 49_000 });
}

/** Sends `request` as is and resolves with everything the service answers before it closes (10 s at most). */
function rawAnswer(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`no close within 10 s; got ${JSON.stringify(text)}`)); }, 10_000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => { text += chunk; });
    socket.once('error', (err) => { clearTimeout(timer); reject(err); });
    socket.once('close', () => { clearTimeout(timer); resolve(text); });
  });
}
