// POST /api_key/generate over a real database (PGlite): the machine-to-machine flow solved by a
// client in the test, replays, hostnames, and every error path.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ensureDefaultAccount, findAccount } from '../../src/db/accounts.js';
import { listApiKeys } from '../../src/db/api-keys.js';
import { listKeyAudit } from '../../src/db/key-audit.js';
import { PalisadeError } from '../../src/errors.js';
import type { Handler, Reply } from '../../src/http/types.js';
import { loadApiKey } from '../../src/keys/api-keys.js';
import type { ApiKey } from '../../src/keys/types.js';
import { apiKeyGenerateRoute } from '../../src/routes/api-key-generate.js';
import { fakeRequest, openTestDatabase, testKeySecrets, type TestDatabase } from '../helpers/db.js';

const secrets = testKeySecrets();
let t: TestDatabase;
let accountId: string;
let handler: Handler;
let clock = Date.now();
const claimed = new Set<string>();
let storeDown = false;
let limited = false;

before(async () => {
  t = (await openTestDatabase('pglite'))!;
  accountId = (await ensureDefaultAccount(t.db.sql, 'Default Account')).id;
  handler = apiKeyGenerateRoute({
    sql: t.db.sql, secrets, hmacKey: 'm2m-test-key-0123456789abcdef',
    claimOnce: async (id) => {
      if (storeDown) throw new PalisadeError('STORE_UNAVAILABLE');
      if (claimed.has(id)) return false;
      claimed.add(id);
      return true;
    },
    rateLimit: () => { if (limited) throw new PalisadeError('RATE_LIMITED', undefined, 60); },
  }, { maxNumber: 3000, now: () => clock });
});
after(async () => { await t.close(); });

const call = (body: unknown, headers: Record<string, string> = {}) => Promise.resolve(handler(fakeRequest({
  method: 'POST', path: '/api_key/generate', body: typeof body === 'string' ? body : JSON.stringify(body),
  headers: { 'content-type': 'application/json', ...headers }, ip: '198.51.100.23',
})));

function challengeOf(reply: Reply) {
  const h = reply.headers?.['WWW-Authenticate'];
  assert.ok(h, 'WWW-Authenticate present');
  const m = /^Altcha algorithm=(SHA-256), challenge=([0-9a-f]{64}), maxnumber=(\d+), salt=([0-9a-f]{24}\?expires=\d+&), signature=([0-9a-f]{64})$/.exec(h);
  assert.ok(m, h);
  return { algorithm: m[1]!, challenge: m[2]!, maxnumber: Number(m[3]), salt: m[4]!, signature: m[5]! };
}

function solve(c: ReturnType<typeof challengeOf>): string {
  for (let n = 0; n <= c.maxnumber; n++) {
    if (createHash('sha256').update(c.salt + n).digest('hex') === c.challenge) {
      return `Altcha algorithm=${c.algorithm}, number=${n}, challenge=${c.challenge}, salt=${c.salt}, signature=${c.signature}`;
    }
  }
  throw new Error('no solution');
}

const errorOf = (r: Reply) => JSON.parse(String(r.body)) as { error: string; statusCode: number };

async function freshSolution(): Promise<string> {
  const first = await call({ hostname: 'probe.example' });
  return solve(challengeOf(first));
}

test('without a solution: 401 ALTCHA_REQUIRED with a v1 challenge in WWW-Authenticate', async () => {
  const r = await call({ hostname: 'example.com' });
  assert.equal(r.status, 401);
  assert.deepEqual(errorOf(r), { error: 'ALTCHA_REQUIRED', statusCode: 401 });
  assert.equal(r.headers?.['Cache-Control'], 'no-store');
  const c = challengeOf(r);
  assert.equal(c.maxnumber, 3000);
  const other = await call({ hostname: 'example.com' }, { authorization: 'Bearer sec_x' });
  assert.deepEqual(errorOf(other), { error: 'ALTCHA_REQUIRED', statusCode: 401 });
});

test('solved: a free key for the hostname, secret shown once and stored only hashed; replay refused', async () => {
  const authorization = await freshSolution();
  const r = await call({ hostname: 'Site-One.example' }, { authorization });
  assert.equal(r.status, 200);
  assert.equal(r.headers?.['Cache-Control'], 'no-store');
  const body = JSON.parse(String(r.body)) as { apiKey: string; hostname: string; secret: string };
  assert.deepEqual(Object.keys(body), ['apiKey', 'hostname', 'secret']);
  assert.match(body.apiKey, /^ckey_[0-9A-Za-z]{24}$/);
  assert.match(body.secret, /^csec_[0-9A-Za-z]{32}$/);
  assert.equal(body.hostname, 'site-one.example');
  const key = await loadApiKey(t.db.sql, secrets, body.apiKey);
  assert.deepEqual([key?.secret, key?.hostnames, key?.planId, key?.requestLimit],
    [body.secret, ['site-one.example'], 'free', 6000]);
  assert.notEqual(key?.accountId, accountId);
  const rows = await t.db.sql`select * from api_keys where id = ${body.apiKey}`;
  assert.ok(!JSON.stringify(rows).includes(body.secret.slice(5)));
  assert.equal(rows[0]!.secret_hash, secrets.hash(body.secret));
  const audit = await listKeyAudit(t.db.sql, body.apiKey);
  assert.deepEqual(audit.map((a) => [a.action, a.actor]), [['create', 'api:generate 198.51.100.0']]);

  const replay = await call({ hostname: 'site-two.example' }, { authorization });
  assert.equal(replay.status, 401);
  assert.deepEqual(errorOf(replay), { error: 'ALTCHA_ALREADY_USED', statusCode: 401 });
  challengeOf(replay);
});

test('free keys share no account: each generated key has one of its own, apart from the default account', async () => {
  const made = [];
  for (const hostname of ['own-a.example', 'own-b.example']) {
    const r = await call({ hostname }, { authorization: await freshSolution() });
    assert.equal(r.status, 200);
    made.push((await loadApiKey(t.db.sql, secrets, (JSON.parse(String(r.body)) as { apiKey: string }).apiKey))!);
  }
  const [a, b] = made as [ApiKey, ApiKey];
  assert.equal(new Set([a.accountId, b.accountId, accountId]).size, 3);
  for (const key of [a, b]) {
    assert.deepEqual((await listApiKeys(t.db.sql, key.accountId)).map((k) => k.id), [key.id]);
    assert.equal((await findAccount(t.db.sql, key.accountId))?.generated, true);
  }
});

test('one free key per hostname: 409 HOSTNAME_TAKEN, checked before the solution is used up', async () => {
  const first = await call({ hostname: 'taken.example' }, { authorization: await freshSolution() });
  assert.equal(first.status, 200);
  const authorization = await freshSolution();
  await assert.rejects(call({ hostname: 'TAKEN.example' }, { authorization }), { code: 'HOSTNAME_TAKEN', statusCode: 409 });
  const other = await call({ hostname: 'not-taken.example' }, { authorization });
  assert.equal(other.status, 200);
});

test('the solution may come in the header named by X-Altcha-Authorization-Header', async () => {
  const solution = await freshSolution();
  const r = await call({ hostname: 'proxied.example' }, {
    authorization: 'Basic dXNlcjpwYXNz', 'x-altcha-authorization-header': 'X-Palisade-Solution', 'x-palisade-solution': solution,
  });
  assert.equal(r.status, 200);
  const bad = await call({ hostname: 'proxied2.example' }, { 'x-altcha-authorization-header': 'bad header!', authorization: await freshSolution() });
  assert.deepEqual(errorOf(bad), { error: 'ALTCHA_INVALID', statusCode: 401 });
  const missing = await call({ hostname: 'proxied3.example' }, { 'x-altcha-authorization-header': 'x-nothing', authorization: await freshSolution() });
  assert.deepEqual(errorOf(missing), { error: 'ALTCHA_REQUIRED', statusCode: 401 });
});

test('wrong, malformed, forged and expired solutions get 401 and a new challenge', async () => {
  const solution = await freshSolution();
  const wrong = solution.replace(/number=(\d+)/, (_, n: string) => `number=${Number(n) === 0 ? 1 : 0}`);
  for (const [authorization, code] of [
    [wrong, 'ALTCHA_INVALID'],
    ['Altcha number=1', 'ALTCHA_INVALID'],
    ['Altcha garbage', 'ALTCHA_INVALID'],
    [solution.replace(/signature=[0-9a-f]{64}/, `signature=${'0'.repeat(64)}`), 'ALTCHA_INVALID'],
    [solution.replace('algorithm=SHA-256', 'algorithm=SHA-1'), 'ALTCHA_INVALID'],
  ] as const) {
    const r = await call({ hostname: 'bad-solution.example' }, { authorization });
    assert.equal(r.status, 401);
    assert.deepEqual(errorOf(r), { error: code, statusCode: 401 });
    challengeOf(r);
  }
  const saved = clock;
  clock += 11 * 60_000;
  try {
    const expired = await call({ hostname: 'late.example' }, { authorization: solution });
    assert.deepEqual(errorOf(expired), { error: 'ALTCHA_EXPIRED', statusCode: 401 });
  } finally {
    clock = saved;
  }
  // None of the failures used the solution up.
  assert.equal((await call({ hostname: 'finally.example' }, { authorization: solution })).status, 200);
});

test('body errors come first (a typo costs no solution); rate limit and store failures propagate', async () => {
  const authorization = await freshSolution();
  for (const body of [{}, { hostname: '' }, { hostname: 'localhost' }, { hostname: '10.0.0.1' }, { hostname: '*.example.com' },
    { hostname: 42 }, { hostname: ['a.example'] }, [], 'null', { hostname: `${'a'.repeat(250)}.com` }]) {
    await assert.rejects(call(body, { authorization }), { code: 'INVALID_HOSTNAME' }, JSON.stringify(body));
  }
  await assert.rejects(call('{not json', { authorization }), { code: 'INVALID_JSON' });
  limited = true;
  await assert.rejects(call({ hostname: 'limited.example' }, { authorization }), { code: 'RATE_LIMITED' });
  limited = false;
  storeDown = true;
  await assert.rejects(call({ hostname: 'store.example' }, { authorization }), { code: 'STORE_UNAVAILABLE' });
  storeDown = false;
  assert.equal((await call({ hostname: 'store.example' }, { authorization })).status, 200);
});
