// Server-signature payloads: altcha-lib's verifyServerSignature (v2 and v1 APIs) accepts ours with
// the key's secret and rejects another secret; verifyFieldsHash agrees; our own check spends each
// payload once; verificationData parses into a nested object without prototype surprises.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { verifyFieldsHash, verifyServerSignature } from 'altcha-lib';
import { verifyServerSignature as verifyServerSignatureV1 } from 'altcha-lib/v1';
import { anonymizeIp } from '../../src/ip.js';
import {
  asServerPayload, classify, createServerPayload, orderedVerificationData, parseVerificationData, prepareServerKey,
  sortedVerificationData, verifyServerPayload, type ServerPayloadInput, type ServerSignatureAlgorithm,
} from '../../src/pow/server-signature.js';
import { memoryClaimOnce } from '../helpers/pow-test-server.js';

const SECRET = 'sec_serversignaturetest0000000000';
const KEY = 'key_serversig000000000000000';

function build(extra: Partial<ServerPayloadInput> = {}, algorithm: ServerSignatureAlgorithm = 'SHA-256') {
  return createServerPayload({
    apiKeyId: KEY, key: prepareServerKey(SECRET, algorithm), algorithm, score: 0.5, ttlMs: 600_000, ...extra,
  });
}
const decode = (payload: string) => JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as Record<string, unknown>;

test('verificationData: sorted keys, the documented facts, expire = now + ttl', () => {
  const now = 1_700_000_000_000;
  const s = build({
    now, reasons: ['penalty', 'proxy'], fields: { name: 'Ann', message: 'hi' }, ipAddress: '203.0.113.0',
    origin: 'https://shop.example', challengeAlgorithm: 'SHA-256', penalty: 2, params: { plan: 'pro' }, timeZone: 'Europe/Berlin',
    extra: { 'location.countryCode': 'DE' },
  });
  const keys = [...new URLSearchParams(s.verificationData).keys()];
  assert.deepEqual(keys, [...keys].sort());
  assert.deepEqual(keys, [
    'challengeAlgorithm', 'classification', 'expire', 'fields', 'fieldsHash', 'id', 'ipAddress', 'location.countryCode',
    'origin', 'params.plan', 'penalty', 'reasons', 'score', 'time', 'timeZone', 'verified',
  ]);
  const q = new URLSearchParams(s.verificationData);
  assert.equal(q.get('expire'), '1700000600');
  assert.equal(q.get('time'), '1700000000');
  assert.equal(q.get('classification'), 'GOOD');
  assert.equal(q.get('fields'), 'name,message');
  assert.equal(q.get('fieldsHash'), createHash('sha256').update('Ann\nhi').digest('hex'));
  assert.equal(q.get('params.plan'), 'pro');
  assert.equal(q.get('penalty'), '2');
  assert.equal(q.get('reasons'), 'penalty,proxy');
  assert.equal(q.get('origin'), 'https://shop.example');
  assert.equal(q.get('id'), s.id);
  assert.match(s.verificationData, /&fields=name,message&/);
  assert.deepEqual(decode(s.payload), {
    algorithm: 'SHA-256', apiKey: KEY, id: s.id, signature: s.signature, verificationData: s.verificationData, verified: true,
  });
});

for (const algorithm of ['SHA-256', 'SHA-384', 'SHA-512'] as const) {
  test(`${algorithm}: altcha-lib verifyServerSignature accepts our payload with the key's secret, not with another`, async () => {
    const s = build({ fields: { email: 'a@b.c', text: 'x\r\ny' }, params: { plan: 'pro' }, reasons: ['x'] }, algorithm);
    const ok = await verifyServerSignature({ payload: decode(s.payload) as never, hmacSecret: SECRET });
    assert.deepEqual([ok.verified, ok.invalidSignature, ok.invalidSolution, ok.expired], [true, false, false, false]);
    assert.equal(ok.verificationData!.classification, 'GOOD');
    assert.deepEqual(ok.verificationData!.fields, ['email', 'text']);
    assert.equal(ok.verificationData!['params.plan'], 'pro');
    const bad = await verifyServerSignature({ payload: decode(s.payload) as never, hmacSecret: 'sec_another0000000000000000000000' });
    assert.deepEqual([bad.verified, bad.invalidSignature], [false, true]);
    // The v1 API of altcha-lib takes the base64 string directly.
    assert.equal((await verifyServerSignatureV1(s.payload, SECRET)).verified, true);
    assert.equal((await verifyServerSignatureV1(s.payload, 'sec_nope')).verified, false);
  });
}

test('verificationData without extra names: written in order, byte for byte what sorting gives', () => {
  // Full Unicode (no lone surrogates: JSON bodies are checked for those before they get here).
  const text = fc.string({ unit: 'binary', maxLength: 12 });
  const input = fc.record({
    score: fc.oneof(fc.double(), fc.constantFrom(0, 0.5, 1, 2.345, 1e21, 1e-7)),
    ttlMs: fc.integer({ min: 0, max: 365 * 86_400_000 }),
    now: fc.integer({ min: 0, max: 4_102_444_800_000 }),
    reasons: fc.option(fc.array(text, { maxLength: 3 }), { nil: undefined }),
    fields: fc.option(fc.dictionary(text, text, { maxKeys: 4 }), { nil: null }),
    ipAddress: fc.option(fc.oneof(text, fc.ipV4(), fc.ipV6()), { nil: null }),
    origin: fc.option(fc.oneof(text, fc.webUrl()), { nil: null }),
    challengeAlgorithm: fc.option(fc.oneof(text, fc.constantFrom('SHA-256', 'PBKDF2/SHA-256', 'ARGON2ID')), { nil: undefined }),
    penalty: fc.option(fc.oneof(fc.double(), fc.nat()), { nil: undefined }),
    params: fc.option(fc.dictionary(text, text, { maxKeys: 4 }), { nil: null }),
    timeZone: fc.option(fc.oneof(text, fc.constantFrom('Europe/Berlin', 'UTC')), { nil: null }),
    countryCode: fc.option(fc.oneof(text, fc.constantFrom('DE', 'US')), { nil: null }),
    highRiskCountry: fc.option(fc.boolean(), { nil: undefined }),
    threats: fc.option(fc.record({ bot: text, malicious: text, proxy: text, tor: text }, { requiredKeys: [] }), { nil: null }),
    id: fc.base64String({ maxLength: 16 }),
  });
  const key = prepareServerKey(SECRET);
  fc.assert(fc.property(input, (i) => {
    const full: ServerPayloadInput = { ...i, apiKeyId: KEY, key, algorithm: 'SHA-256' };
    const score = Math.max(0, Math.round(i.score * 100) / 100);
    assert.equal(orderedVerificationData(full, i.now, i.id, score), sortedVerificationData(full, i.now, i.id, score));
  }), { numRuns: 3000 });
  // createServerPayload takes the ordered way without extra names and the sorted way with them.
  const fixed = { now: 1_700_000_000_000, params: { z: '1', a: '2', 'a.b': '3' }, origin: 'https://a.example:8443', timeZone: 'America/New_York' };
  assert.equal(build(fixed).verificationData.replace(/&id=[^&]*/, ''),
    'classification=GOOD&expire=1700000600&origin=https%3A%2F%2Fa.example%3A8443&params.a=2&params.a.b=3&params.z=1' +
    '&score=0.5&time=1700000000&timeZone=America%2FNew_York&verified=true');
  const withExtra = build({ ...fixed, extra: { 'text.language': 'en' } }).verificationData;
  assert.match(withExtra, /&score=0.5&text.language=en&time=/);
  // IP intelligence has names of its own, written in order without sorting.
  const intel = build({ ...fixed, countryCode: 'DE', highRiskCountry: true, threats: { tor: 'tor_exits', malicious: 'firehol_level1' } });
  assert.match(intel.verificationData, /&id=[^&]*&location.countryCode=DE&location.highRiskCountry=true&origin=/);
  assert.match(intel.verificationData, /&score=0.5&threats.malicious=firehol_level1&threats.tor=tor_exits&time=/);
});

test('fieldsHash: altcha-lib verifyFieldsHash agrees; names with commas are left out; missing values are ""', async () => {
  const fields = { name: 'Ann', 'a,b': 'skipped', message: 'line1\r\nline2', empty: '' };
  const s = build({ fields });
  const vd = (await verifyServerSignature({ payload: decode(s.payload) as never, hmacSecret: SECRET })).verificationData!;
  assert.deepEqual(vd.fields, ['name', 'message', 'empty']);
  assert.equal(await verifyFieldsHash({ formData: fields, fields: vd.fields!, fieldsHash: vd.fieldsHash! }), true);
  assert.equal(await verifyFieldsHash({ formData: { ...fields, message: 'changed' }, fields: vd.fields!, fieldsHash: vd.fieldsHash! }), false);
  assert.equal(await verifyFieldsHash({ formData: { name: 'Ann', message: 'line1\r\nline2' }, fields: vd.fields!, fieldsHash: vd.fieldsHash! }), true);
  assert.equal(new URLSearchParams(build({ fields: {} }).verificationData).has('fields'), false);
});

test('classification: GOOD < 1 ≤ NEUTRAL < 2 ≤ BAD; scores are rounded to hundredths and never negative', () => {
  assert.deepEqual([0, 0.99, 1, 1.99, 2, 7].map(classify), ['GOOD', 'GOOD', 'NEUTRAL', 'NEUTRAL', 'BAD', 'BAD']);
  assert.equal(build({ score: 1.23456 }).score, 1.23);
  assert.equal(build({ score: -3 }).score, 0);
  assert.equal(new URLSearchParams(build({ score: 2.5 }).verificationData).get('classification'), 'BAD');
});

test('our check: valid once, then PAYLOAD_ALREADY_USED; tampering, expiry and verified=false are refused', async () => {
  const deps = { claimOnce: memoryClaimOnce() };
  const s = build({ params: { plan: 'pro' }, extra: { 'location.countryCode': 'DE' } });
  const p = asServerPayload(decode(s.payload))!;
  const ok = await verifyServerPayload(p, SECRET, deps);
  assert.equal(ok.verified, true);
  assert.deepEqual(JSON.parse(JSON.stringify(ok.verificationData)), {
    classification: 'GOOD', expire: Number(new URLSearchParams(s.verificationData).get('expire')), id: s.id,
    location: { countryCode: 'DE' }, params: { plan: 'pro' }, score: 0.5,
    time: Number(new URLSearchParams(s.verificationData).get('time')), verified: true,
  });
  const again = await verifyServerPayload(p, SECRET, deps);
  assert.deepEqual([again.verified, !again.verified && again.reason], [false, 'PAYLOAD_ALREADY_USED']);

  const fresh = asServerPayload(decode(build().payload))!;
  const reason = async (payload: typeof fresh, secret = SECRET) => {
    const r = await verifyServerPayload(payload, secret, deps);
    return r.verified ? 'verified' : r.reason;
  };
  assert.equal(await reason(fresh, 'sec_wrong'), 'INVALID_SIGNATURE');
  assert.equal(await reason({ ...fresh, verificationData: fresh.verificationData.replace('score=0.5', 'score=0.1') }), 'INVALID_SIGNATURE');
  assert.equal(await reason({ ...fresh, verified: false }), 'INVALID_SOLUTION');
  assert.equal(await reason(asServerPayload(decode(build({ now: Date.now() - 700_000 }).payload))!), 'CHALLENGE_EXPIRED');
  assert.equal(await reason(fresh), 'verified', 'failed checks did not spend it');
});

test('asServerPayload: shape checks', () => {
  const good = decode(build().payload);
  assert.ok(asServerPayload(good));
  for (const bad of [
    null, [], 'x', { ...good, algorithm: 'SHA-1' }, { ...good, algorithm: 'MD5' }, { ...good, signature: 'ab' },
    { ...good, signature: String(good.signature).toUpperCase() }, { ...good, apiKey: 5 }, { ...good, apiKey: '' },
    { ...good, verified: 'true' }, { ...good, verificationData: 'x'.repeat(9000) }, { ...good, id: 7 },
  ]) assert.equal(asServerPayload(bad), undefined, JSON.stringify(bad)?.slice(0, 60));
});

test('parseVerificationData: typed values, lists, nesting; __proto__ stays data', () => {
  const vd = parseVerificationData('verified=true&score=1.5&expire=12&reasons=a,b&fields=&params.__proto__=x&__proto__.polluted=1&a=1&a.b=2&t=%20x%20');
  assert.equal(vd.verified, true);
  assert.equal(vd.score, 1.5);
  assert.equal(vd.expire, 12);
  assert.deepEqual(vd.reasons, ['a', 'b']);
  assert.deepEqual(vd.fields, []);
  assert.equal((vd.params as Record<string, unknown>)['__proto__'], 'x');
  assert.equal(Object.getPrototypeOf(vd), null);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(vd.a, 1);
  assert.equal(vd['a.b'], 2, 'a scalar in the way keeps the dotted key flat');
  assert.equal(vd.t, 'x');
});

test('anonymizeIp keeps the IPv4 /24 and the IPv6 /48', () => {
  assert.equal(anonymizeIp('203.0.113.77'), '203.0.113.0');
  assert.equal(anonymizeIp('2001:db8:abcd:12::1'), '2001:db8:abcd::');
  assert.equal(anonymizeIp('2001:0db8:00ab:ffff:1:2:3:4'), '2001:db8:ab::');
  assert.equal(anonymizeIp('::ffff:198.51.100.9'), '198.51.100.0');
  assert.equal(anonymizeIp('::1'), '::');
  assert.equal(anonymizeIp('fe80::1%eth0'), 'fe80::');
  assert.equal(anonymizeIp('[2001:db8:1:2::3]'), '2001:db8:1::');
  assert.equal(anonymizeIp('2001:db8:0:5::1'), '2001:db8::');
  assert.equal(anonymizeIp('64:ff9b::192.0.2.33'), '64:ff9b::');
  assert.equal(anonymizeIp('not an ip'), 'not an ip');
});
