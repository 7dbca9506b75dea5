// POST /v1/classifier on the running service: authorisation, every documented field, usage,
// spam submissions, training data, the key's classification policy, and bad input.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addTrainingExample } from '../../src/db/training-data.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { createTestKey, startService, withServiceDb, type Service, type TestKey } from '../helpers/service.js';

const SPAM = 'BUY CHEAP VIAGRA AND CIALIS NOW!!! Best online pharmacy, no prescription needed: http://pills.example/buy http://bit.ly/xyz';
const HAM = 'Hello, I would like to book a table for four people on Friday evening at seven. Thank you very much!';

let svc: Service;
let dns: DnsServer;
let key: TestKey;

async function post(body: unknown, k: TestKey = key, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, any> }> {
  const res = await fetch(`${svc.url}/v1/classifier`, {
    method: 'POST', headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

before(async () => {
  dns = await startDnsServer();
  dns.zones.set('bakery-weber.de', { kind: 'records', mx: [{ preference: 10, exchange: 'mx.bakery-weber.de' }] });
  dns.zones.set('nomail-shop.de', { kind: 'records', mx: [{ preference: 0, exchange: '' }] });
  svc = await startService({
    env: { WORKERS: '1', DNS_SERVERS: dns.server, DNS_TIMEOUT: '500ms', CLASSIFIER_BODY_LIMIT: '64KB', X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32' },
  });
  key = await createTestKey(svc, {});
});
after(async () => {
  await svc?.stop();
  await dns?.close();
});

describe('authorisation', () => {
  test('no credentials: 401 AUTHORIZATION_REQUIRED; a wrong secret: 401; the browser form (?apiKey=) is not enough', async () => {
    const none = await fetch(`${svc.url}/v1/classifier`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"x"}' });
    assert.equal(none.status, 401);
    assert.equal(((await none.json()) as { error: string }).error, 'AUTHORIZATION_REQUIRED');
    const wrong = await post({ text: 'x' }, { ...key, secret: `sec_${'A'.repeat(32)}` });
    assert.deepEqual([wrong.status, wrong.json.error], [401, 'API_KEY_INVALID']);
    const browser = await fetch(`${svc.url}/v1/classifier?apiKey=${key.id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"x"}' });
    assert.equal(browser.status, 401);
  });
});

describe('classification', () => {
  test('a legitimate message is GOOD with only the text block; ALTCHA\'s response shape', async () => {
    const { status, json } = await post({ text: HAM });
    assert.equal(status, 200);
    assert.equal(json.classification, 'GOOD');
    assert.ok(json.score < 1, String(json.score));
    assert.deepEqual(json.reasons, []);
    assert.deepEqual(Object.keys(json).sort(), ['classification', 'device', 'email', 'ip', 'location', 'rateLimit', 'reasons', 'score', 'similarity', 'text', 'time']);
    for (const absent of ['email', 'ip', 'location', 'device', 'similarity', 'rateLimit']) assert.equal(json[absent], null, absent);
    assert.equal(json.text.language, 'en');
    assert.equal(json.text.classifier, 'en');
    for (const rule of ['CAPITALIZATION', 'CURRENCY', 'EMOJI', 'EXCLAMATION', 'HASH_TAGS']) assert.deepEqual(json.text.rules[rule], { score: 0 }, rule);
  });

  test('pharmacy spam with links is BAD and names its reasons, highest first', async () => {
    const { json } = await post({ text: SPAM });
    assert.equal(json.classification, 'BAD');
    assert.ok(json.score >= 2);
    assert.ok(json.reasons.includes('PHARMACY'), json.reasons.join());
    assert.equal(json.reasons[0], Object.entries(json.text.rules as Record<string, { score: number }>).sort((a, b) => b[1].score - a[1].score)[0]![0]);
    assert.ok(json.text.rules.PHARMACY.score > 0);
  });

  test('fields are classified like text; the field names are not', async () => {
    const { json } = await post({ fields: { name: 'Ann', message: SPAM } });
    assert.equal(json.classification, 'BAD');
  });

  test('email: MX looked up on the loopback DNS server; a null MX and a missing domain fire MX; disposable and free providers', async () => {
    const good = await post({ email: 'ann@bakery-weber.de' });
    assert.equal(good.json.email.domain, 'bakery-weber.de');
    assert.equal(good.json.email.rules.MX.score, 0);
    assert.equal(good.json.email.score, 0);
    assert.equal(good.json.text, null);
    const nomail = await post({ email: 'ann@nomail-shop.de' });
    assert.equal(nomail.json.email.rules.MX.score, 2);
    const missing = await post({ email: 'ann@missing-shop.de' });
    assert.equal(missing.json.email.rules.MX.score, 3);
    assert.ok(dns.queries.get('missing-shop.de MX')! >= 1);
    const disposable = await post({ email: 'x@mailinator.com' });
    assert.equal(disposable.json.email.rules.DISPOSABLE.score, 3);
    const free = await post({ email: 'ann@gmail.com' });
    assert.equal(free.json.email.rules.FREE_PROVIDER.score, 0.2);
    assert.equal(free.json.classification, 'GOOD');
    // The widget's legacy form: the domain alone.
    assert.equal((await post({ email: '@bakery-weber.de' })).json.email.rules.SYNTAX.score, 0);
    assert.equal((await post({ email: 'not an address' })).json.email.rules.SYNTAX.score, 3);
  });

  test('ipAddress auto: the requester, its User-Agent and a trusted load balancer\'s headers; an explicit IP has no device block', async () => {
    const auto = await post({ ipAddress: 'auto', timeZone: 'Europe/Berlin' }, key, { 'user-agent': 'curl/8.0', 'x-forwarded-for': '203.0.113.7' });
    assert.equal(auto.status, 200);
    assert.deepEqual(Object.keys(auto.json.ip.rules), ['MALICIOUS_IP', 'TOR', 'PROXY', 'HOSTING', 'PENALTY']);
    // isbot counts curl as a bot.
    assert.equal(auto.json.device.kind, 'bot');
    assert.equal(auto.json.device.rules.BOT_USER_AGENT.score, 3);
    assert.equal(auto.json.location.timeZone, 'Europe/Berlin');
    const explicit = await post({ ipAddress: '2001:db8::1' });
    assert.equal(explicit.json.device, null);
    assert.notEqual(explicit.json.ip, null);
    const ua = await post({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36' });
    assert.deepEqual([ua.json.device.kind, ua.json.device.browser, ua.json.device.score], ['browser', 'chrome', 0]);
  });

  test('countries: a blocked time zone is BAD; an unexpected one raises the score; list:eu expands', async () => {
    const blocked = await post({ timeZone: 'Europe/Moscow', blockedCountries: ['RU'] });
    assert.equal(blocked.json.location.rules.BLOCKED_COUNTRY.score, 5);
    assert.equal(blocked.json.classification, 'BAD');
    assert.deepEqual(blocked.json.reasons, ['BLOCKED_COUNTRY']);
    const unexpected = await post({ timeZone: 'Asia/Tokyo', expectedCountries: ['list:eu'] });
    assert.equal(unexpected.json.location.rules.UNEXPECTED_COUNTRY.score, 1);
    assert.equal(unexpected.json.classification, 'NEUTRAL');
    const expected = await post({ timeZone: 'Europe/Paris', expectedCountries: ['list:eu'] });
    assert.equal(expected.json.location.score, 0);
  });

  test('expectedLanguages, classifier and disableRules', async () => {
    const german = 'Guten Tag, ich möchte gerne einen Tisch für vier Personen am Freitagabend reservieren. Vielen Dank!';
    const unexpected = await post({ text: german, expectedLanguages: ['en', 'fr'] });
    assert.equal(unexpected.json.text.language, 'de');
    assert.ok(unexpected.json.text.rules.UNEXPECTED_LANGUAGE.score > 0);
    assert.equal((await post({ text: german, expectedLanguages: ['de-CH'] })).json.text.rules.UNEXPECTED_LANGUAGE.score, 0);
    assert.equal((await post({ text: HAM, classifier: 'de' })).json.text.classifier, 'de');
    const disabled = await post({ text: SPAM, disableRules: ['PHARMACY', 'LINKS'] });
    assert.equal(disabled.json.text.rules.PHARMACY, undefined);
    assert.equal(disabled.json.text.rules.LINKS, undefined);
    assert.ok(!disabled.json.reasons.includes('PHARMACY'));
  });
});

describe('usage, spam submissions and training data', () => {
  test('usage counts each classification; BAD ones are kept for review with their text', async () => {
    const k = await createTestKey(svc, {});
    await post({ text: HAM }, k);
    await post({ text: SPAM }, k);
    await post({ fields: { message: SPAM, name: 'Bob' }, ipAddress: '198.51.100.23' }, k);
    // Usage is written by the worker's buffer; the submissions by their batch writer (1 s).
    let usage: Record<string, any> = {};
    let rows: Record<string, any>[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${svc.url}/usage`, { headers: { authorization: `Bearer ${k.secret}` } });
      usage = (await res.json()) as Record<string, any>;
      rows = await withServiceDb(svc, (sql) => sql`select * from spam_submissions where api_key_id = ${k.id} order by time`);
      if (usage.classifications?.BAD === '2' && rows.length === 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(usage.classifications, { BAD: '2', GOOD: '1', NEUTRAL: '0' });
    assert.equal(rows.length, 2);
    assert.equal(rows[0]!.source, 'classifier');
    assert.equal(rows[0]!.text, SPAM);
    assert.match(rows[0]!.text_hash, /^[0-9a-f]{64}$/);
    assert.ok(rows[0]!.reasons.includes('PHARMACY'));
    assert.equal(rows[1]!.fields, 'message,name');
    assert.equal(rows[1]!.ip, '198.51.100.0');
    assert.equal(rows[1]!.text, `${SPAM}\nBob`);
    assert.notEqual(rows[1]!.text_hash, rows[0]!.text_hash);
  });

  test("a text like one of the account's training examples fires SIMILARITY", async () => {
    const example = 'We offer guaranteed first page Google ranking for your website with our premium backlink packages';
    const k = await withServiceDb(svc, async (sql, secrets, accountId) => {
      const { createAccount } = await import('../../src/db/accounts.js');
      const { createApiKey } = await import('../../src/keys/api-keys.js');
      const account = await createAccount(sql, `similarity-${Date.now()}`);
      await addTrainingExample(sql, { accountId: account.id, text: example, threshold: 0.6, weight: 1 });
      const created = await createApiKey(sql, secrets, { accountId: account.id }, 'test');
      return { id: created.key.id, secret: created.secret, accountId: account.id };
    });
    const { json } = await post({ text: `Hi! ${example}.` }, k);
    assert.notEqual(json.similarity, null);
    assert.ok(json.similarity.rules.SIMILARITY.score >= 2.4, JSON.stringify(json.similarity));
    assert.equal(json.similarity.matches.length, 1);
    assert.ok(json.reasons.includes('SIMILARITY'));
    // Other accounts' examples are not theirs.
    assert.equal((await post({ text: `Hi! ${example}.` })).json.similarity, null);
  });
});

describe("the key's classification policy", () => {
  test('bands, expected languages and disabled rules of the key apply; the request adds to them', async () => {
    const k = await createTestKey(svc, { challengePolicy: { classification: { neutralScore: 50, badScore: 60, disableRules: ['LINKS'] } } });
    const { json } = await post({ text: SPAM }, k);
    assert.equal(json.classification, 'GOOD');
    assert.equal(json.text.rules.LINKS, undefined);
  });

  test("a key without bands gets the form's (BAD from 3, not mail's 2); a key that sets badScore gets its own", async () => {
    const plain = await post({ email: 'ann@nomail-shop.de' });
    assert.deepEqual([plain.json.score, plain.json.classification], [2, 'NEUTRAL']);
    const unset = await createTestKey(svc, { challengePolicy: { classification: { disableRules: ['FREE_PROVIDER'] } } });
    assert.equal((await post({ email: 'ann@nomail-shop.de' }, unset)).json.classification, 'NEUTRAL');
    const strict = await createTestKey(svc, { challengePolicy: { classification: { badScore: 2 } } });
    assert.equal((await post({ email: 'ann@nomail-shop.de' }, strict)).json.classification, 'BAD');
  });
});

describe('bad input', () => {
  test('malformed bodies and fields are 400 INVALID_PARAMETER with a message naming what is wrong', async () => {
    const cases: [unknown, RegExp][] = [
      [{ fields: { a: { b: 'c' } } }, /fields\."a" must be a string/],
      [{ fields: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`f${i}`, 'v'])) }, /at most 200 entries/],
      [{ disableRules: ['PHARMACY', 'NO_SUCH_RULE'] }, /unknown rules: "NO_SUCH_RULE"/],
      [{ ipAddress: 'not-an-ip' }, /ipAddress/],
      [{ text: 42 }, /text must be/],
      [{ classifier: 'xx' }, /classifier must be one of/],
      [{ expectedCountries: ['ZZ'] }, /unknown country codes or lists: "ZZ"/],
      [[1, 2], /JSON object/],
    ];
    for (const [body, message] of cases) {
      const { status, json } = await post(body);
      assert.equal(status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(json.error, 'INVALID_PARAMETER');
      assert.equal(json.statusCode, 400);
      assert.match(json.message, message);
    }
  });

  test('over CLASSIFIER_BODY_LIMIT (a 1 MB field): 413 BODY_TOO_LARGE; invalid UTF-8 and broken JSON: 400; wrong media type: 415', async () => {
    const big = await post({ text: 'a'.repeat(1024 * 1024) });
    assert.deepEqual([big.status, big.json.error], [413, 'BODY_TOO_LARGE']);
    const many = await post({ fields: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`field${i}`, 'value'])) });
    assert.deepEqual([many.status, many.json.error], [413, 'BODY_TOO_LARGE']);
    const utf8 = await fetch(`${svc.url}/v1/classifier`, {
      method: 'POST', headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: new Uint8Array([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    });
    assert.equal(utf8.status, 400);
    assert.equal(((await utf8.json()) as { error: string }).error, 'INVALID_JSON');
    assert.equal((await post('{"text":')).json.error, 'INVALID_JSON');
    assert.equal((await post('{"text":"x"}', key, { 'content-type': 'application/x-www-form-urlencoded' })).status, 415);
  });

  test('lone surrogates and hostile text are classified, never a 5xx', async () => {
    const lone = await post({ text: 'hello \ud800 world \udc00', fields: { f: '\ud83d' } });
    assert.equal(lone.status, 200);
    const hostile = ['<'.repeat(60_000), '((((('.repeat(10_000), 'a'.repeat(60_000), `${'x@'.repeat(20_000)}`, '😀'.repeat(15_000)];
    for (const text of hostile) {
      const { status } = await post({ text });
      assert.equal(status, 200, text.slice(0, 10));
    }
  });
});

describe('the training data API', () => {
  const call = async (method: string, path: string, k: TestKey, body?: unknown) => {
    const res = await fetch(`${svc.url}${path}`, {
      method, headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };

  test('add, list, classify against, and remove an example; another account sees none of it', async () => {
    const k = await withServiceDb(svc, async (sql, secrets) => {
      const { createAccount } = await import('../../src/db/accounts.js');
      const { createApiKey } = await import('../../src/keys/api-keys.js');
      const account = await createAccount(sql, `training-api-${Date.now()}`);
      const created = await createApiKey(sql, secrets, { accountId: account.id }, 'test');
      return { id: created.key.id, secret: created.secret, accountId: account.id };
    });
    const text = 'Earn passive income by reselling our white label crypto trading signals to your audience';
    const added = await call('POST', '/v1/training', k, { text, group: 'crypto', threshold: 0.5, weight: 2 });
    assert.equal(added.status, 201);
    assert.match(added.json.id, /^trn_[0-9A-Za-z]{16}$/);
    assert.deepEqual([added.json.group, added.json.threshold, added.json.weight, added.json.source], ['crypto', 0.5, 2, `api:${k.id}`]);
    const listed = await call('GET', '/v1/training?group=crypto', k);
    assert.deepEqual(listed.json.examples.map((e: { id: string }) => e.id), [added.json.id]);
    assert.deepEqual((await call('GET', '/v1/training?group=other', k)).json, { examples: [] });
    assert.deepEqual((await call('GET', '/v1/training', key)).json.examples.filter((e: { id: string }) => e.id === added.json.id), []);
    // The worker that took the change classifies with it at once.
    const classified = await post({ text }, k);
    assert.ok(classified.json.similarity.rules.SIMILARITY.score >= 7, JSON.stringify(classified.json.similarity));
    assert.equal((await call('DELETE', `/v1/training?id=${added.json.id}`, key)).status, 404);
    assert.deepEqual(await call('DELETE', `/v1/training?id=${added.json.id}`, k), { status: 200, json: { id: added.json.id, removed: true } });
    assert.equal((await call('DELETE', `/v1/training?id=${added.json.id}`, k)).status, 404);
    assert.equal((await post({ text }, k)).json.similarity, null);
  });

  test('bad input: 400 INVALID_PARAMETER naming the field; no credentials: 401', async () => {
    const cases: [unknown, RegExp][] = [
      [{}, /text must be a string/],
      [{ text: '   ' }, /text must be a string, non-empty/],
      [{ text: 'x'.repeat(10_001) }, /at most 10000 characters/],
      [{ text: 'x', threshold: 2 }, /threshold must be a number in \(0, 1\]/],
      [{ text: 'x', threshold: '0.5' }, /threshold must be a number/],
      [{ text: 'x', weight: -1 }, /weight must be a number from 0 to 10/],
      [{ text: 'x', group: 'Has Spaces' }, /group must be/],
      [{ text: 'x', extra: 1 }, /unknown field "extra"/],
      [['x'], /JSON object/],
    ];
    for (const [body, message] of cases) {
      const r = await call('POST', '/v1/training', key, body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 60));
      assert.equal(r.json.error, 'INVALID_PARAMETER');
      assert.match(r.json.message, message);
    }
    assert.match((await call('DELETE', '/v1/training?id=../../etc', key)).json.message, /id must be a training example id/);
    assert.equal((await call('GET', '/v1/training?group=%00', key)).status, 400);
    const anonymous = await fetch(`${svc.url}/v1/training`);
    assert.equal(anonymous.status, 401);
  });
});
