// Key derivations (PROTOCOL.md section 1): known answers, agreement with altcha-lib's own
// derivations, the inline/off-loop split and the maxThreads semaphore.
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import argon2 from 'argon2';
import { deriveKey as altchaPbkdf2 } from 'altcha-lib/algorithms/pbkdf2';
import { deriveKey as altchaScrypt } from 'altcha-lib/algorithms/scrypt';
import { deriveKey as altchaSha } from 'altcha-lib/algorithms/sha';
import {
  MAX_KEY_LENGTH, POW_ALGORITHMS, configureDerivation, deriveKey, deriveKeySync, derivationLoad, isExpensive,
  password, type DeriveParams, type PowAlgorithm,
} from '../../src/pow/derive.js';

const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const NONCE = hex('39baf91a19d671f8231217f9e28342a6');
const SALT = hex('5e00d5d152e1a5db7d44fb6404a40a5e');
// password(PASS, WORD) is the ASCII "password" of the published scrypt and Argon2 vectors.
const PASS = Buffer.from('pass');
const WORD = 0x776f7264;
const DEFAULT_QUEUE = 10_000;

function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * n | 0;
  };
}

const byteString = (rand: (n: number) => number, length: number): Buffer =>
  Buffer.from(Array.from({ length }, () => rand(256)));

test('the default maxThreads is half the hardware concurrency, at least 1', () => {
  assert.deepEqual(derivationLoad(), {
    running: 0, queued: 0, maxThreads: Math.max(1, Math.floor(availableParallelism() / 2)),
  });
});

test('PROTOCOL.md section 1 known answers (nonce 39ba…, salt 5e00…, counter 123)', async () => {
  const cases: Array<[DeriveParams, string]> = [
    [{ algorithm: 'PBKDF2/SHA-256', cost: 1, keyLength: 32 }, '722ede188d41e7a7c9fd5447dca6cbb84e09c15724dbaadfb5bfb37d2cd4effa'],
    [{ algorithm: 'PBKDF2/SHA-256', cost: 2, keyLength: 32 }, 'cba117f9a790022a55589d5008c9f003e49c011ff7fe34fc838788a1825524f7'],
    [{ algorithm: 'SHA-256', cost: 1, keyLength: 32 }, '6deccc5eecdb14c99d57129ef8f2f7d3e71812d8bd022c1caaf9e56512ec186c'],
    [{ algorithm: 'SCRYPT', cost: 16384, memoryCost: 8, keyLength: 32 }, '1cc78d75577b791a65ba2b27894aec3c6af99b64155e79f50f4725fd43341070'],
  ];
  for (const [params, want] of cases) {
    assert.equal((await deriveKey(params, NONCE, SALT, 123)).toString('hex'), want, params.algorithm);
    if (params.algorithm !== 'SCRYPT') assert.equal(deriveKeySync(params, NONCE, SALT, 123).toString('hex'), want);
  }
});

test('scrypt: RFC 7914 section 12 vector ("password", "NaCl", N=1024, r=8, p=16)', async () => {
  const key = await deriveKey(
    { algorithm: 'SCRYPT', cost: 1024, memoryCost: 8, parallelism: 16, keyLength: 64 }, PASS, Buffer.from('NaCl'), WORD);
  assert.equal(key.toString('hex'),
    'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640');
});

test('Argon2id: reference vectors of the Argon2 authors and RFC 9106 section 5.3', async () => {
  const salt = Buffer.from('somesalt');
  assert.equal((await deriveKey({ algorithm: 'ARGON2ID', cost: 2, memoryCost: 256, keyLength: 32 }, PASS, salt, WORD)).toString('hex'),
    '9dfeb910e80bad0311fee20f9c0e2b12c17987b4cac90c2ef54d5b3021c68bfe');
  assert.equal((await deriveKey({ algorithm: 'ARGON2ID', cost: 2, memoryCost: 256, parallelism: 2, keyLength: 32 }, PASS, salt, WORD)).toString('hex'),
    '6d093c501fd5999645e0ea3bf620d7b8be7fd2db59c20d9fff9539da2bf57037');
  // RFC 9106 needs a secret and associated data, which PoW never uses: this pins the library itself.
  const rfc = await argon2.hash(Buffer.alloc(32, 1), {
    type: argon2.argon2id, raw: true, salt: Buffer.alloc(16, 2), secret: Buffer.alloc(8, 3),
    associatedData: Buffer.alloc(12, 4), timeCost: 3, memoryCost: 32, parallelism: 4, hashLength: 32,
  });
  assert.equal(rfc.toString('hex'), '0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659');
});

test('password = nonce ‖ uint32_be(counter); counters that would wrap are refused', () => {
  assert.equal(password(NONCE, 123).toString('hex'), '39baf91a19d671f8231217f9e28342a60000007b');
  assert.equal(password(Buffer.alloc(0), 0xffff_ffff).toString('hex'), 'ffffffff');
  assert.equal(password(PASS, WORD).toString(), 'password');
  for (const bad of [-1, 2 ** 32, 1.5, NaN, Infinity]) {
    assert.throws(() => password(NONCE, bad), RangeError);
    assert.throws(() => deriveKeySync({ algorithm: 'SHA-256', cost: 1, keyLength: 32 }, NONCE, SALT, bad), RangeError);
  }
});

test('SHA, PBKDF2 and scrypt agree with altcha-lib on random parameters, inline and off the loop', async () => {
  const rand = rng(20_240_601);
  for (let i = 0; i < 72; i++) {
    const algorithm = (['SHA-256', 'SHA-384', 'SHA-512', 'PBKDF2/SHA-256', 'PBKDF2/SHA-384', 'PBKDF2/SHA-512'] as const)[i % 6]!;
    const sha = algorithm.startsWith('SHA-');
    const digest = Number(algorithm.slice(-3)) / 8;
    const params: DeriveParams = {
      algorithm,
      cost: 1 + rand(sha ? 3000 : 1500),
      keyLength: 1 + rand(sha ? digest : 100),
    };
    const nonce = byteString(rand, 16);
    const salt = byteString(rand, rand(40));
    const counter = rand(2 ** 31) * 2 + rand(2);
    const pw = Buffer.concat([nonce, Buffer.from([counter >>> 24, (counter >>> 16) & 255, (counter >>> 8) & 255, counter & 255])]);
    const theirs = await (sha ? altchaSha : altchaPbkdf2)({ ...params, nonce: '', salt: '', keyPrefix: '' }, salt, pw);
    const where = `case ${i}: ${JSON.stringify(params)}`;
    assert.deepEqual(await deriveKey(params, nonce, salt, counter), Buffer.from(theirs.derivedKey), where);
    assert.deepEqual(deriveKeySync(params, nonce, salt, counter), Buffer.from(theirs.derivedKey), where);
  }
  for (let i = 0; i < 6; i++) {
    const params: DeriveParams = {
      algorithm: 'SCRYPT', cost: 2 ** (1 + rand(10)), memoryCost: 1 + rand(8), parallelism: 1 + rand(2), keyLength: 1 + rand(64),
    };
    const salt = byteString(rand, 16);
    const theirs = await altchaScrypt({ ...params, nonce: '', salt: '', keyPrefix: '' }, salt, password(NONCE, i));
    assert.deepEqual(await deriveKey(params, NONCE, salt, i), Buffer.from(theirs.derivedKey), JSON.stringify(params));
  }
});

test('a SHA keyLength above the digest gives the whole digest, as altcha-lib does', async () => {
  const params: DeriveParams = { algorithm: 'SHA-256', cost: 3, keyLength: 64 };
  const theirs = await altchaSha({ ...params, nonce: '', salt: '', keyPrefix: '' }, SALT, password(NONCE, 5));
  const ours = await deriveKey(params, NONCE, SALT, 5);
  assert.equal(ours.length, 32);
  assert.deepEqual(ours, Buffer.from(theirs.derivedKey));
});

test('isExpensive: the inline limit is 2048 SHA-256 blocks (a SHA-512 block counts 4); scrypt and Argon2id always', () => {
  const at = (algorithm: PowAlgorithm, cost: number, keyLength = 32): boolean => isExpensive({ algorithm, cost, keyLength });
  assert.equal(at('SHA-256', 1), false);
  assert.equal(at('SHA-256', 2048), false);
  assert.equal(at('SHA-256', 2049), true);
  assert.equal(at('SHA-512', 512), false);
  assert.equal(at('SHA-384', 513), true);
  assert.equal(at('PBKDF2/SHA-256', 1024), false);
  assert.equal(at('PBKDF2/SHA-256', 1025), true);
  assert.equal(at('PBKDF2/SHA-256', 512, 64), false);
  assert.equal(at('PBKDF2/SHA-256', 513, 64), true);
  assert.equal(at('PBKDF2/SHA-512', 256, 64), false);
  assert.equal(at('PBKDF2/SHA-512', 257, 64), true);
  assert.equal(at('SCRYPT', 2), true);
  assert.equal(at('ARGON2ID', 1), true);
});

test('deriveKeySync refuses scrypt and Argon2id', () => {
  assert.throws(() => deriveKeySync({ algorithm: 'SCRYPT', cost: 2, memoryCost: 1, keyLength: 32 }, NONCE, SALT, 1), TypeError);
  assert.throws(() => deriveKeySync({ algorithm: 'ARGON2ID', cost: 1, memoryCost: 64, keyLength: 32 }, NONCE, SALT, 1), TypeError);
});

test('invalid parameters reject with TypeError or RangeError before any work', async () => {
  const base = { algorithm: 'SHA-256', cost: 1, keyLength: 32 } as const;
  const bad: Array<[unknown, ErrorConstructor]> = [
    [null, TypeError],
    [{ ...base, algorithm: 'MD5' }, TypeError],
    [{ ...base, algorithm: 'sha-256' }, TypeError],
    [{ ...base, algorithm: 'constructor' }, TypeError],
    [{ ...base, cost: 0 }, RangeError],
    [{ ...base, cost: 1.5 }, RangeError],
    [{ ...base, cost: '1' }, RangeError],
    [{ ...base, cost: 2 ** 32 }, RangeError],
    [{ ...base, keyLength: 0 }, RangeError],
    [{ ...base, keyLength: MAX_KEY_LENGTH + 1 }, RangeError],
    [{ ...base, memoryCost: 0 }, RangeError],
    [{ ...base, parallelism: -1 }, RangeError],
  ];
  for (const [params, type] of bad) {
    await assert.rejects(deriveKey(params as DeriveParams, NONCE, SALT, 1), type, JSON.stringify(params));
    assert.throws(() => isExpensive(params as DeriveParams), type);
  }
  assert.equal(POW_ALGORITHMS.length, 8);
});

test('library errors (scrypt N not a power of two) reject and give the slot back', async () => {
  await assert.rejects(deriveKey({ algorithm: 'SCRYPT', cost: 3, memoryCost: 1, keyLength: 16 }, NONCE, SALT, 1));
  assert.deepEqual({ ...derivationLoad(), maxThreads: 0 }, { running: 0, queued: 0, maxThreads: 0 });
  assert.equal((await deriveKey({ algorithm: 'SCRYPT', cost: 4, memoryCost: 1, keyLength: 16 }, NONCE, SALT, 1)).length, 16);
});

test('maxThreads bounds off-loop derivations; the rest wait in order and all finish right', async (t) => {
  const before = derivationLoad().maxThreads;
  t.after(() => configureDerivation({ maxThreads: before, maxQueue: DEFAULT_QUEUE }));
  configureDerivation({ maxThreads: 1 });
  const params: DeriveParams = { algorithm: 'PBKDF2/SHA-256', cost: 3000, keyLength: 32 };
  const order: number[] = [];
  const pending = [0, 1, 2, 3, 4].map((i) => deriveKey(params, NONCE, SALT, i).then((key) => (order.push(i), key)));
  assert.deepEqual(derivationLoad(), { running: 1, queued: 4, maxThreads: 1 });
  // Inline work never waits for a slot.
  assert.equal(deriveKeySync(params, NONCE, SALT, 0).length, 32);
  assert.equal((await deriveKey({ algorithm: 'SHA-256', cost: 1, keyLength: 32 }, NONCE, SALT, 1)).length, 32);
  const keys = await Promise.all(pending);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  keys.forEach((key, i) => assert.deepEqual(key, deriveKeySync(params, NONCE, SALT, i)));
  assert.deepEqual(derivationLoad(), { running: 0, queued: 0, maxThreads: 1 });
});

test('raising maxThreads starts waiting derivations at once; lowering it drains down', async (t) => {
  const before = derivationLoad().maxThreads;
  t.after(() => configureDerivation({ maxThreads: before, maxQueue: DEFAULT_QUEUE }));
  configureDerivation({ maxThreads: 1 });
  const params: DeriveParams = { algorithm: 'SHA-512', cost: 4000, keyLength: 64 };
  const pending = [0, 1, 2, 3].map((i) => deriveKey(params, NONCE, SALT, i));
  assert.deepEqual(derivationLoad(), { running: 1, queued: 3, maxThreads: 1 });
  configureDerivation({ maxThreads: 3 });
  assert.deepEqual(derivationLoad(), { running: 3, queued: 1, maxThreads: 3 });
  configureDerivation({ maxThreads: 1 });
  const keys = await Promise.all(pending);
  keys.forEach((key, i) => assert.deepEqual(key, deriveKeySync(params, NONCE, SALT, i)));
  assert.deepEqual(derivationLoad(), { running: 0, queued: 0, maxThreads: 1 });
});

test('a full queue fails fast with DERIVATION_BUSY (503)', async (t) => {
  const before = derivationLoad().maxThreads;
  t.after(() => configureDerivation({ maxThreads: before, maxQueue: DEFAULT_QUEUE }));
  configureDerivation({ maxThreads: 1, maxQueue: 2 });
  const params: DeriveParams = { algorithm: 'PBKDF2/SHA-256', cost: 2000, keyLength: 32 };
  const accepted = [0, 1, 2].map((i) => deriveKey(params, NONCE, SALT, i));
  await assert.rejects(deriveKey(params, NONCE, SALT, 3), { code: 'DERIVATION_BUSY', statusCode: 503 });
  await assert.rejects(deriveKey({ algorithm: 'ARGON2ID', cost: 1, memoryCost: 64, keyLength: 32 }, NONCE, SALT, 3),
    { code: 'DERIVATION_BUSY' });
  assert.equal((await Promise.all(accepted)).length, 3);
  assert.equal((await deriveKey(params, NONCE, SALT, 3)).length, 32);
});

test('configureDerivation refuses nonsense and keeps the old limits', () => {
  const before = derivationLoad().maxThreads;
  for (const options of [{ maxThreads: 0 }, { maxThreads: 1.5 }, { maxThreads: -2 }, { maxQueue: -1 }, { maxQueue: 0.5 }]) {
    assert.throws(() => configureDerivation(options), RangeError, JSON.stringify(options));
  }
  assert.equal(derivationLoad().maxThreads, before);
});
