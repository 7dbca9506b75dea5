// The body of POST /v1/classifier: every field accepted as documented, every malformed one refused
// with INVALID_PARAMETER naming it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLASSIFIER_REQUEST_LIMITS, parseClassifierRequest } from '../../src/classifier/request.js';

const options = { ruleNames: new Set(['CAPITALIZATION', 'MX', 'TOR']), classifiers: new Set(['en', 'de']) };
const parse = (body: unknown) => parseClassifierRequest(body, options);
const refused = (body: unknown, message: RegExp) => assert.throws(() => parse(body), { code: 'INVALID_PARAMETER', message });

test('text and fields become the texts in order; names are kept', () => {
  const r = parse({ text: ['a', 'b'], fields: { name: 'Ann', message: 'Hello' } });
  assert.deepEqual(r.texts, ['a', 'b', 'Ann', 'Hello']);
  assert.deepEqual(r.fieldNames, ['name', 'message']);
  assert.deepEqual(parse({ text: 'one' }).texts, ['one']);
  assert.deepEqual(parse({}).texts, []);
});

test('every optional field is parsed as documented', () => {
  const r = parse({
    email: 'a@example.com', ipAddress: '2001:db8::1', timeZone: 'Europe/Berlin', expectedLanguages: ['en-GB', 'de', 'EN'],
    expectedCountries: ['de', 'list:eu'], blockedCountries: ['RU'], disableRules: ['MX'], classifier: 'de', userAgent: 'Mozilla/5.0',
  });
  assert.equal(r.email, 'a@example.com');
  assert.equal(r.ipAddress, '2001:db8::1');
  assert.equal(r.timeZone, 'Europe/Berlin');
  assert.deepEqual(r.expectedLanguages, ['en', 'de']);
  assert.ok(r.expectedCountries!.has('DE') && r.expectedCountries!.has('FR'));
  assert.deepEqual([...r.blockedCountries!], ['RU']);
  assert.deepEqual([...r.disableRules], ['MX']);
  assert.equal(r.classifier, 'de');
  assert.equal(r.userAgent, 'Mozilla/5.0');
  assert.equal(parse({ ipAddress: 'auto' }).ipAddress, 'auto');
  assert.equal(parse({ ipAddress: false }).ipAddress, null);
  assert.equal(parse({ email: false }).email, null);
});

test('lone surrogates become U+FFFD', () => {
  assert.deepEqual(parse({ text: 'a\ud800b', fields: { f: '\udc00' } }).texts, ['a\ufffdb', '\ufffd']);
});

test('malformed fields are refused naming them', () => {
  refused([], /JSON object/);
  refused({ text: 5 }, /text must be/);
  refused({ text: ['a', 1] }, /text must be/);
  refused({ text: new Array(CLASSIFIER_REQUEST_LIMITS.maxTexts + 1).fill('a') }, /at most 100 strings/);
  refused({ fields: 'x' }, /fields must be an object/);
  refused({ fields: { a: { nested: 'x' } } }, /fields\."a" must be a string \(nested objects/);
  refused({ fields: { a: ['x'] } }, /nested objects and arrays/);
  refused({ fields: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, 'v'])) }, /at most 200 entries/);
  refused({ fields: { ['n'.repeat(101)]: 'v' } }, /field names are at most 100/);
  refused({ email: 7 }, /email must be a string/);
  refused({ email: `${'a'.repeat(320)}@x` }, /email is at most 320/);
  refused({ ipAddress: 'localhost' }, /ipAddress must be/);
  refused({ ipAddress: '1.2.3.4.5' }, /ipAddress must be/);
  refused({ ipAddress: true }, /ipAddress must be/);
  refused({ timeZone: '../../etc/passwd x' }, /timeZone/);
  refused({ expectedLanguages: 'en' }, /expectedLanguages must be an array/);
  refused({ expectedLanguages: ['english'] }, /ISO 639-1 codes: "english"/);
  refused({ expectedCountries: ['XX', 'list:mars'] }, /expectedCountries: unknown country codes or lists: "XX", "list:mars"/);
  refused({ blockedCountries: [1] }, /blockedCountries must be an array/);
  refused({ disableRules: ['MX', 'NO_SUCH_RULE', 'ALSO_NOT'] }, /unknown rules: "NO_SUCH_RULE", "ALSO_NOT"/);
  refused({ classifier: 'xx' }, /classifier must be one of en, de/);
  refused({ userAgent: 'u'.repeat(1001) }, /userAgent is at most 1000/);
});
