// Forged v1 payloads through the real service. A v1 challenge signs only its hash, so a salt edited
// to `expires=99999999999` used to reach the claim, whose lifetime the store refused (500), and the
// same forgery could be sent again and again without ever counting as abuse. Now: 200
// {verified:false, reason:'INVALID_SIGNATURE'} every time, never claimed, each one a malicious event
// (palisade_malicious_events_total{reason="invalid_signature"}, also on /challenge/verify, where it
// was counted as a tampered server payload), and past THREATS_MALICIOUS_LIMIT the IP is marked (403
// IP_BLOCKED on challenge and verify). A solved v1 challenge of another key is refused before its
// claim. Clients are told apart by X-Forwarded-For from a trusted peer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { encodePayload, solveV1, type PayloadV1 } from '../helpers/pow-test-server.js';
import { createTestKey, type Service, type TestKey } from '../helpers/service.js';
import { ConnectionPool, metricValue, startBatteryService, waitFor, type TimedResponse } from './harness.js';

const LIMIT = 5;
const V1_POLICY = { challengePolicy: { version: 1 as const, counterMin: 1, maxnumber: 200 } };

let svc: Service;
let a: TestKey;
let b: TestKey;
let pool: ConnectionPool;

before(async () => {
  svc = await startBatteryService({
    WORKERS: '2', THREATS_ENABLED: '1', THREATS_MALICIOUS_LIMIT: `${LIMIT}/5m(expire=1h)`, X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32',
  });
  a = await createTestKey(svc, V1_POLICY);
  b = await createTestKey(svc, V1_POLICY);
  pool = new ConnectionPool(svc.port, 4);
});

after(async () => {
  pool?.close();
  await svc?.stop();
});

const from = (ip: string) => ({ 'x-forwarded-for': ip });
const json = (res: TimedResponse) => [res.status, JSON.parse(res.body) as unknown];
const INVALID_SIGNATURE = [200, { verified: false, reason: 'INVALID_SIGNATURE' }];

async function challengeV1(key: TestKey, ip: string): Promise<string> {
  const res = await pool.request('GET', `/v1/challenge?apiKey=${key.id}`, undefined, from(ip));
  assert.equal(res.status, 200, res.body);
  return res.body;
}

/** A real v1 challenge of `key`, unsolved, its salt's expiry pushed to 99999999999. */
async function forged(key: TestKey, ip: string): Promise<string> {
  const c = JSON.parse(await challengeV1(key, ip)) as { algorithm: string; challenge: string; salt: string; signature: string };
  const salt = c.salt.replace(/expires=\d+/, 'expires=99999999999');
  assert.notEqual(salt, c.salt);
  return encodePayload({ algorithm: c.algorithm, challenge: c.challenge, number: 7, salt, signature: c.signature, took: 1 });
}

async function metric(sample: string): Promise<number> {
  const res = await pool.request('GET', '/.metrics');
  assert.equal(res.status, 200);
  return metricValue(res.body, sample) ?? 0;
}

const MALICIOUS = 'palisade_malicious_events_total{reason="invalid_signature"}';
const TAMPERED = 'palisade_malicious_events_total{reason="tampered"}';
const MARKED = 'palisade_ip_marked_total{kind="malicious"}';
const EVENTS = 'palisade_threat_events_total{kind="malicious"}';

async function counted(sample: string, value: number): Promise<void> {
  await waitFor(`${sample} = ${value}`, async () => (await metric(sample)) === value, 5000);
}

test('/v1/verify: the same forged v1 payload, sent again and again, is INVALID_SIGNATURE each time; past the limit the IP is blocked', async () => {
  const ip = '203.0.113.1';
  const payload = await forged(a, ip);
  const [events0, marked0] = [await metric(EVENTS), await metric(MARKED)];
  for (let i = 0; i < LIMIT; i++) {
    assert.deepEqual(json(await pool.request('POST', `/v1/verify?apiKey=${a.id}`, JSON.stringify({ payload }), from(ip))), INVALID_SIGNATURE, `attempt ${i + 1}`);
  }
  await counted(EVENTS, events0 + LIMIT);
  assert.equal(await metric(MARKED), marked0, 'within the limit: not marked');
  assert.equal((await pool.request('GET', `/v1/challenge?apiKey=${a.id}`, undefined, from(ip))).status, 200);

  assert.deepEqual(json(await pool.request('POST', `/v1/verify?apiKey=${a.id}`, JSON.stringify({ payload }), from(ip))), INVALID_SIGNATURE, 'one past the limit');
  await counted(MARKED, marked0 + 1);
  const blocked = [403, { error: 'IP_BLOCKED', statusCode: 403 }];
  assert.deepEqual(json(await pool.request('POST', `/v1/verify?apiKey=${a.id}`, JSON.stringify({ payload }), from(ip))), blocked);
  assert.deepEqual(json(await pool.request('GET', `/v1/challenge?apiKey=${a.id}`, undefined, from(ip))), blocked);
  // Another client is untouched.
  assert.equal((await pool.request('GET', `/v1/challenge?apiKey=${a.id}`, undefined, from('203.0.113.9'))).status, 200);
});

test('/challenge/verify: forged v1 payloads are INVALID_SIGNATURE, counted as invalid signatures (not tampered server payloads); past the limit the IP is marked', async () => {
  const ip = '203.0.113.2';
  const payload = await forged(a, ip);
  const [malicious0, tampered0, marked0] = [await metric(MALICIOUS), await metric(TAMPERED), await metric(MARKED)];
  const auth = { ...from(ip), authorization: `Bearer ${a.secret}` };
  for (let i = 0; i <= LIMIT; i++) {
    assert.deepEqual(json(await pool.request('POST', '/challenge/verify', JSON.stringify({ payload }), auth)), INVALID_SIGNATURE, `attempt ${i + 1}`);
  }
  await counted(MALICIOUS, malicious0 + LIMIT + 1);
  await counted(MARKED, marked0 + 1);
  assert.equal(await metric(TAMPERED), tampered0);
  assert.deepEqual(json(await pool.request('GET', `/v1/challenge?apiKey=${a.id}`, undefined, from(ip))), [403, { error: 'IP_BLOCKED', statusCode: 403 }]);
});

test('a solved v1 challenge of another key is refused before its claim, also with its salt edited to name the key', async () => {
  const ip = '203.0.113.3';
  const solvedB = async () => (await solveV1(await challengeV1(b, ip))).fields;
  const verify = (key: TestKey, fields: PayloadV1) =>
    pool.request('POST', `/v1/verify?apiKey=${key.id}`, JSON.stringify({ payload: encodePayload(fields) }), from(ip));

  // Issued to b (its salt says apiKey=b), sent as a's: refused; still unspent for b.
  const one = await solvedB();
  assert.match(one.salt, new RegExp(`&apiKey=${b.id}&`));
  assert.deepEqual(json(await verify(a, one)), INVALID_SIGNATURE);
  assert.equal((JSON.parse((await verify(b, one)).body) as { verified: boolean }).verified, true);

  // Its salt edited to name a: the salt no longer hashes to the signed challenge, which cannot be
  // told from a wrong number (only the hash is signed), so INVALID_SOLUTION; unclaimed all the same.
  const two = await solvedB();
  assert.deepEqual(json(await verify(a, { ...two, salt: two.salt.replace(b.id, a.id) })), [200, { verified: false, reason: 'INVALID_SOLUTION' }]);
  assert.equal((JSON.parse((await verify(b, two)).body) as { verified: boolean }).verified, true);

  // Server-side, authorised as a: refused; then as b, accepted once.
  const three = await solvedB();
  const body = JSON.stringify({ payload: encodePayload(three) });
  assert.deepEqual(json(await pool.request('POST', '/challenge/verify', body, { ...from(ip), authorization: `Bearer ${a.secret}` })), INVALID_SIGNATURE);
  assert.deepEqual(json(await pool.request('POST', '/challenge/verify', body, { ...from(ip), authorization: `Bearer ${b.secret}` })), [200, { verified: true }]);
  assert.deepEqual(json(await pool.request('POST', '/challenge/verify', body, { ...from(ip), authorization: `Bearer ${b.secret}` })), [200, { verified: false, reason: 'PAYLOAD_ALREADY_USED' }]);
});
