// GET /usage over a real database (PGlite): exact response shape, past and current months,
// authorisation errors, INVALID_MONTH; and the account usage behind plan limits.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { setPlan } from '../../src/db/plans.js';
import { accountRequests, writeUsageBatch } from '../../src/db/usage.js';
import type { Handler } from '../../src/http/types.js';
import { createApiKey, findKeyIdBySecret, loadApiKey } from '../../src/keys/api-keys.js';
import { authorizeServer, createPlanLimitCheck } from '../../src/keys/authorize.js';
import { createKeyCache } from '../../src/keys/key-cache.js';
import type { ApiKey } from '../../src/keys/types.js';
import { usageRoute } from '../../src/routes/usage.js';
import { createAccountUsage } from '../../src/usage/account-usage.js';
import { createUsageBuffer } from '../../src/usage/usage-buffer.js';
import { fakeRequest, openTestDatabase, testKeySecrets, type TestDatabase } from '../helpers/db.js';

const secrets = testKeySecrets();
let t: TestDatabase;
let key: ApiKey;
let sibling: ApiKey;
let handler: Handler;
const MONTH = '2024-05';

before(async () => {
  t = (await openTestDatabase('pglite'))!;
  const account = await ensureDefaultAccount(t.db.sql, 'Default Account');
  await setPlan(t.db.sql, 'pro', 50);
  key = (await createApiKey(t.db.sql, secrets, { accountId: account.id, plan: 'pro', hostnames: ['example.com'] }, 'test')).key;
  sibling = (await createApiKey(t.db.sql, secrets, { accountId: account.id }, 'test')).key;
  const cache = createKeyCache({
    byId: (id) => loadApiKey(t.db.sql, secrets, id),
    idBySecretHash: async (hash) => (await t.db.sql<{ id: string }[]>`select id from api_keys where secret_hash = ${hash}`)[0]?.id ?? null,
  }, secrets);
  const used = new Set<string>();
  handler = usageRoute({
    sql: t.db.sql,
    authorizeServer: (req) => authorizeServer(req, cache, async (id) => (used.has(id) ? false : (used.add(id), true))),
    currentMonth: () => MONTH,
  });
  const buffer = createUsageBuffer((b) => writeUsageBatch(t.db.sql, b), { timeZone: 'UTC', now: () => Date.UTC(2024, 4, 2) });
  for (let i = 0; i < 30; i++) buffer.countUsage(key, i < 20 ? 'GOOD' : i < 27 ? 'NEUTRAL' : 'BAD', i % 3 === 0 ? 'https://example.com' : null);
  for (let i = 0; i < 12; i++) buffer.countUsage(sibling, null, null);
  await buffer.flush();
  await writeUsageBatch(t.db.sql, {
    id: 'past', counters: [{ apiKeyId: key.id, accountId: key.accountId, month: '2023-12', requests: 7, good: 1, neutral: 2, bad: 4 }],
    referrers: [{ apiKeyId: key.id, month: '2023-12', origin: 'https://old.example.com', requests: 7 }], logs: [], lastUsed: [],
  });
});
after(async () => { await t.close(); });

const get = (query: string, authorization = `Bearer ${key.secret}`) =>
  Promise.resolve(handler(fakeRequest({ method: 'GET', path: '/usage', query, headers: { authorization } })));

test('current month by default: exact shape, classifications as decimal strings', async () => {
  const r = await get('');
  assert.equal(r.status, 200);
  assert.equal(r.body, JSON.stringify({
    classifications: { BAD: '3', GOOD: '20', NEUTRAL: '7' },
    referrers: { 'https://example.com': 10 },
    requests: { account: 42, apiKey: 30 },
    plan: { name: 'pro', requestLimit: 50 },
  }));
});

test('a past month, and a month without usage', async () => {
  assert.deepEqual(JSON.parse(String((await get('month=2023-12')).body)), {
    classifications: { BAD: '4', GOOD: '1', NEUTRAL: '2' },
    referrers: { 'https://old.example.com': 7 },
    requests: { account: 7, apiKey: 7 },
    plan: { name: 'pro', requestLimit: 50 },
  });
  assert.deepEqual(JSON.parse(String((await get('month=2020-01', `Bearer ${sibling.secret}`)).body)), {
    classifications: { BAD: '0', GOOD: '0', NEUTRAL: '0' }, referrers: {}, requests: { account: 0, apiKey: 0 },
    plan: { name: 'unlimited', requestLimit: -1 },
  });
});

test('the spec\'s Month parameter selects the month as month does; Month wins when both are given', async () => {
  const past = {
    classifications: { BAD: '4', GOOD: '1', NEUTRAL: '2' },
    referrers: { 'https://old.example.com': 7 },
    requests: { account: 7, apiKey: 7 },
    plan: { name: 'pro', requestLimit: 50 },
  };
  assert.deepEqual(JSON.parse(String((await get('Month=2023-12')).body)), past);
  assert.deepEqual(JSON.parse(String((await get('Month=2023-12&month=2024-05')).body)), past);
  assert.equal(JSON.parse(String((await get('month=2023-12&Month=2024-05')).body)).requests.apiKey, 30);
  // An empty Month is the current month, as an empty month is.
  assert.equal(JSON.parse(String((await get('Month=')).body)).requests.apiKey, 30);
  for (const bad of ['2024-13', '2024-5', '2023-12-01', 'x'.repeat(1000), '%00']) {
    await assert.rejects(get(`Month=${encodeURIComponent(bad)}`), { code: 'INVALID_MONTH' }, bad);
  }
  await assert.rejects(get('Month=bad&month=2023-12'), { code: 'INVALID_MONTH' });
});

test('an unlimited plan reports requestLimit -1, a number as the spec types it; a plan of 0 reports 0', async () => {
  const r = JSON.parse(String((await get('', `Bearer ${sibling.secret}`)).body));
  assert.equal(r.plan.requestLimit, -1);
  assert.equal(typeof r.plan.requestLimit, 'number');
  await setPlan(t.db.sql, 'none', 0);
  const account = await ensureDefaultAccount(t.db.sql, 'Default Account');
  const zero = (await createApiKey(t.db.sql, secrets, { accountId: account.id, plan: 'none' }, 'test')).key;
  assert.deepEqual(JSON.parse(String((await get('month=2020-01', `Bearer ${zero.secret}`)).body)).plan, { name: 'none', requestLimit: 0 });
});

test('an HMAC-signed request works; month must be YYYY-MM', async () => {
  const salt = `${Math.floor(Date.now() / 1000)}.abcdefghijklmnopqrstu`;
  const sig = createHmac('sha256', key.secret).update(`${salt}\nGET\n/usage?month=2024-05\n`).digest('hex');
  const r = await Promise.resolve(handler(fakeRequest({
    method: 'GET', path: '/usage', query: 'month=2024-05',
    headers: { authorization: `Bearer ${key.id}`, 'x-hmac-signature': sig, 'x-hmac-signature-salt': salt },
  })));
  assert.equal(JSON.parse(String(r.body)).requests.apiKey, 30);
  for (const bad of ['2024-13', '2024-00', '2024-5', '24-05', '2024-05-01', '2024/05', 'x'.repeat(1000), '%00']) {
    await assert.rejects(get(`month=${encodeURIComponent(bad)}`), { code: 'INVALID_MONTH' }, bad);
  }
});

test('authorisation errors come before the month check', async () => {
  await assert.rejects(get('month=bad', ''), { code: 'AUTHORIZATION_REQUIRED' });
  await assert.rejects(get('', `Bearer sec_${'0'.repeat(32)}`), { code: 'API_KEY_INVALID' });
  await assert.rejects(get('', `Bearer ${key.id}`), { code: 'INVALID_SIGNATURE' });
  assert.equal(await findKeyIdBySecret(t.db.sql, secrets, key.secret), key.id);
});

test('plan limit: durable (cached) plus buffered requests of the account', async () => {
  let now = 0;
  let reads = 0;
  const buffer = createUsageBuffer(async () => { throw new Error('not written in this test'); }, { timeZone: 'UTC', now: () => Date.UTC(2024, 4, 20) });
  const usage = createAccountUsage(async (accountId, month) => { reads++; return accountRequests(t.db.sql, accountId, month); }, buffer, { ttlMs: 1000, now: () => now });
  const check = createPlanLimitCheck(usage);
  assert.equal(await usage.requests(key.accountId, MONTH), 42);
  await check(key);
  for (let i = 0; i < 7; i++) buffer.countUsage(sibling, null, null);
  await check(key);
  buffer.countUsage(sibling, null, null);
  await assert.rejects(async () => check(key), { code: 'PLAN_LIMIT_EXCEEDED' });
  await check(sibling);
  assert.equal(reads, 1, 'the durable count is cached');
  now = 1000;
  await usage.requests(key.accountId, MONTH);
  await new Promise((r) => setImmediate(r));
  assert.equal(reads, 2, 'refreshed in the background once stale');
  // Reads that fail keep the last value; an account never read counts as 0 (plan limits fail open).
  const failing = createAccountUsage(async () => { throw new Error('down'); }, buffer);
  assert.equal(await failing.requests('acc_unknown', MONTH), 0);
});
