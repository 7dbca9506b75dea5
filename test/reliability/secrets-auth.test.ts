// Battery item 10: secrets and authorisation. Every variant below must be refused with its exact
// code, and the unaltered request (the control) accepted: Bearer secrets wrong, off by one character
// at every position, truncated to every length, extended, case-flipped; HMAC-signed requests with the
// signature off by one byte at every position, truncated, made with another key's secret or over a
// changed method, path, query or body; salts replayed (also 20 at once across both workers: exactly
// one accepted), expired, from the future, malformed; server payloads and challenges whose
// signatures are off by one byte; the X-IP-Headers-Secret wrong or truncated; the monitoring
// endpoints from outside the whitelist with spoofed X-Forwarded-For, X-Real-IP, CF-Connecting-IP and
// True-Client-IP, directly and through a trusted proxy.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { after, before, test } from 'node:test';
import { encodePayload, solveV2 } from '../helpers/pow-test-server.js';
import { createTestKey, type Service, type TestKey } from '../helpers/service.js';
import { ConnectionPool, HttpConnection, report, startBatteryService, Tally, type TimedResponse } from './harness.js';

const IP_HEADERS_SECRET = 'ip-headers-secret-0123456789abcdef';
const MONITORING = ['/.live', '/.ready', '/.health', '/.metrics', '/.logs'];

let svc: Service;
let key: TestKey;
let other: TestKey;
let pool: ConnectionPool;
const refusals = new Tally();

before(async () => {
  svc = await startBatteryService({
    WORKERS: '2', MONITORING_IP_WHITELIST: '127.0.0.1/32,::1/128', X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32', IP_HEADERS_SECRET,
  });
  key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
  other = await createTestKey(svc);
  pool = new ConnectionPool(svc.port, 24);
});

after(async () => {
  pool?.close();
  await svc?.stop();
  const total = [...refusals.counts.values()].reduce((a, b) => a + b, 0);
  report('secrets and auth', `${total} altered requests, every one refused with its code: ${refusals}`);
});

/** Asserts the JSON error `{error: code, statusCode: status}` and counts the refusal. */
function refused(res: TimedResponse, status: number, code: string, what: string): void {
  assert.deepEqual([res.status, JSON.parse(res.body)], [status, { error: code, statusCode: status }], what);
  refusals.add(code);
}

async function widgetPayload(): Promise<string> {
  const ch = await pool.request('GET', `/v1/challenge?apiKey=${key.id}`);
  assert.equal(ch.status, 200);
  return (await solveV2(ch.body)).payload;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const changeChar = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
const flipByte = (hex: string, byte: number) =>
  hex.slice(0, byte * 2) + ((parseInt(hex.slice(byte * 2, byte * 2 + 2), 16) ^ 0x01).toString(16).padStart(2, '0')) + hex.slice(byte * 2 + 2);

function sign(secret: string, salt: string, method: string, path: string, body: string): Record<string, string> {
  const signature = createHmac('sha256', secret).update(`${salt}\n${method}\n${path}\n${body}`).digest('hex');
  return { authorization: `Bearer ${key.id}`, 'x-hmac-signature': signature, 'x-hmac-signature-salt': salt };
}
const freshSalt = (offsetS = 0) => `${Math.floor(Date.now() / 1000) + offsetS}.${randomBytes(16).toString('base64url')}`;

test('Bearer secrets: wrong, off by one character anywhere, truncated to any length, extended or case-flipped are refused', async () => {
  const body = JSON.stringify({ payload: await widgetPayload() });
  const ok = await pool.request('POST', '/challenge/verify', body, bearer(key.secret));
  assert.deepEqual([ok.status, JSON.parse(ok.body)], [200, { verified: true }], 'the control is accepted');
  const variants: [string, string][] = [
    ['wrong', `sec_${randomBytes(24).toString('base64').replace(/[^A-Za-z0-9]/g, 'x').slice(0, 32)}`],
    ['extended', `${key.secret}A`],
    ['case-flipped', key.secret.slice(0, 4) + [...key.secret.slice(4)].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('')],
  ];
  for (let i = 0; i < key.secret.length; i++) variants.push([`character ${i} changed`, changeChar(key.secret, i)]);
  for (let n = 1; n < key.secret.length; n++) variants.push([`truncated to ${n}`, key.secret.slice(0, n)]);
  const answers = await Promise.all(variants.map(([, s]) => pool.request('POST', '/challenge/verify', body, bearer(s))));
  answers.forEach((res, i) => refused(res, 401, 'API_KEY_INVALID', variants[i]![0]));
  refused(await pool.request('POST', '/challenge/verify', body, { authorization: 'Bearer ' }), 401, 'AUTHORIZATION_REQUIRED', 'empty');
  refused(await pool.request('POST', '/challenge/verify', body, { authorization: key.secret }), 401, 'AUTHORIZATION_REQUIRED', 'no scheme');
  refused(await pool.request('GET', '/usage', undefined, bearer(key.secret.slice(0, 20))), 401, 'API_KEY_INVALID', '/usage truncated');
  // /v1/verify/signature takes the secret in the body: a wrong one is a failed verification.
  const server = (JSON.parse((await pool.request('POST', `/v1/verify?apiKey=${key.id}`, JSON.stringify({ payload: await widgetPayload() }))).body) as { payload: string }).payload;
  for (const secret of [changeChar(key.secret, 10), key.secret.slice(0, 31), other.secret, '']) {
    const res = await pool.request('POST', '/v1/verify/signature', JSON.stringify({ payload: server, secret }));
    assert.equal(res.status, 200);
    const json = JSON.parse(res.body) as { verified: boolean; reason: string };
    assert.deepEqual([json.verified, json.reason], [false, 'API_KEY_INVALID'], `verify/signature with ${secret.length} characters`);
    refusals.add('API_KEY_INVALID');
  }
  const good = JSON.parse((await pool.request('POST', '/v1/verify/signature', JSON.stringify({ payload: server, secret: key.secret }))).body) as { verified: boolean };
  assert.equal(good.verified, true, 'the control is accepted');
});

test('HMAC-signed requests: a signature off by one byte anywhere, truncated, by another key, or over another request is refused; salts are single-use and timed', async () => {
  const path = '/usage?month=2026-01';
  const ok = await pool.request('GET', path, undefined, sign(key.secret, freshSalt(), 'GET', path, ''));
  assert.equal(ok.status, 200, `the control is accepted: ${ok.body}`);

  const salt = freshSalt();
  const good = sign(key.secret, salt, 'GET', path, '');
  const variants: [string, Record<string, string>][] = [];
  for (let b = 0; b < 32; b++) variants.push([`byte ${b} flipped`, { ...good, 'x-hmac-signature': flipByte(good['x-hmac-signature']!, b) }]);
  variants.push(['another key\'s secret', sign(other.secret, salt, 'GET', path, '')]);
  variants.push(['signed as POST', sign(key.secret, salt, 'POST', path, '')]);
  variants.push(['signed over another query', sign(key.secret, salt, 'GET', '/usage?month=2026-02', '')]);
  variants.push(['signed over a body', sign(key.secret, salt, 'GET', path, '{}')]);
  const answers = await Promise.all(variants.map(([, h]) => pool.request('GET', path, undefined, h)));
  answers.forEach((res, i) => refused(res, 401, 'INVALID_SIGNATURE', variants[i]![0]));
  for (const sig of [good['x-hmac-signature']!.slice(0, 63), '', 'z'.repeat(64)]) {
    refused(await pool.request('GET', path, undefined, { ...good, 'x-hmac-signature': sig }), 401, 'INVALID_SIGNATURE', `signature "${sig.slice(0, 8)}…"`);
  }
  // A body changed after signing (POST /challenge/verify signs the body).
  const body = JSON.stringify({ payload: await widgetPayload() });
  const signedPost = sign(key.secret, freshSalt(), 'POST', '/challenge/verify', body);
  refused(await pool.request('POST', '/challenge/verify', body.replace('payload', 'Payload'), signedPost), 401, 'INVALID_SIGNATURE', 'body changed');

  // The signature holds, the salt does not.
  refused(await pool.request('GET', path, undefined, sign(key.secret, freshSalt(-360), 'GET', path, '')), 401, 'SIGNATURE_SALT_EXPIRED', 'salt 6 min old');
  refused(await pool.request('GET', path, undefined, sign(key.secret, freshSalt(360), 'GET', path, '')), 401, 'SIGNATURE_SALT_EXPIRED', 'salt 6 min ahead');
  for (const bad of ['nodot', `${Math.floor(Date.now() / 1000)}.short`, `${Math.floor(Date.now() / 1000)}.${'a'.repeat(101)}`, `1.${'a'.repeat(20)}`]) {
    refused(await pool.request('GET', path, undefined, sign(key.secret, bad, 'GET', path, '')), 401, 'INVALID_SIGNATURE_SALT', `salt ${bad.slice(0, 16)}`);
  }

  // One signed request sent 20 times at once on separate connections (both workers): once.
  const replayed = sign(key.secret, freshSalt(), 'GET', path, '');
  const connections = Array.from({ length: 20 }, () => new HttpConnection(svc.port));
  const race = await Promise.all(connections.map((c) => c.request('GET', path, undefined, replayed)));
  for (const c of connections) c.close();
  assert.equal(race.filter((r) => r.status === 200).length, 1, 'exactly one accepted');
  race.filter((r) => r.status !== 200).forEach((r) => refused(r, 401, 'SIGNATURE_SALT_REUSED', 'replayed salt'));
  refused(await pool.request('GET', path, undefined, replayed), 401, 'SIGNATURE_SALT_REUSED', 'replayed later');
});

test('payload signatures off by one byte are refused: widget challenges, server payloads', async () => {
  const payload = await widgetPayload();
  const decoded = JSON.parse(Buffer.from(payload, 'base64').toString()) as { challenge: { signature: string }; solution: unknown };
  for (const b of [0, 13, 31]) {
    const tampered = encodePayload({ ...decoded, challenge: { ...decoded.challenge, signature: flipByte(decoded.challenge.signature, b) } });
    const res = await pool.request('POST', `/v1/verify?apiKey=${key.id}`, JSON.stringify({ payload: tampered }));
    assert.deepEqual([res.status, JSON.parse(res.body)], [200, { verified: false, reason: 'INVALID_SIGNATURE' }], `challenge byte ${b}`);
    refusals.add('INVALID_SIGNATURE');
  }
  const verified = JSON.parse((await pool.request('POST', `/v1/verify?apiKey=${key.id}`, JSON.stringify({ payload }))).body) as { payload: string };
  const server = JSON.parse(Buffer.from(verified.payload, 'base64').toString()) as { signature: string };
  for (const b of [0, 16, 31]) {
    const tampered = encodePayload({ ...server, signature: flipByte(server.signature, b) });
    const viaServer = await pool.request('POST', '/challenge/verify', JSON.stringify({ payload: tampered }), bearer(key.secret));
    assert.deepEqual([viaServer.status, JSON.parse(viaServer.body)], [200, { verified: false, reason: 'INVALID_SIGNATURE' }], `server payload byte ${b}`);
    const online = JSON.parse((await pool.request('POST', '/v1/verify/signature', JSON.stringify({ payload: tampered }))).body) as { verified: boolean; reason: string };
    assert.deepEqual([online.verified, online.reason], [false, 'INVALID_SIGNATURE'], `verify/signature byte ${b}`);
    refusals.add('INVALID_SIGNATURE', 2);
  }
  const control = await pool.request('POST', '/challenge/verify', JSON.stringify({ payload: verified.payload }), bearer(key.secret));
  assert.deepEqual(JSON.parse(control.body), { verified: true }, 'the untampered server payload is accepted');
});

test('monitoring endpoints from outside the whitelist: spoofed X-Forwarded-For and IP headers are refused', async () => {
  const spoofs: Record<string, string>[] = [
    {}, { 'x-forwarded-for': '127.0.0.1' }, { 'x-forwarded-for': '127.0.0.1, 127.0.0.1' },
    { 'x-real-ip': '127.0.0.1' }, { 'cf-connecting-ip': '127.0.0.1' }, { 'true-client-ip': '127.0.0.1' },
    { 'x-real-ip': '127.0.0.1', 'x-ip-headers-secret': IP_HEADERS_SECRET.slice(0, -1) },
    { 'x-real-ip': '127.0.0.1', 'x-ip-headers-secret': `${IP_HEADERS_SECRET}x` },
    { 'x-real-ip': '127.0.0.1', 'x-ip-headers-secret': IP_HEADERS_SECRET.toUpperCase() },
  ];
  // Through a trusted proxy (loopback is one here): the proxy appends the outside peer it saw.
  const viaProxy = [
    { 'x-forwarded-for': '203.0.113.7' }, { 'x-forwarded-for': '127.0.0.1, 203.0.113.7' },
    { 'x-forwarded-for': 'not-an-ip, 203.0.113.7' }, { 'x-forwarded-for': '203.0.113.7, 127.0.0.1' },
  ];
  const proxy = new HttpConnection(svc.port);
  for (const path of MONITORING) {
    for (const headers of viaProxy) refused(await proxy.request('GET', path, undefined, headers), 403, 'MONITORING_FORBIDDEN', `${path} via proxy ${JSON.stringify(headers)}`);
  }
  // The control: the whitelisted peer itself, and the right IP-headers secret.
  assert.equal((await proxy.request('GET', '/.live')).status, 200);
  assert.equal((await proxy.request('GET', '/.live', undefined, { 'x-real-ip': '127.0.0.1', 'x-ip-headers-secret': IP_HEADERS_SECRET })).status, 200);
  assert.equal((await proxy.request('GET', '/.live', undefined, { 'x-real-ip': '203.0.113.7', 'x-ip-headers-secret': IP_HEADERS_SECRET })).status, 403);
  proxy.close();

  // Directly from an address outside the whitelist: this host's own non-loopback address.
  const outside = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  if (outside === undefined) {
    console.error('*** no non-loopback IPv4 address on this host: the direct outside-peer checks are skipped ***');
    return;
  }
  const direct = new HttpConnection(svc.port, outside);
  for (const path of MONITORING) {
    for (const headers of spoofs) refused(await direct.request('GET', path, undefined, headers), 403, 'MONITORING_FORBIDDEN', `${path} from ${outside} ${JSON.stringify(headers)}`);
  }
  direct.close();
});
