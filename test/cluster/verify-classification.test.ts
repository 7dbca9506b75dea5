// Classification inside POST /v1/verify, driven by the key's policy (src/classifier/verify-classification.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { verifyServerSignature } from 'altcha-lib';
import { resolvePolicy } from '../../src/pow/policy.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { createTestKey, startService, withServiceDb, type Service, type TestKey } from '../helpers/service.js';

const SPAM = 'BUY CHEAP VIAGRA AND CIALIS NOW!!! Best online pharmacy, no prescription: http://pills.example/buy http://bit.ly/x2';
const LIGHT = { counterMin: 10, counterMax: 100 };
let svc: Service;

before(async () => { svc = await startService({ env: { WORKERS: '1' } }); });
after(async () => { await svc.stop(); });

async function challenge(key: TestKey): Promise<{ body: string; config: string | null }> {
  const res = await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`);
  assert.equal(res.status, 200);
  return { body: await res.text(), config: res.headers.get('x-altcha-config') };
}

async function verify(key: TestKey, fields: Record<string, string> | undefined, timeZone?: string): Promise<Record<string, any>> {
  const { payload } = await solveV2((await challenge(key)).body);
  const res = await fetch(`${svc.url}/v1/verify?apiKey=${key.id}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payload, fields, timeZone }),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as Record<string, any>;
}

test('x-altcha-config: only keys asking for classification send sentinel, with the verifyUrl', async () => {
  const plain = await createTestKey(svc, { challengePolicy: LIGHT });
  assert.equal((await challenge(plain)).config, null);
  const asking = await createTestKey(svc, { challengePolicy: { ...LIGHT, classification: { fields: true, timeZone: false } } });
  assert.deepEqual(JSON.parse((await challenge(asking)).config!), { verifyUrl: `/v1/verify?apiKey=${asking.id}`, sentinel: { fields: true, timeZone: false } });
});

test('a key without classification signs the fields but classifies nothing', async () => {
  const plain = await createTestKey(svc, { challengePolicy: LIGHT });
  const json = await verify(plain, { message: SPAM });
  const data = new URLSearchParams(json.verificationData as string);
  assert.equal(data.get('classification'), 'GOOD');
  assert.equal(data.get('text.language'), null);
  assert.equal(data.get('fields'), 'message');
});

test('a classifying key: spam is BAD with reasons, signed, and counted; a time zone far from the IP is weighed', async () => {
  const key = await createTestKey(svc, { challengePolicy: { ...LIGHT, classification: { fields: true } } });
  const json = await verify(key, { name: 'Bob', message: SPAM }, 'Europe/Berlin');
  assert.equal(json.verified, true);
  const result = await verifyServerSignature({ payload: JSON.parse(Buffer.from(json.payload as string, 'base64').toString()) as never, hmacSecret: key.secret });
  assert.equal(result.verified, true);
  const vd = result.verificationData!;
  assert.equal(vd.classification, 'BAD');
  assert.ok((vd.reasons as string[]).includes('PHARMACY'));
  assert.equal(vd['text.language'], 'en');
  assert.equal(json.score, vd.score);
  // Loopback has no country: the time zone locates the sender but cannot disagree with the IP.
  assert.equal(vd['location.score'], 0);
  let rows: Record<string, any>[] = [];
  for (let i = 0; i < 30 && rows.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 200));
    rows = await withServiceDb(svc, (sql) => sql`select * from spam_submissions where api_key_id = ${key.id}`);
  }
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.source, 'verify');
  assert.equal(rows[0]!.text, `Bob\n${SPAM}`);
});

test('blockBad: a BAD submission fails with BAD_CLASSIFICATION and its payload is spent; a clean one passes', async () => {
  const key = await createTestKey(svc, { challengePolicy: { ...LIGHT, classification: { fields: true, blockBad: true } } });
  assert.deepEqual(await verify(key, { message: SPAM }), { verified: false, reason: 'BAD_CLASSIFICATION' });
  const ok = await verify(key, { message: 'When does the shop open on Saturday?' });
  assert.equal(ok.verified, true);
  assert.equal(new URLSearchParams(ok.verificationData as string).get('classification'), 'GOOD');
});

test("the key's bands decide the classification signed", async () => {
  const key = await createTestKey(svc, { challengePolicy: { ...LIGHT, classification: { fields: true, neutralScore: 40, badScore: 50 } } });
  const json = await verify(key, { message: SPAM });
  const data = new URLSearchParams(json.verificationData as string);
  assert.ok(Number(data.get('score')) >= 2);
  assert.equal(data.get('classification'), 'GOOD');
});

test('malformed classification settings are refused when the policy is resolved (POLICY_INVALID naming the field)', () => {
  const limits = { maxMemoryBytes: 128 * 1024 * 1024 };
  const invalid = (classification: unknown, message: RegExp) =>
    assert.throws(() => resolvePolicy({ classification } as Record<string, unknown>, limits), { code: 'POLICY_INVALID', message });
  invalid('yes', /classification must be an object/);
  invalid({ fields: 'yes' }, /fields must be true or false/);
  invalid({ unknown: 1 }, /unknown field "unknown"/);
  invalid({ neutralScore: 3, badScore: 2 }, /badScore must not be below neutralScore/);
  invalid({ neutralScore: -1 }, /neutralScore must be a number/);
  invalid({ disableRules: ['NOPE'] }, /unknown rules: "NOPE"/);
  invalid({ expectedLanguages: ['EN'] }, /expectedLanguages/);
  assert.doesNotThrow(() => resolvePolicy({ classification: { fields: true, disableRules: ['LINKS'], expectedLanguages: ['de'] } }, limits));
});
