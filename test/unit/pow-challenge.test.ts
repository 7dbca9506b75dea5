// Challenges interoperate with the real clients: altcha-lib 2.8 solves and verifies our v2
// challenges (every algorithm, both modes) with our secrets, altcha-lib/v1 our v1 ones, and our
// verifier accepts the payloads they produce. PROTOCOL.md's known answers pass through our verifier.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { verifySolution, type Challenge } from 'altcha-lib';
import { extractParams, verifySolution as verifySolutionV1 } from 'altcha-lib/v1';
import {
  createChallenge, parseChallengeParams, signChallenge, type ChallengeContext, type DerivedChallenge,
} from '../../src/pow/challenge.js';
import { hmacPreparedHex } from '../../src/pow/crypto.js';
import { deriveKey } from '../../src/pow/derive.js';
import { canonicalJson } from '../../src/pow/payload.js';
import { resolvePolicy } from '../../src/pow/policy.js';
import { deriveKeySecret, preparePowSecrets } from '../../src/pow/secrets.js';
import { verifyPayload } from '../../src/pow/verify.js';
import { clientDeriveKey, encodePayload, memoryClaimOnce, solveV1, solveV2 } from '../helpers/pow-test-server.js';

const HMAC_SECRET = 'test-hmac-secret-0123456789abcdef';
const secrets = preparePowSecrets(HMAC_SECRET);
const KEY_SECRET = deriveKeySecret(HMAC_SECRET);
const LIMITS = { maxMemoryBytes: 128 * 1024 * 1024 };
const API_KEY = 'key_challengetest000000000000';
const ctx = (extra: Partial<ChallengeContext> = {}): ChallengeContext => ({ secrets, apiKeyId: API_KEY, ...extra });
const deps = () => ({ secrets, claimOnce: memoryClaimOnce() });

// Low costs keep the suite fast; the shapes are the same as in production.
const CHEAP: Record<string, Record<string, unknown>> = {
  'SHA-256': { cost: 1 },
  'SHA-384': { cost: 2 },
  'SHA-512': { cost: 1 },
  'PBKDF2/SHA-256': { cost: 10 },
  'PBKDF2/SHA-384': { cost: 10 },
  'PBKDF2/SHA-512': { cost: 10 },
  SCRYPT: { cost: 16, memoryCost: 8, parallelism: 1 },
  ARGON2ID: { cost: 1, memoryCost: 64, parallelism: 1 },
};

for (const [algorithm, costs] of Object.entries(CHEAP)) {
  for (const mode of ['deterministic', 'probabilistic'] as const) {
    test(`${algorithm} ${mode}: altcha-lib solves and verifies our challenge, and so do we`, async () => {
      const range = mode === 'deterministic' ? { counterMin: 0, counterMax: 12 } : { keyPrefixLength: 1 };
      const policy = resolvePolicy({ algorithm, mode, ...costs, ...range }, LIMITS);
      const body = await createChallenge(policy, ctx({ params: { plan: 'pro' }, verifyUrl: '/v1/verify?apiKey=x' }));
      const json = JSON.parse(body) as Challenge & { configuration: { verifyUrl: string } };
      assert.deepEqual(Object.keys(json), ['parameters', 'signature', 'configuration']);
      assert.equal(json.configuration.verifyUrl, '/v1/verify?apiKey=x');
      const p = json.parameters;
      assert.equal(p.algorithm, algorithm);
      assert.equal(p.cost, costs.cost);
      assert.equal(p.keyLength, 32);
      assert.equal(p.memoryCost, costs.memoryCost);
      assert.equal(p.parallelism, costs.parallelism);
      assert.match(p.nonce, /^[0-9a-f]{32}$/);
      assert.match(p.salt, /^[0-9a-f]{32}$/);
      assert.deepEqual(p.data, { apiKey: API_KEY, 'params.plan': 'pro' });
      if (mode === 'deterministic') {
        assert.match(p.keyPrefix, /^[0-9a-f]{32}$/);
        assert.match(p.keySignature!, /^[0-9a-f]{64}$/);
      } else {
        assert.equal(p.keyPrefix, '0');
        assert.equal(p.keySignature, undefined);
      }
      // The string we signed is the canonical form of what we sent.
      assert.equal(body.slice('{"parameters":'.length, body.indexOf(',"signature"')), canonicalJson(p));

      const { challenge, solution, payload } = await solveV2(body);
      const lib = await verifySolution({
        challenge, solution, deriveKey: clientDeriveKey(algorithm), hmacSignatureSecret: HMAC_SECRET, hmacKeySignatureSecret: KEY_SECRET,
      });
      assert.deepEqual([lib.verified, lib.invalidSignature, lib.invalidSolution, lib.expired], [true, false, false, false]);

      const d = deps();
      const ours = await verifyPayload(payload, d, API_KEY);
      assert.deepEqual({ ...ours, params: { ...(ours.verified ? ours.params : {}) } }, {
        verified: true, version: 2, algorithm, apiKeyId: API_KEY, params: { plan: 'pro' }, expiresAt: p.expiresAt,
      });
      assert.deepEqual(await verifyPayload(payload, d, API_KEY), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
    });
  }
}

test('a challenge signed by a different secret fails altcha-lib and us', async () => {
  const other = preparePowSecrets('another-hmac-secret-0123456789ab');
  const policy = resolvePolicy({ counterMin: 0, counterMax: 5 }, LIMITS);
  const { challenge, solution, payload } = await solveV2(await createChallenge(policy, { secrets: other, apiKeyId: API_KEY }));
  const lib = await verifySolution({ challenge, solution, deriveKey: clientDeriveKey('SHA-256'), hmacSignatureSecret: HMAC_SECRET });
  assert.equal(lib.invalidSignature, true);
  assert.deepEqual(await verifyPayload(payload, deps(), API_KEY), { verified: false, reason: 'INVALID_SIGNATURE' });
});

test('expiresAt is the issue time plus the policy expiry, in Unix seconds', async () => {
  const policy = resolvePolicy({ expiresInMs: 60_000 }, LIMITS);
  const now = 1_700_000_000_500;
  const json = JSON.parse(await createChallenge(policy, ctx({ now }))) as Challenge;
  assert.equal(json.parameters.expiresAt, 1_700_000_060);
  assert.equal('configuration' in json, false);
});

// PROTOCOL.md section 1 known answers, pushed through our verifier in both modes.
const NONCE = '39baf91a19d671f8231217f9e28342a6';
const SALT = '5e00d5d152e1a5db7d44fb6404a40a5e';
const VECTORS = [
  { algorithm: 'PBKDF2/SHA-256', cost: 1, key: '722ede188d41e7a7c9fd5447dca6cbb84e09c15724dbaadfb5bfb37d2cd4effa' },
  { algorithm: 'PBKDF2/SHA-256', cost: 2, key: 'cba117f9a790022a55589d5008c9f003e49c011ff7fe34fc838788a1825524f7' },
  { algorithm: 'SHA-256', cost: 1, key: '6deccc5eecdb14c99d57129ef8f2f7d3e71812d8bd022c1caaf9e56512ec186c' },
  { algorithm: 'SCRYPT', cost: 16384, memoryCost: 8, key: '1cc78d75577b791a65ba2b27894aec3c6af99b64155e79f50f4725fd43341070' },
];

for (const v of VECTORS) {
  test(`known answer ${v.algorithm} cost ${v.cost}: counter 123 verifies, 122 does not`, async () => {
    const extra = v.memoryCost ? { memoryCost: v.memoryCost, parallelism: 1 } : {};
    // altcha-lib's own derivation agrees with the table.
    const lib = await clientDeriveKey(v.algorithm)(
      { algorithm: v.algorithm, cost: v.cost, keyLength: 32, keyPrefix: '', nonce: NONCE, salt: SALT, ...extra },
      Buffer.from(SALT, 'hex'), Buffer.concat([Buffer.from(NONCE, 'hex'), Buffer.from([0, 0, 0, 123])]),
    );
    assert.equal(Buffer.from(lib.derivedKey).toString('hex'), v.key);

    const probabilistic = resolvePolicy({ algorithm: v.algorithm, cost: v.cost, mode: 'probabilistic', keyPrefix: v.key.slice(0, 2), ...extra }, LIMITS);
    const derived: DerivedChallenge = { nonce: NONCE, salt: SALT, keyPrefix: v.key.slice(0, 2), keySignature: undefined };
    // The fixed nonce is the replay key, so each attempt gets a fresh claim store.
    const submit = (counter: number, derivedKey: string) => {
      const json = JSON.parse(signChallenge(probabilistic, derived, ctx())) as Challenge;
      return verifyPayload(encodePayload({ challenge: json, solution: { counter, derivedKey } }), deps(), API_KEY);
    };
    assert.equal((await submit(123, v.key)).verified, true);
    assert.deepEqual(await submit(122, v.key), { verified: false, reason: 'INVALID_SOLUTION' });

    const deterministic = resolvePolicy({ algorithm: v.algorithm, cost: v.cost, counterMin: 123, counterMax: 123, ...extra }, LIMITS);
    const keyBytes = await deriveKey(deterministic, Buffer.from(NONCE, 'hex'), Buffer.from(SALT, 'hex'), 123);
    assert.equal(keyBytes.toString('hex'), v.key);
    const signed: DerivedChallenge = {
      nonce: NONCE, salt: SALT, keyPrefix: v.key.slice(0, 32), keySignature: hmacPreparedHex(secrets.keySignature, keyBytes),
    };
    const json = JSON.parse(signChallenge(deterministic, signed, ctx())) as Challenge;
    assert.equal((await verifyPayload(encodePayload({ challenge: json, solution: { counter: 123, derivedKey: v.key } }), deps(), API_KEY)).verified, true);
  });
}

test('v1: altcha-lib/v1 solves and verifies our challenge; the salt ends with & and carries expiry, key and params', async () => {
  for (const algorithm of ['SHA-256', 'SHA-384', 'SHA-512']) {
    const policy = resolvePolicy({ version: 1, algorithm, counterMin: 0, maxnumber: 300 }, LIMITS);
    const now = Date.now();
    const body = await createChallenge(policy, ctx({ params: { plan: 'pro', 'a-b': 'x y&z' }, now }));
    const c = JSON.parse(body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(c), ['algorithm', 'challenge', 'maxnumber', 'salt', 'signature']);
    assert.equal(c.algorithm, algorithm);
    assert.equal(c.maxnumber, 300);
    const expires = Math.floor((now + policy.expiresInMs) / 1000);
    assert.match(c.salt as string, new RegExp(`^[0-9a-f]{24}\\?expires=${expires}&apiKey=${API_KEY}&params\\.a-b=x%20y%26z&params\\.plan=pro&$`));
    const { payload, fields } = await solveV1(body);
    assert.equal(await verifySolutionV1(fields as never, HMAC_SECRET), true);
    assert.deepEqual(extractParams(fields as never), { expires: String(expires), apiKey: API_KEY, 'params.a-b': 'x y&z', 'params.plan': 'pro' });
    const d = deps();
    const ours = await verifyPayload(payload, d, API_KEY);
    assert.equal(ours.verified, true);
    assert.equal(ours.verified && ours.version, 1);
    assert.deepEqual(ours.verified && { ...ours.params }, { 'a-b': 'x y&z', plan: 'pro' });
    assert.deepEqual(await verifyPayload(payload, d, API_KEY), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
  }
});

test('custom params: names, values and count are bounded; the first of a repeated name wins', () => {
  const parse = (q: string) => parseChallengeParams(new URLSearchParams(q));
  assert.equal(parse('apiKey=key_x'), null);
  assert.deepEqual({ ...parse('apiKey=k&params.plan=pro&params.x_1-Y=&params.plan=free') }, { plan: 'pro', 'x_1-Y': '' });
  const ten = Array.from({ length: 10 }, (_, i) => `params.p${i}=${i}`).join('&');
  assert.equal(Object.keys(parse(ten)!).length, 10);
  const bad = [
    `${ten}&params.p10=x`, // eleven names
    `params.${'n'.repeat(21)}=x`,
    'params.=x',
    'params.a.b=x',
    'params.a%20b=x',
    `params.v=${'x'.repeat(101)}`,
    'params.v=%C3%A9', // é: not printable ASCII, btoa in the widget would throw
    'params.v=%0A',
    'params.__proto__=x',
    'params.constructor=x',
  ];
  for (const q of bad) assert.throws(() => parse(q), { code: 'INVALID_PARAMETER' }, q);
  assert.equal(Object.keys(parse(`params.v=${'x'.repeat(100)}`)!).length, 1);
});
