// Battery: malformed X-Forwarded-For through the real clustered service behind a trusted proxy
// (X_FORWARDED_FOR_TRUSTED=127.0.0.1/32; the test connects from 127.0.0.1, so it is the proxy).
// A right-most entry that is no bare IP used to resolve to the proxy's own address: the client was
// then whitelisted for /.metrics (127.0.0.1 is in MONITORING_IP_WHITELIST) and spent the proxy's
// flood bucket. Now such a client is unknown: never whitelisted, and counted in one bucket of its
// own. The port forms proxies write resolve to the address they carry, seen in the verify verdict's
// verificationData.ipAddress (ANONYMIZE_IP_ADDRESS=0).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestKey, type Service, type TestKey } from '../helpers/service.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { awayFromWindowEnd } from '../helpers/windows.js';
import { startBatteryService } from './harness.js';

const FLOOD = 8;
const MALFORMED = ['203.0.113.9:4431x', '[2001:db8::1', 'unknown', '203.0.113.9%eth0', '0203.0.113.9', 'fe80::1%eth0'];
const PUBLIC_WARNING = /X_FORWARDED_FOR_TRUSTED covers public addresses/;

let svc: Service;
let key: TestKey;

before(async () => {
  svc = await startBatteryService({
    WORKERS: '2', X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32', ANONYMIZE_IP_ADDRESS: '0', FLOOD_RATE_LIMIT: `${FLOOD}/1m`,
  });
  key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
});

after(async () => {
  await svc?.stop();
});

const get = (path: string, xff?: string) => fetch(`${svc.url}${path}`, xff === undefined ? {} : { headers: { 'x-forwarded-for': xff } });

test('the port forms resolve to the address they carry', async () => {
  const forms: Array<[string, string]> = [
    ['203.0.113.9:4431', '203.0.113.9'], ['[2001:db8::1]', '2001:db8::1'], ['[2001:DB8::7]:4431', '2001:db8::7'],
  ];
  for (const [xff, ip] of forms) {
    const res = await get(`/v1/challenge?apiKey=${key.id}`, xff);
    assert.equal(res.status, 200, xff);
    const { payload } = await solveV2(await res.text());
    const verdict = await fetch(`${svc.url}/v1/verify?apiKey=${key.id}`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': xff }, body: JSON.stringify({ payload }),
    });
    assert.equal(verdict.status, 200, xff);
    const json = (await verdict.json()) as { verified: boolean; verificationData: string };
    assert.equal(json.verified, true, xff);
    assert.equal(new URLSearchParams(json.verificationData).get('ipAddress'), ip, xff);
  }
});

test('a malformed entry from the trusted proxy is not whitelisted, nor counted in the proxy\'s flood bucket', async () => {
  // Every count below must fall in one flood window.
  await awayFromWindowEnd(60_000, 5_000);
  assert.equal((await get('/.metrics')).status, 200, 'the proxy itself is whitelisted (and exempt from the flood limit)');
  for (const xff of MALFORMED) {
    const res = await get('/.metrics', xff);
    assert.equal(res.status, 403, xff);
    assert.deepEqual(await res.json(), { error: 'MONITORING_FORBIDDEN', statusCode: 403 }, xff);
  }
  // Refused monitoring callers are counted: the unknown clients have spent MALFORMED.length.
  for (let i = 0; i < FLOOD; i++) assert.equal((await get('/nowhere')).status, 404, `proxy request ${i + 1}`);
  assert.equal((await get('/nowhere')).status, 429, 'the proxy has spent its bucket');
  for (let i = MALFORMED.length; i < FLOOD; i++) assert.equal((await get('/nowhere', MALFORMED[i % MALFORMED.length])).status, 404, `unknown request ${i + 1}`);
  assert.equal((await get('/nowhere', 'unknown')).status, 429, 'every unknown client counts in the same bucket');
  assert.equal((await get('/nowhere', '198.51.100.20:80')).status, 404, 'a readable client has its own');
});

test('no start-up warning for a loopback proxy; one for a trusted public range', async () => {
  assert.equal(svc.output.some((line) => PUBLIC_WARNING.test(line)), false);
  const open = await startBatteryService({ WORKERS: '0', X_FORWARDED_FOR_TRUSTED: '10.0.0.0/8,0.0.0.0/0' });
  try {
    const line = await open.waitForOutput(PUBLIC_WARNING);
    assert.deepEqual((JSON.parse(line) as { X_FORWARDED_FOR_TRUSTED: string[] }).X_FORWARDED_FOR_TRUSTED, ['0.0.0.0/0']);
  } finally {
    await open.stop();
  }
});
