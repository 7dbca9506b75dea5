// verifyPayload rejects every tampered, expired, replayed, foreign or hostile payload with the right
// code, in the mandatory order (what is claimed and what is not), and is exactly-once under concurrency.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Challenge, Solution } from 'altcha-lib';
import { PalisadeError } from '../../src/errors.js';
import { createChallenge, signChallenge } from '../../src/pow/challenge.js';
import { hmacPreparedHex, sha } from '../../src/pow/crypto.js';
import { deriveKey } from '../../src/pow/derive.js';
import { resolvePolicy, type ChallengePolicy } from '../../src/pow/policy.js';
import { preparePowSecrets } from '../../src/pow/secrets.js';
import { verifyPayload, type VerifyDeps } from '../../src/pow/verify.js';
import { encodePayload, memoryClaimOnce, solveV1, solveV2 } from '../helpers/pow-test-server.js';

const HMAC_SECRET = 'verify-test-hmac-secret-0123456789';
const secrets = preparePowSecrets(HMAC_SECRET);
const LIMITS = { maxMemoryBytes: 128 * 1024 * 1024 };
const KEY = 'key_verifytest00000000000000';
const DETERMINISTIC = resolvePolicy({ counterMin: 0, counterMax: 20 }, LIMITS);
const PROBABILISTIC = resolvePolicy({ mode: 'probabilistic', keyPrefixLength: 1 }, LIMITS);
const V1 = resolvePolicy({ version: 1, counterMin: 0, counterMax: 200 }, LIMITS);

const deps = (extra: Partial<VerifyDeps> = {}): VerifyDeps => ({ secrets, claimOnce: memoryClaimOnce(), ...extra });

interface Solved { challenge: Challenge; solution: Solution; payload: string }
async function solved(policy: ChallengePolicy = DETERMINISTIC, now?: number): Promise<Solved> {
  return solveV2(await createChallenge(policy, { secrets, apiKeyId: KEY, now }));
}
const encode = (challenge: unknown, solution: unknown) => encodePayload({ challenge, solution });
const failed = (reason: string) => ({ verified: false, reason });

test('tampered parameters or signature: INVALID_SIGNATURE, and the challenge is not spent', async () => {
  const s = await solved();
  const d = deps();
  const p = s.challenge.parameters;
  const variants = [
    { ...p, cost: 2 },
    { ...p, keyPrefix: p.keyPrefix.slice(0, 30) },
    { ...p, expiresAt: p.expiresAt! + 3600 },
    { ...p, data: { ...p.data, 'params.plan': 'pro' } },
    { ...p, nonce: 'f'.repeat(32) },
  ];
  for (const parameters of variants) {
    assert.deepEqual(await verifyPayload(encode({ parameters, signature: s.challenge.signature }, s.solution), d, KEY), failed('INVALID_SIGNATURE'));
  }
  const sig = s.challenge.signature!;
  const flipped = (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1);
  assert.deepEqual(await verifyPayload(encode({ parameters: p, signature: flipped }, s.solution), d, KEY), failed('INVALID_SIGNATURE'));
  assert.deepEqual(await verifyPayload(encode({ parameters: p, signature: sig.toUpperCase() }, s.solution), d, KEY), failed('INVALID_PAYLOAD'));
  assert.deepEqual(await verifyPayload(encode({ parameters: p }, s.solution), d, KEY), failed('INVALID_PAYLOAD'));
  // None of that spent the challenge.
  assert.equal((await verifyPayload(s.payload, d, KEY)).verified, true);
});

test('a challenge issued to another key, or signed with another secret: INVALID_SIGNATURE', async () => {
  const s = await solved();
  assert.deepEqual(await verifyPayload(s.payload, deps(), 'key_someoneelse0000000000000'), failed('INVALID_SIGNATURE'));
  const foreign = preparePowSecrets('a-different-server-secret-000000');
  const f = await solveV2(await createChallenge(DETERMINISTIC, { secrets: foreign, apiKeyId: KEY }));
  assert.deepEqual(await verifyPayload(f.payload, deps(), KEY), failed('INVALID_SIGNATURE'));
});

test('derivedKey must be lowercase even-length hex of keyLength bytes: else INVALID_SOLUTION (and spent)', async () => {
  for (const mutate of [
    (k: string) => k.toUpperCase(),
    (k: string) => k.slice(0, -1),
    (k: string) => k.slice(0, -2),
    (k: string) => `${k}00`,
    (k: string) => `${k.slice(0, -1)}g`,
    () => '',
  ]) {
    const s = await solved();
    const d = deps();
    const bad = encode(s.challenge, { ...s.solution, derivedKey: mutate(s.solution.derivedKey) });
    assert.deepEqual(await verifyPayload(bad, d, KEY), failed('INVALID_SOLUTION'));
    assert.deepEqual(await verifyPayload(s.payload, d, KEY), failed('PAYLOAD_ALREADY_USED'));
  }
});

test('a wrong derived key of the right shape: INVALID_SOLUTION; the right one afterwards is already used', async () => {
  const s = await solved();
  const d = deps();
  const k = s.solution.derivedKey;
  const wrong = (k[10] === '0' ? '1' : '0');
  const bad = encode(s.challenge, { ...s.solution, derivedKey: k.slice(0, 10) + wrong + k.slice(11) });
  assert.deepEqual(await verifyPayload(bad, d, KEY), failed('INVALID_SOLUTION'));
  assert.deepEqual(await verifyPayload(s.payload, d, KEY), failed('PAYLOAD_ALREADY_USED'));
});

test('counter: non-integers, negatives and values past uint32 are INVALID_SOLUTION; a non-number INVALID_PAYLOAD', async () => {
  for (const counter of [-1, 1.5, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
    const s = await solved();
    assert.deepEqual(await verifyPayload(encode(s.challenge, { ...s.solution, counter }), deps(), KEY), failed('INVALID_SOLUTION'));
  }
  const s = await solved();
  assert.deepEqual(await verifyPayload(encode(s.challenge, { ...s.solution, counter: '3' }), deps(), KEY), failed('INVALID_PAYLOAD'));
  assert.deepEqual(await verifyPayload(encode(s.challenge, { counter: 3 }), deps(), KEY), failed('INVALID_PAYLOAD'));
});

test('probabilistic: another counter, or a correct key without the prefix, is INVALID_SOLUTION', async () => {
  const s = await solved(PROBABILISTIC);
  assert.deepEqual(await verifyPayload(encode(s.challenge, { ...s.solution, counter: s.solution.counter + 1 }), deps(), KEY), failed('INVALID_SOLUTION'));

  // A counter whose real key does not start with the prefix.
  const p = s.challenge.parameters;
  let counter = 0;
  let key: Buffer;
  for (;; counter++) {
    key = await deriveKey(PROBABILISTIC, Buffer.from(p.nonce, 'hex'), Buffer.from(p.salt, 'hex'), counter);
    if (!key.toString('hex').startsWith(p.keyPrefix)) break;
  }
  const noPrefix = encode(s.challenge, { counter, derivedKey: key.toString('hex') });
  assert.deepEqual(await verifyPayload(noPrefix, deps(), KEY), failed('INVALID_SOLUTION'));
  assert.equal((await verifyPayload(s.payload, deps(), KEY)).verified, true);
});

test('expired challenge: CHALLENGE_EXPIRED, not claimed', async () => {
  const policy = resolvePolicy({ counterMin: 0, counterMax: 5, expiresInMs: 60_000 }, LIMITS);
  const s = await solved(policy, Date.now() - 61_000);
  const d = deps();
  assert.deepEqual(await verifyPayload(s.payload, d, KEY), failed('CHALLENGE_EXPIRED'));
  assert.deepEqual(await verifyPayload(s.payload, d, KEY), failed('CHALLENGE_EXPIRED'));
  // With a clock one minute earlier it is still valid.
  assert.equal((await verifyPayload(s.payload, { ...d, now: () => Date.now() - 60_000 }, KEY)).verified, true);
});

test('hostile payloads: not base64, not JSON, nested, huge, wrong shapes, test mode — INVALID_PAYLOAD', async () => {
  const d = deps();
  const s = await solved();
  const b64 = (text: string) => Buffer.from(text, 'latin1').toString('base64');
  const nested = (n: number) => b64(`${'['.repeat(n)}${']'.repeat(n)}`);
  const hostile = [
    '', '!!!!', 'abc', `${s.payload.slice(0, -4)}@@@@`, s.payload.slice(0, -1), b64('hello'), b64('null'), b64('[]'),
    b64('"string"'), b64('{}'), nested(7), nested(100_000).slice(0, 16_000), 'A'.repeat(2 * 1024 * 1024), `${s.payload} `,
    encodePayload({ challenge: null, solution: null, test: true }),
    encodePayload({ challenge: [], solution: s.solution }),
    b64(JSON.stringify({ challenge: s.challenge, solution: s.solution }).replace('"parameters":{', '"parameters":{"__proto__":{"x":1},')),
    encode({ ...s.challenge, parameters: { ...s.challenge.parameters, extra: 1 } }, s.solution),
    encode({ ...s.challenge, parameters: { ...s.challenge.parameters, algorithm: 'MD5' } }, s.solution),
    encode({ ...s.challenge, parameters: { ...s.challenge.parameters, keyLength: 8 } }, s.solution),
    encode({ ...s.challenge, parameters: { ...s.challenge.parameters, expiresAt: undefined } }, s.solution),
    encode({ ...s.challenge, parameters: { ...s.challenge.parameters, data: { apiKey: KEY, x: 'y'.repeat(200) } } }, s.solution),
    encode({ ...s.challenge, parameters: { ...s.challenge.parameters, data: { apiKey: KEY, x: { nested: 1 } } } }, s.solution),
  ];
  for (const payload of hostile) {
    assert.deepEqual(await verifyPayload(payload, d, KEY), failed('INVALID_PAYLOAD'), payload.slice(0, 80));
  }
  assert.equal((await verifyPayload(s.payload, d, KEY)).verified, true, 'none of that spent the real one');
  assert.equal(({} as Record<string, unknown>).cost, undefined, 'no prototype was polluted');
});

test('replay key is data.challengeId when present, else the nonce; the claim lasts until the expiry plus the skew margin', async () => {
  const claims: [string, number][] = [];
  const d = deps({ claimOnce: async (id, until) => { claims.push([id, until]); return true; } });
  const s = await solved();
  await verifyPayload(s.payload, d, KEY);
  assert.equal(claims[0]![0], `pow2:${s.challenge.parameters.nonce}`);
  assert.equal(claims[0]![1], s.challenge.parameters.expiresAt! * 1000 + 60_000, 'expiry + 60 s, whenever it is verified');

  // A challenge carrying challengeId (signed by us by hand) and expiring in 24 h.
  const long = resolvePolicy({ counterMin: 3, counterMax: 3, expiresInMs: 24 * 3_600_000 }, LIMITS);
  const nonce = Buffer.alloc(16, 1);
  const salt = Buffer.alloc(16, 2);
  const key = await deriveKey(long, nonce, salt, 3);
  const body = signChallenge(long, {
    nonce: nonce.toString('hex'), salt: salt.toString('hex'), keyPrefix: key.subarray(0, 16).toString('hex'),
    keySignature: hmacPreparedHex(secrets.keySignature, key),
  }, { secrets, apiKeyId: KEY });
  const json = JSON.parse(body) as Challenge;
  json.parameters.data = { ...json.parameters.data, challengeId: 'ch_42' };
  json.signature = hmacPreparedHex(secrets.challenge, JSON.stringify(Object.fromEntries(Object.entries(json.parameters).sort())));
  const r = await verifyPayload(encode(json, { counter: 3, derivedKey: key.toString('hex') }), d, KEY);
  assert.equal(r.verified, true);
  assert.equal(claims[1]![0], 'pow2:ch_42');
  assert.equal(claims[1]![1], json.parameters.expiresAt! * 1000 + 60_000);

  const v1 = await solveV1(await createChallenge(V1, { secrets, apiKeyId: KEY }));
  await verifyPayload(v1.payload, d, KEY);
  assert.equal(claims[2]![0], `pow1:${v1.fields.challenge}`);
});

test('store failures propagate (→ 503), never verify', async () => {
  const s = await solved();
  const d = deps({ claimOnce: async () => { throw new PalisadeError('STORE_UNAVAILABLE'); } });
  await assert.rejects(async () => verifyPayload(s.payload, d, KEY), { code: 'STORE_UNAVAILABLE' });
  const full = deps({ claimOnce: async () => { throw new PalisadeError('STORE_FULL'); } });
  await assert.rejects(async () => verifyPayload(s.payload, full, KEY), { code: 'STORE_FULL' });
});

test('v1: tampered number, signature, key, expiry and the CVE-2025-68113 salt splice are all rejected', async () => {
  const v = await solveV1(await createChallenge(V1, { secrets, apiKeyId: KEY }));
  const f = v.fields;
  const d = deps();
  const check = async (fields: object, reason: string) => assert.deepEqual(await verifyPayload(encodePayload(fields), d, KEY), failed(reason), JSON.stringify(fields));

  // Splice: move the number's leading digits into the salt (same hash, different split).
  const n = String(f.number);
  if (n.length > 1) await check({ ...f, salt: f.salt + n.slice(0, 1), number: Number(n.slice(1)) }, 'INVALID_PAYLOAD');
  await check({ ...f, salt: `${f.salt}9`, number: f.number }, 'INVALID_PAYLOAD');
  // A legacy salt without the trailing & (the vulnerable format), even correctly signed: refused.
  const legacySalt = `${'a'.repeat(24)}?expires=1700000000`;
  const legacyChallenge = sha('sha256', `${legacySalt}99999`).toString('hex');
  await check({ ...f, salt: legacySalt, challenge: legacyChallenge, number: 99999,
    signature: hmacPreparedHex(secrets.v1.sha256, legacyChallenge) }, 'INVALID_PAYLOAD');
  for (const salt of [
    f.salt.replace('?expires=', '?expires=0'), f.salt.replace('?expires=', '?expire='), f.salt.replace(/&$/, ''),
    f.salt.replace('&apiKey=', '&expires=9999999999&apiKey='), `x${f.salt.slice(1)}`.toUpperCase(),
  ]) await check({ ...f, salt }, 'INVALID_PAYLOAD');

  await check({ ...f, signature: f.signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) }, 'INVALID_SIGNATURE');
  await check({ ...f, algorithm: 'SHA-512' }, 'INVALID_PAYLOAD');
  await check({ ...f, algorithm: 'SHA-1' }, 'INVALID_PAYLOAD');
  assert.deepEqual(await verifyPayload(v.payload, d, 'key_other000000000000000000'), failed('INVALID_SIGNATURE'));
  // The salt names the key: another key's name is a forgery, refused before any claim.
  await check({ ...f, salt: f.salt.replace(KEY, 'key_other000000000000000000') }, 'INVALID_SIGNATURE');
  // An expiry past the longest policy keeps the salt's form, but no issue writes it: a forgery.
  await check({ ...f, salt: f.salt.replace(/expires=\d+/, 'expires=99999999999') }, 'INVALID_SIGNATURE');
  // A plausible later expiry: the hash binds the salt, so it fails as a solution.
  const later = Number(/expires=(\d+)/.exec(f.salt)![1]) + 600;
  await check({ ...f, salt: f.salt.replace(/expires=\d+/, `expires=${later}`) }, 'INVALID_SOLUTION');
  // None of these claimed the challenge: a salt is trusted, and the challenge spent, only once it
  // hashes to the signed challenge. The real solution still verifies, once.
  assert.equal((await verifyPayload(v.payload, d, KEY)).verified, true);
  await check(f, 'PAYLOAD_ALREADY_USED');

  const w = await solveV1(await createChallenge(V1, { secrets, apiKeyId: KEY }));
  await check({ ...w.fields, number: w.fields.number + 1 }, 'INVALID_SOLUTION');
  // A wrong number is refused without a claim (one SHA, no state): the right one still verifies.
  assert.equal((await verifyPayload(w.payload, d, KEY)).verified, true);
  for (const number of [-1, 1.5]) {
    const w = await solveV1(await createChallenge(V1, { secrets, apiKeyId: KEY }));
    await check({ ...w.fields, number }, 'INVALID_SOLUTION');
  }
  const old = await solveV1(await createChallenge(resolvePolicy({ version: 1, counterMax: 50, expiresInMs: 10_000 }, LIMITS),
    { secrets, apiKeyId: KEY, now: Date.now() - 11_000 }));
  await check(old.fields, 'CHALLENGE_EXPIRED');
});

test('exactly once: 1,000 payloads, each raced by 50 concurrent verifications → 1,000 successes', async () => {
  const claimOnce = memoryClaimOnce();
  // Yield inside the claim so the 50 racers really interleave.
  const d = deps({ claimOnce: async (id, ttl) => { await new Promise((r) => setImmediate(r)); return claimOnce(id, ttl); } });
  const payloads: string[] = [];
  for (let i = 0; i < 1000; i++) payloads.push((await solved(resolvePolicy({ counterMin: 0, counterMax: 3 }, LIMITS))).payload);
  let successes = 0;
  let used = 0;
  for (const payload of payloads) {
    const results = await Promise.all(Array.from({ length: 50 }, () => verifyPayload(payload, d, KEY)));
    for (const r of results) {
      if (r.verified) successes++;
      else if (r.reason === 'PAYLOAD_ALREADY_USED') used++;
    }
  }
  assert.equal(successes, 1000);
  assert.equal(used, 49_000);
  assert.equal(claimOnce.size(), 1000);
});
