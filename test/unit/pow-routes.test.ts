// The four proof-of-work route handlers, called with RequestContexts as the HTTP layer builds them
// (and, for /v1/verify/signature, through altcha-lib's verifyServer over real HTTP).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { verifyServer, verifyServerSignature, type Challenge } from 'altcha-lib';
import { PalisadeError } from '../../src/errors.js';
import type { Handler, Reply } from '../../src/http/types.js';
import type { ApiKey } from '../../src/keys/types.js';
import { preparePowSecrets } from '../../src/pow/secrets.js';
import { createChallengePool } from '../../src/pow/pool.js';
import { createChallengeHandler } from '../../src/routes/challenge.js';
import { createChallengeVerifyHandler } from '../../src/routes/challenge-verify.js';
import { createVerifySignatureHandler } from '../../src/routes/verify-signature.js';
import { createVerifyHandler, requestOrigin } from '../../src/routes/verify.js';
import {
  browserAuthorizer, encodePayload, fakeRequest, keyFinder, memoryClaimOnce, serverAuthorizer, solveV1, solveV2,
  startPowTestServer, testKey,
} from '../helpers/pow-test-server.js';

const secrets = preparePowSecrets('routes-test-hmac-secret-0123456789');
const cheap = { counterMin: 0, counterMax: 10 };
const keyA = testKey({ challengePolicy: cheap });
const keyB = testKey({ challengePolicy: cheap });
const keyOther = testKey({ accountId: 'acc_2', challengePolicy: cheap });
const keyV1 = testKey({ challengePolicy: { version: 1, counterMin: 0, maxnumber: 100 } });
const keyProb = testKey({ challengePolicy: { algorithm: 'PBKDF2/SHA-256', mode: 'probabilistic', cost: 100, keyPrefixLength: 1 } });
const keyPooled = testKey({ challengePolicy: { algorithm: 'PBKDF2/SHA-256', cost: 5000, counterMin: 0, counterMax: 5 } });
const keyBad = testKey({ challengePolicy: { algorithm: 'MD5' } });
const keyOff = testKey({ enabled: false });
const keys = [keyA, keyB, keyOther, keyV1, keyProb, keyPooled, keyBad, keyOff];

function harness(penalty = 0) {
  const events = { challenges: 0, verifications: [] as [boolean, string | null][], usage: [] as [string, string | null, string | null][] };
  const claimOnce = memoryClaimOnce();
  const pool = createChallengePool({ secrets }, { size: 2, lowWater: 1 });
  const common = { secrets, claimOnce, penalty: async () => penalty };
  const challenge = createChallengeHandler({
    ...common, authorizeBrowser: browserAuthorizer(keys), pool, onChallenge: () => { events.challenges++; },
  });
  const verify = createVerifyHandler({
    ...common, authorizeBrowser: browserAuthorizer(keys),
    onVerify: (ok, reason) => { events.verifications.push([ok, reason]); },
    countUsage: (_req, key, classification, origin) => { events.usage.push([key.id, classification, origin]); },
  });
  const signature = createVerifySignatureHandler({ findKey: keyFinder(keys), claimOnce });
  const challengeVerify = createChallengeVerifyHandler({
    ...common, authorizeServer: serverAuthorizer(keys), findKey: keyFinder(keys),
    onVerify: (ok, reason) => { events.verifications.push([ok, reason]); },
    countUsage: (_req, key, classification, origin) => { events.usage.push([key.id, classification, origin]); },
    chargePlan: () => undefined,
  });
  return { challenge, verify, signature, challengeVerify, events, pool };
}

const getChallenge = (h: Handler, key: ApiKey, query = '') => h(fakeRequest({ rawQuery: `apiKey=${key.id}${query}` }));
const post = (h: Handler, body: unknown, init: { query?: string; headers?: Record<string, string> } = {}) =>
  h(fakeRequest({ method: 'POST', rawQuery: init.query ?? '', headers: { 'content-type': 'application/json', ...init.headers }, body: body as object }));
const parse = (r: Reply) => JSON.parse(r.body.toString()) as Record<string, unknown>;

async function widgetPayload(h: ReturnType<typeof harness>, key: ApiKey, query = ''): Promise<string> {
  const reply = await getChallenge(h.challenge, key, query);
  return key === keyV1 ? (await solveV1(reply.body.toString())).payload : (await solveV2(reply.body.toString())).payload;
}

test('GET /v1/challenge: no-store JSON with verifyUrl for the key; metrics counted', async () => {
  const h = harness();
  const reply = await getChallenge(h.challenge, keyA, '&params.plan=pro');
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.headers, { 'cache-control': 'no-store' });
  const json = parse(reply) as unknown as Challenge & { configuration: { verifyUrl: string } };
  assert.equal(json.configuration.verifyUrl, `/v1/verify?apiKey=${keyA.id}`);
  assert.deepEqual(json.parameters.data, { apiKey: keyA.id, 'params.plan': 'pro' });
  assert.equal(h.events.challenges, 1);

  const based = createChallengeHandler({
    authorizeBrowser: browserAuthorizer(keys), secrets, penalty: async () => 0, onChallenge: () => {},
  }, { publicBaseUrl: 'https://pow.example/base/' });
  const url = (parse(await getChallenge(based, keyA)) as { configuration: { verifyUrl: string } }).configuration.verifyUrl;
  assert.equal(url, `https://pow.example/base/v1/verify?apiKey=${keyA.id}`);
  h.pool.close();
});

test('GET /v1/challenge: errors — no key, unknown or disabled key, bad params, invalid stored policy', async () => {
  const h = harness();
  await assert.rejects(async () => h.challenge(fakeRequest()), { code: 'API_KEY_REQUIRED' });
  await assert.rejects(async () => getChallenge(h.challenge, keyOff), { code: 'API_KEY_INVALID' });
  await assert.rejects(async () => getChallenge(h.challenge, keyA, `&params.${'x'.repeat(21)}=1`), { code: 'INVALID_PARAMETER' });
  await assert.rejects(async () => getChallenge(h.challenge, keyBad), { code: 'POLICY_INVALID' });
  assert.equal(h.events.challenges, 0);
  h.pool.close();
});

test('GET /v1/challenge: a penalty makes the challenge harder; v1 keys get v1 JSON and X-Altcha-Config; pooled keys work', async () => {
  const h = harness(3);
  const prob = parse(await getChallenge(h.challenge, keyProb)) as unknown as Challenge;
  assert.equal(prob.parameters.cost, 400, 'cost 100 x (1 + 3)');
  const v1 = await getChallenge(h.challenge, keyV1);
  assert.equal(v1.headers!['x-altcha-config'], JSON.stringify({ verifyUrl: `/v1/verify?apiKey=${keyV1.id}` }));
  assert.equal(v1.headers!['access-control-expose-headers'], 'x-altcha-config');
  const v1json = parse(v1);
  assert.equal(v1json.maxnumber, 400, 'maxnumber 100 x (1 + 3)');
  const pooled = await getChallenge(h.challenge, keyPooled);
  const solved = await solveV2(pooled.body.toString());
  assert.equal(parse(await post(h.verify, { payload: solved.payload }, { query: `apiKey=${keyPooled.id}` })).verified, true);
  h.pool.close();
});

test('POST /v1/verify: success carries a server payload altcha-lib accepts with the key secret; usage and metrics', async () => {
  const h = harness(2);
  const payload = await widgetPayload(h, keyA, '&params.plan=pro');
  const fields = { name: 'Ann', message: 'hello\r\nworld', 'größe 😀': 'M' };
  const reply = await h.verify(fakeRequest({
    method: 'POST', rawQuery: `apiKey=${keyA.id}`, ip: '198.51.100.23',
    headers: { 'content-type': 'application/json', origin: 'https://shop.example' },
    body: { payload, fields, timeZone: 'Europe/Berlin', code: null },
  }));
  assert.equal(reply.status, 200);
  const json = parse(reply);
  assert.deepEqual(Object.keys(json), ['verified', 'payload', 'algorithm', 'apiKey', 'id', 'score', 'signature', 'verificationData']);
  assert.deepEqual([json.verified, json.algorithm, json.apiKey, json.score], [true, 'SHA-256', keyA.id, 0]);
  const q = new URLSearchParams(json.verificationData as string);
  assert.deepEqual(
    ['classification', 'challengeAlgorithm', 'ipAddress', 'origin', 'penalty', 'params.plan', 'fields', 'timeZone'].map((k) => q.get(k)),
    ['GOOD', 'SHA-256', '198.51.100.0', 'https://shop.example', '2', 'pro', 'name,message,größe 😀', 'Europe/Berlin'],
  );
  const decoded = JSON.parse(Buffer.from(json.payload as string, 'base64').toString()) as never;
  assert.equal((await verifyServerSignature({ payload: decoded, hmacSecret: keyA.secret })).verified, true);
  assert.equal((await verifyServerSignature({ payload: decoded, hmacSecret: keyB.secret })).verified, false);
  assert.deepEqual(h.events.verifications, [[true, null]]);
  assert.deepEqual(h.events.usage, [[keyA.id, 'GOOD', 'https://shop.example']]);

  // The same payload again: 200 {verified:false, reason}.
  const again = await post(h.verify, { payload }, { query: `apiKey=${keyA.id}` });
  assert.equal(again.status, 200);
  assert.deepEqual(parse(again), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
  assert.deepEqual(h.events.verifications[1], [false, 'PAYLOAD_ALREADY_USED']);
  assert.deepEqual(h.events.usage[1], [keyA.id, null, null]);
  h.pool.close();
});

test('POST /v1/verify: another key\'s payload, v1 payloads, assess hook, anonymisation off', async () => {
  const h = harness();
  const payload = await widgetPayload(h, keyA);
  assert.deepEqual(parse(await post(h.verify, { payload }, { query: `apiKey=${keyB.id}` })), { verified: false, reason: 'INVALID_SIGNATURE' });
  const v1 = await widgetPayload(h, keyV1);
  assert.equal(parse(await post(h.verify, { payload: v1 }, { query: `apiKey=${keyV1.id}` })).verified, true);

  const scored = createVerifyHandler({
    authorizeBrowser: browserAuthorizer(keys), secrets, claimOnce: memoryClaimOnce(), penalty: async () => 0,
    onVerify: () => {}, countUsage: () => {},
    assess: ({ challenge }) => ({ score: 1.5, reasons: ['test'], extra: { 'location.countryCode': 'DE', seen: challenge.algorithm } }),
  }, { anonymizeIp: false, signatureAlgorithm: 'SHA-512' });
  const r = parse(await scored(fakeRequest({
    method: 'POST', rawQuery: `apiKey=${keyA.id}`, ip: '2001:db8::7', body: { payload: await widgetPayload(h, keyA) },
  })));
  const q = new URLSearchParams(r.verificationData as string);
  assert.deepEqual([r.algorithm, r.score, q.get('classification'), q.get('reasons'), q.get('location.countryCode'), q.get('seen'), q.get('ipAddress')],
    ['SHA-512', 1.5, 'NEUTRAL', 'test', 'DE', 'SHA-256', '2001:db8::7']);
  h.pool.close();
});

test('POST /v1/verify: malformed bodies are 400s; a bad payload string is a verification failure', async () => {
  const h = harness();
  const q = { query: `apiKey=${keyA.id}` };
  for (const body of [[], '"x"', 'null', {}, { payload: 5 }, { payload: null }]) {
    await assert.rejects(async () => post(h.verify, body, q), { code: 'INVALID_PAYLOAD' }, JSON.stringify(body));
  }
  for (const body of [
    { payload: 'x', fields: [] }, { payload: 'x', fields: { a: 1 } }, { payload: 'x', fields: { ['n'.repeat(101)]: 'v' } },
    { payload: 'x', fields: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, 'v'])) },
    // Lone surrogates in a name (JSON "\ud800") have no URI encoding for verificationData.
    { payload: 'x', fields: { '\ud800': 'v' } }, { payload: 'x', fields: { 'a\udc00b': 'v' } }, { payload: 'x', fields: { 'x\ud83d': 'v' } },
    { payload: 'x', timeZone: 'Europe/Berlin; drop' }, { payload: 'x', timeZone: 5 }, { payload: 'x', code: 'c'.repeat(65) },
  ]) await assert.rejects(async () => post(h.verify, body, q), { code: 'INVALID_PARAMETER' }, JSON.stringify(body).slice(0, 60));
  await assert.rejects(async () => h.verify(fakeRequest({ method: 'POST', rawQuery: q.query, body: '{' })), { code: 'INVALID_JSON' });
  assert.deepEqual(parse(await post(h.verify, { payload: 'not base64!' }, q)), { verified: false, reason: 'INVALID_PAYLOAD' });
  h.pool.close();
});

test('POST /v1/verify/signature: once, then PAYLOAD_ALREADY_USED; secret checked; bad input 400', async () => {
  const h = harness();
  const server = parse(await post(h.verify, { payload: await widgetPayload(h, keyA, '&params.plan=pro') }, { query: `apiKey=${keyA.id}` }));
  const withWrongSecret = parse(await post(h.signature, { payload: server.payload, secret: keyB.secret }));
  assert.deepEqual(withWrongSecret, { verified: false, apiKey: keyA.id, verificationData: null, reason: 'API_KEY_INVALID' });
  const ok = parse(await post(h.signature, { payload: server.payload, secret: keyA.secret }));
  assert.equal(ok.verified, true);
  assert.equal(ok.apiKey, keyA.id);
  const vd = ok.verificationData as Record<string, unknown>;
  assert.deepEqual([vd.verified, vd.classification, (vd.params as Record<string, unknown>).plan, vd.id], [true, 'GOOD', 'pro', server.id]);
  assert.equal('reason' in ok, false);
  const again = parse(await post(h.signature, { payload: server.payload }));
  assert.deepEqual([again.verified, again.reason], [false, 'PAYLOAD_ALREADY_USED']);

  // The decoded object is accepted too; tampering is INVALID_SIGNATURE.
  const other = parse(await post(h.verify, { payload: await widgetPayload(h, keyA) }, { query: `apiKey=${keyA.id}` }));
  const decoded = JSON.parse(Buffer.from(other.payload as string, 'base64').toString()) as Record<string, string>;
  const tampered = parse(await post(h.signature, { payload: { ...decoded, verificationData: decoded.verificationData!.replace('score=0', 'score=1') } }));
  assert.deepEqual([tampered.verified, tampered.reason, tampered.verificationData], [false, 'INVALID_SIGNATURE', null]);
  assert.equal(parse(await post(h.signature, { payload: decoded })).verified, true);

  const unknown = parse(await post(h.signature, { payload: encodePayload({ ...decoded, apiKey: 'key_nobody' }) }));
  assert.deepEqual([unknown.verified, unknown.reason], [false, 'API_KEY_INVALID']);
  for (const body of [{}, { payload: 'not base64' }, { payload: encodePayload({ a: 1 }) }, { payload: 5 }, { payload: other.payload, secret: 5 }, []]) {
    await assert.rejects(async () => post(h.signature, body), { code: 'INVALID_PAYLOAD' }, JSON.stringify(body).slice(0, 50));
  }
  h.pool.close();
});

test('POST /v1/verify/signature through altcha-lib verifyServer over HTTP', async (t) => {
  const h = harness();
  const srv = await startPowTestServer({ 'POST /v1/verify/signature': h.signature });
  t.after(() => srv.close());
  const server = parse(await post(h.verify, { payload: await widgetPayload(h, keyA) }, { query: `apiKey=${keyA.id}` }));
  const url = `${srv.url}/v1/verify/signature`;
  const first = await verifyServer({ payload: server.payload as string, url, secret: keyA.secret });
  assert.deepEqual([first.verified, first.apiKey, first.verificationData?.classification], [true, keyA.id, 'GOOD']);
  const second = await verifyServer({ payload: server.payload as string, url });
  assert.deepEqual([second.verified, second.reason], [false, 'PAYLOAD_ALREADY_USED']);
  const bad = await verifyServer({ payload: 'garbage', url });
  assert.deepEqual([bad.verified, bad.reason], [false, 'INVALID_PAYLOAD']);
  h.pool.close();
});

test('POST /challenge/verify: widget (v1, v2) and server payloads, exactly once; apiKey names a key of the same account', async () => {
  const h = harness();
  const auth = (key: ApiKey) => ({ headers: { authorization: `Bearer ${key.secret}`, referer: 'https://shop.example/form?x=1' } });
  const widget = await widgetPayload(h, keyA);
  assert.deepEqual(parse(await post(h.challengeVerify, { payload: widget }, auth(keyA))), { verified: true });
  assert.deepEqual(parse(await post(h.challengeVerify, { payload: widget }, auth(keyA))), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
  assert.deepEqual(h.events.usage[0], [keyA.id, null, 'https://shop.example']);

  const v1 = await widgetPayload(h, keyV1);
  assert.deepEqual(parse(await post(h.challengeVerify, { payload: v1, apiKey: keyV1.id }, auth(keyA))), { verified: true });

  // Authorised by B, issued to A (same account): apiKey says so. Without it, it is B's check and fails.
  const forA = await widgetPayload(h, keyA);
  assert.deepEqual(parse(await post(h.challengeVerify, { payload: forA }, auth(keyB))), { verified: false, reason: 'INVALID_SIGNATURE' });
  assert.deepEqual(parse(await post(h.challengeVerify, { payload: forA, apiKey: keyA.id }, auth(keyB))), { verified: true });
  await assert.rejects(async () => post(h.challengeVerify, { payload: forA, apiKey: keyA.id }, auth(keyOther)), { code: 'API_KEY_INVALID' });
  await assert.rejects(async () => post(h.challengeVerify, { payload: forA, apiKey: 'key_nobody' }, auth(keyA)), { code: 'API_KEY_INVALID' });
  await assert.rejects(async () => post(h.challengeVerify, { payload: forA, apiKey: keyOff.id }, auth(keyA)), { code: 'API_KEY_INVALID' });

  const server = parse(await post(h.verify, { payload: await widgetPayload(h, keyA) }, { query: `apiKey=${keyA.id}` }));
  assert.deepEqual(parse(await post(h.challengeVerify, { payload: server.payload }, auth(keyB))), { verified: false, reason: 'INVALID_SIGNATURE' });
  assert.deepEqual(parse(await post(h.challengeVerify, { payload: server.payload }, auth(keyA))), { verified: true });
  assert.deepEqual(parse(await post(h.challengeVerify, { payload: server.payload }, auth(keyA))), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });

  assert.deepEqual(parse(await post(h.challengeVerify, { payload: 'garbage' }, auth(keyA))), { verified: false, reason: 'INVALID_PAYLOAD' });
  await assert.rejects(async () => post(h.challengeVerify, { payload: 5 }, auth(keyA)), { code: 'INVALID_PAYLOAD' });
  await assert.rejects(async () => post(h.challengeVerify, { payload: 'x', apiKey: 5 }, auth(keyA)), { code: 'INVALID_PARAMETER' });
  await assert.rejects(async () => post(h.challengeVerify, { payload: 'x' }), { code: 'AUTHORIZATION_REQUIRED' });
  h.pool.close();
});

test('requestOrigin: Origin, else the Referer\'s origin; junk is null', () => {
  const o = (headers: Record<string, string>) => requestOrigin(fakeRequest({ headers }));
  assert.equal(o({ origin: 'https://a.example' }), 'https://a.example');
  assert.equal(o({ origin: 'null', referer: 'https://b.example/x?y' }), 'https://b.example');
  assert.equal(o({ referer: 'not a url' }), null);
  assert.equal(o({}), null);
});


test('POST /v1/verify answers without a Promise when the store, the key and the challenge allow it', async () => {
  const h = harness();
  const claimed = new Set<string>();
  let full = false;
  const syncClaim = (id: string) => {
    if (full) throw new PalisadeError('STORE_FULL');
    if (claimed.has(id)) return false;
    claimed.add(id);
    return true;
  };
  const usage: (string | null)[] = [];
  const verify = createVerifyHandler({
    authorizeBrowser: browserAuthorizer(keys), secrets, claimOnce: syncClaim, penalty: () => 3,
    onVerify: () => {}, countUsage: (_req, _k, classification) => { usage.push(classification); },
    assess: ({ penalty }) => ({ score: penalty / 2, reasons: ['penalty'] }),
  });
  const req = (payload: string, key = keyA) => fakeRequest({ method: 'POST', rawQuery: `apiKey=${key.id}`, body: { payload } });
  const payload = await widgetPayload(h, keyA);
  const first = verify(req(payload));
  assert.ok(!(first instanceof Promise), 'a deterministic challenge with a synchronous store is answered at once');
  const r = parse(first);
  const q = new URLSearchParams(r.verificationData as string);
  assert.deepEqual([r.verified, r.score, q.get('penalty'), q.get('classification')], [true, 1.5, '3', 'NEUTRAL']);
  const again = verify(req(payload));
  assert.ok(!(again instanceof Promise));
  assert.deepEqual(parse(again), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
  assert.deepEqual(usage, ['NEUTRAL', null]);
  // v1 challenges too; a probabilistic one derives its key off the loop, so it is a Promise.
  const v1 = verify(req(await widgetPayload(h, keyV1), keyV1));
  assert.ok(!(v1 instanceof Promise));
  assert.equal(parse(v1).verified, true);
  const prob = verify(req(await widgetPayload(h, keyProb), keyProb));
  assert.ok(prob instanceof Promise);
  assert.equal(parse(await prob).verified, true);
  // A store failure is thrown at once (the server answers it 503), never a verification.
  const unclaimed = await widgetPayload(h, keyA);
  full = true;
  assert.throws(() => verify(req(unclaimed)), { code: 'STORE_FULL' });
  h.pool.close();
});
