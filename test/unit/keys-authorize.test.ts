// Browser and server authorisation over fake RequestContexts (PROTOCOL.md section 4), and plan limits.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import {
  authorizeBrowser, authorizeServer, createPlanLimitCheck, SIGNATURE_SALT_WINDOW_MS, type ClaimSalt,
} from '../../src/keys/authorize.js';
import { errorBodyOf, PalisadeError } from '../../src/errors.js';
import { createKeyCache } from '../../src/keys/key-cache.js';
import type { ApiKey } from '../../src/keys/types.js';
import { fakeRequest, testKeySecrets } from '../helpers/db.js';

const secrets = testKeySecrets();
const mk = (id: string, hostnames: string[], enabled = true, requestLimit: number | null = null): ApiKey => ({
  id, accountId: 'acc_1', name: '', hostnames, planId: 'p', challengePolicy: null, rateLimit: null, enabled,
  secret: secrets.derive(id, 'nonce'), requestLimit,
});
const OPEN = mk('key_OPENOPENOPENOPENOPENOPEN', []);
const SITE = mk('key_SITESITESITESITESITESITE', ['example.com', '*.example.org']);
const OFF = mk('key_OFFOFFOFFOFFOFFOFFOFFOF', [], false);
const FREE = mk('ckey_FREEFREEFREEFREEFREEFREE', ['free.example']);
const keys = new Map([OPEN, SITE, OFF, FREE].map((k) => [k.id, k]));
const cache = createKeyCache({
  byId: async (id) => keys.get(id) ?? null,
  idBySecretHash: async (h) => [...keys.values()].find((k) => secrets.hash(k.secret) === h)?.id ?? null,
}, secrets);

const browser = async (query: string, headers: Record<string, string> = {}) =>
  authorizeBrowser(fakeRequest({ path: '/v1/challenge', query, headers }), cache);

test('browser: ?apiKey= is required, must be well formed, known and enabled', async () => {
  await assert.rejects(browser(''), { code: 'API_KEY_REQUIRED' });
  await assert.rejects(browser('apiKey='), { code: 'API_KEY_REQUIRED' });
  await assert.rejects(browser('apiKey=nonsense'), { code: 'API_KEY_INVALID' });
  await assert.rejects(browser(`apiKey=${'key_'.padEnd(5000, 'A')}`), { code: 'API_KEY_INVALID' });
  await assert.rejects(browser('apiKey=key_UNKNOWNUNKNOWNUNKNOWNUNKN'), { code: 'API_KEY_INVALID' });
  await assert.rejects(browser(`apiKey=${OFF.id}`), { code: 'API_KEY_INVALID' });
  assert.equal((await browser(`apiKey=${OPEN.id}`)).id, OPEN.id);
  assert.equal((await browser(`apiKey=${OPEN.id}`, { origin: 'https://anything.test' })).id, OPEN.id);
});

test('browser: Origin (else Referer) host must match the key hostnames; wildcards skip the apex', async () => {
  const q = `apiKey=${SITE.id}`;
  assert.equal((await browser(q, { origin: 'https://example.com' })).id, SITE.id);
  assert.equal((await browser(q, { origin: 'http://EXAMPLE.com:8080' })).id, SITE.id);
  assert.equal((await browser(q, { referer: 'https://example.com/form?x=1' })).id, SITE.id);
  assert.equal((await browser(q, { origin: 'https://a.b.example.org' })).id, SITE.id);
  assert.equal((await browser(q, { origin: 'null', referer: 'https://example.com/' })).id, SITE.id);
  assert.equal((await browser(`apiKey=${FREE.id}`, { origin: 'https://free.example' })).id, FREE.id);
  for (const headers of <Record<string, string>[]>[
    {}, { origin: 'https://example.org' }, { origin: 'https://www.example.com' }, { origin: 'https://example.com.evil.test' },
    { origin: 'https://evil.test', referer: 'https://example.com/' }, { origin: 'null' }, { referer: 'not a url' },
    { origin: 'https://user@example.com' }, { origin: 'ftp://example.com' },
  ]) {
    await assert.rejects(browser(q, headers), { code: 'ORIGIN_NOT_ALLOWED' }, JSON.stringify(headers));
  }
});

test('browser: a key with hostnames and a request without Origin or Referer: 403 whose message names the Origin header', async () => {
  const q = `apiKey=${SITE.id}`;
  for (const headers of <Record<string, string>[]>[{}, { origin: '' }, { origin: 'null' }, { referer: '' }]) {
    const err = await browser(q, headers).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof PalisadeError, JSON.stringify(headers));
    assert.equal(err.code, 'ORIGIN_NOT_ALLOWED');
    assert.equal(err.statusCode, 403);
    const body = JSON.parse(errorBodyOf(err)) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['error', 'statusCode', 'message']);
    assert.equal(body.error, 'ORIGIN_NOT_ALLOWED');
    assert.equal(body.statusCode, 403);
    assert.match(String(body.message), /\bOrigin header\b/);
  }
  // An Origin that names another host is refused without a message: the header was there.
  const other = await browser(q, { origin: 'https://example.net' }).then(() => null, (e: unknown) => e);
  assert.ok(other instanceof PalisadeError);
  assert.equal(errorBodyOf(other), '{"error":"ORIGIN_NOT_ALLOWED","statusCode":403}');
  // A key without hostnames needs no Origin.
  assert.equal((await browser(`apiKey=${OPEN.id}`)).id, OPEN.id);
});

function signedRequest(o: {
  key?: ApiKey; secret?: string; salt?: string; method?: string; path?: string; query?: string; body?: string;
  signedPath?: string; signedBody?: string; signature?: string;
}) {
  const key = o.key ?? OPEN;
  const salt = o.salt ?? `${Math.floor(Date.now() / 1000)}.${'r'.repeat(20)}${Math.random().toString(36).slice(2)}`;
  const method = o.method ?? 'POST';
  const path = o.path ?? '/challenge/verify';
  const query = o.query ?? '';
  const body = o.body ?? '{"payload":"x"}';
  const signed = o.signedPath ?? `${path}${query ? `?${query}` : ''}`;
  const signature = o.signature ?? createHmac('sha256', o.secret ?? key.secret)
    .update(`${salt}\n${method}\n${signed}\n${o.signedBody ?? body}`).digest('hex');
  return fakeRequest({
    method, path, query, body,
    headers: { authorization: `Bearer ${key.id}`, 'x-hmac-signature': signature, 'x-hmac-signature-salt': salt },
  });
}

function claims(): ClaimSalt & { seen: Map<string, number> } {
  const seen = new Map<string, number>();
  const fn = (async (id: string, until: number) => {
    if (seen.has(id)) return false;
    seen.set(id, until);
    return true;
  }) as ClaimSalt & { seen: Map<string, number> };
  fn.seen = seen;
  return fn;
}

test('server: Bearer secret finds the key; wrong, rotated or disabled secrets do not', async () => {
  const claim = claims();
  const auth = (authorization?: string) =>
    authorizeServer(fakeRequest({ headers: authorization === undefined ? {} : { authorization } }), cache, claim);
  assert.equal((await auth(`Bearer ${OPEN.secret}`)).id, OPEN.id);
  assert.equal((await auth(`bearer   ${FREE.secret}`)).id, FREE.id);
  await assert.rejects(auth(`Bearer ${secrets.derive(OPEN.id, 'old-nonce')}`), { code: 'API_KEY_INVALID' });
  await assert.rejects(auth(`Bearer ${OFF.secret}`), { code: 'API_KEY_INVALID' });
  await assert.rejects(auth(`Bearer sec_${'x'.repeat(31)}`), { code: 'API_KEY_INVALID' });
  await assert.rejects(auth(undefined), { code: 'AUTHORIZATION_REQUIRED' });
  await assert.rejects(auth(''), { code: 'AUTHORIZATION_REQUIRED' });
  await assert.rejects(auth(`Basic ${OPEN.secret}`), { code: 'AUTHORIZATION_REQUIRED' });
  await assert.rejects(auth('Bearer'), { code: 'AUTHORIZATION_REQUIRED' });
  await assert.rejects(auth(`Bearer ${'a'.repeat(300)}`), { code: 'AUTHORIZATION_REQUIRED' });
  await assert.rejects(auth('Bearer something-else'), { code: 'API_KEY_INVALID' });
  assert.equal(claim.seen.size, 0);
});

test('server: HMAC-signed request accepted once; each tampered part is refused', async () => {
  const claim = claims();
  const ok = signedRequest({ query: 'a=1&b=2' });
  assert.equal((await authorizeServer(ok, cache, claim)).id, OPEN.id);
  const [[claimId, until]] = [...claim.seen];
  const salt = ok.headers['x-hmac-signature-salt']!;
  assert.equal(claimId, `hmac:${OPEN.id}:${salt}`);
  // Kept until the salt's own window closes plus the clock-skew margin: a moment the salt names.
  assert.equal(until, Number(salt.split('.')[0]) * 1000 + SIGNATURE_SALT_WINDOW_MS + 60_000);
  await assert.rejects(authorizeServer(ok, cache, claim), { code: 'SIGNATURE_SALT_REUSED' });

  assert.equal((await authorizeServer(signedRequest({ method: 'GET', path: '/usage', query: 'month=2024-01', body: '' }), cache, claim)).id, OPEN.id);
  for (const bad of [
    signedRequest({ secret: secrets.derive(OPEN.id, 'wrong') }),
    signedRequest({ signedBody: '{"payload":"y"}' }),
    signedRequest({ signedPath: '/challenge/verify?x=1' }),
    signedRequest({ query: 'x=1', signedPath: '/challenge/verify' }),
    signedRequest({ signature: 'ab'.repeat(32) }),
  ]) {
    await assert.rejects(authorizeServer(bad, cache, claim), { code: 'INVALID_SIGNATURE' });
  }
  // Method signed as given: a GET signature does not authorise a POST.
  const getSigned = signedRequest({ method: 'GET', body: '' });
  const asPost = fakeRequest({ method: 'POST', path: getSigned.path, body: '', headers: getSigned.headers });
  await assert.rejects(authorizeServer(asPost, cache, claim), { code: 'INVALID_SIGNATURE' });
  // A failed signature does not use up the salt.
  const good = signedRequest({});
  const forged = fakeRequest({ method: 'POST', path: good.path, body: '{"payload":"x"}', headers: { ...good.headers, 'x-hmac-signature': '00'.repeat(32) } });
  await assert.rejects(authorizeServer(forged, cache, claim), { code: 'INVALID_SIGNATURE' });
  assert.equal((await authorizeServer(good, cache, claim)).id, OPEN.id);
});

test('server: malformed, missing, short, stale and future salts; missing or malformed signatures', async () => {
  const claim = claims();
  const now = Math.floor(Date.now() / 1000);
  for (const salt of ['short', `${now}.${'a'.repeat(15)}`, `${now}.${'a'.repeat(101)}`, `${now}-${'a'.repeat(20)}`,
    `${'a'.repeat(30)}`, `${now}.${'a'.repeat(19)}!`, `${now * 1000}.${'a'.repeat(20)}`, `x${now}.${'a'.repeat(20)}`]) {
    await assert.rejects(authorizeServer(signedRequest({ salt }), cache, claim), { code: 'INVALID_SIGNATURE_SALT' }, salt);
  }
  await assert.rejects(authorizeServer(signedRequest({ salt: `${now - 301}.${'a'.repeat(20)}` }), cache, claim), { code: 'SIGNATURE_SALT_EXPIRED' });
  await assert.rejects(authorizeServer(signedRequest({ salt: `${now + 301}.${'a'.repeat(20)}` }), cache, claim), { code: 'SIGNATURE_SALT_EXPIRED' });
  assert.equal((await authorizeServer(signedRequest({ salt: `${now - 200}.${'b'.repeat(20)}` }), cache, claim)).id, OPEN.id);
  const r = signedRequest({});
  const without = (name: string) => {
    const headers = { ...r.headers };
    delete headers[name];
    return fakeRequest({ method: r.method, path: r.path, body: '{"payload":"x"}', headers });
  };
  await assert.rejects(authorizeServer(without('x-hmac-signature'), cache, claim), { code: 'INVALID_SIGNATURE' });
  await assert.rejects(authorizeServer(without('x-hmac-signature-salt'), cache, claim), { code: 'INVALID_SIGNATURE_SALT' });
  for (const sig of ['zz'.repeat(32), 'ab'.repeat(31), 'ab'.repeat(33), '']) {
    await assert.rejects(authorizeServer(signedRequest({ signature: sig }), cache, claim), { code: 'INVALID_SIGNATURE' });
  }
  await assert.rejects(authorizeServer(signedRequest({ key: OFF }), cache, claim), { code: 'API_KEY_INVALID' });
  await assert.rejects(authorizeServer(signedRequest({ key: mk('key_NOPENOPENOPENOPENOPENOPE', []) }), cache, claim), { code: 'API_KEY_INVALID' });
});

test('server: APP_BASE_PATH is part of the signed path; the clock is injectable', async () => {
  const claim = claims();
  const req = signedRequest({ path: '/usage', signedPath: '/captcha/usage', method: 'GET', body: '' });
  await assert.rejects(authorizeServer(req, cache, claim), { code: 'INVALID_SIGNATURE' });
  assert.equal((await authorizeServer(req, cache, claim, { basePath: '/captcha' })).id, OPEN.id);
  const old = signedRequest({ salt: `1000000000.${'c'.repeat(20)}` });
  assert.equal((await authorizeServer(old, cache, claim, { now: () => 1_000_000_100_000 })).id, OPEN.id);
});

test('server: a store failure while claiming the salt propagates (never accepted unchecked)', async () => {
  const failing: ClaimSalt = async () => { throw Object.assign(new Error('down'), { code: 'STORE_UNAVAILABLE' }); };
  await assert.rejects(authorizeServer(signedRequest({}), cache, failing), { code: 'STORE_UNAVAILABLE' });
});

test('plan limit: refused with PLAN_LIMIT_EXCEEDED once the account used its monthly requests', async () => {
  let used = 0;
  const months: string[] = [];
  const check = createPlanLimitCheck({
    requests: (accountId, month) => { months.push(`${accountId}/${month}`); return used; },
    currentMonth: () => '2024-05',
  });
  const limited = mk('key_LIMLIMLIMLIMLIMLIMLIMLIML', [], true, 100);
  used = 99;
  await check(limited);
  used = 100;
  await assert.rejects(async () => check(limited), { code: 'PLAN_LIMIT_EXCEEDED', statusCode: 429 });
  await check(mk('key_UNLUNLUNLUNLUNLUNLUNLUNL', [], true, null));
  await check(OPEN);
  assert.deepEqual(months, ['acc_1/2024-05', 'acc_1/2024-05']);
  const zero = mk('key_ZEROZEROZEROZEROZEROZERO', [], true, 0);
  used = 0;
  await assert.rejects(async () => check(zero), { code: 'PLAN_LIMIT_EXCEEDED' });
});
