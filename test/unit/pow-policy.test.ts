// Challenge policies: defaults, validation of stored per-key policies, POW_MAX_MEMORY, and
// adaptive difficulty (scalePolicy).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALGORITHM_DEFAULTS, MAX_COUNTER, POLICY_DEFAULTS, resolvePolicy, scalePolicy } from '../../src/pow/policy.js';

const MB = 1024 * 1024;
const LIMITS = { maxMemoryBytes: 128 * MB };

test('no stored policy: deterministic SHA-256, cost 1, counters 10,000–70,000, 20 min, up to 16x work', () => {
  assert.deepEqual({ ...resolvePolicy(null, LIMITS) }, {
    version: 2, algorithm: 'SHA-256', cost: 1, memoryCost: undefined, parallelism: undefined, keyLength: 32,
    mode: 'deterministic', counterMin: 10_000, counterMax: 70_000, keyPrefix: '', expiresInMs: 1_200_000, maxCost: 16,
  });
  assert.ok(Object.isFrozen(resolvePolicy({}, LIMITS)));
  assert.equal(POLICY_DEFAULTS.expiresInMs, 1_200_000);
});

test('each algorithm gets its own defaults; probabilistic mode a zero prefix', () => {
  const scrypt = resolvePolicy({ algorithm: 'SCRYPT' }, LIMITS);
  assert.deepEqual([scrypt.cost, scrypt.memoryCost, scrypt.parallelism, scrypt.counterMin, scrypt.counterMax], [1024, 8, 1, 20, 80]);
  const argon = resolvePolicy({ algorithm: 'ARGON2ID', mode: 'probabilistic' }, LIMITS);
  assert.deepEqual([argon.cost, argon.memoryCost, argon.parallelism, argon.keyPrefix, argon.counterMax], [2, 4096, 1, '00', 0]);
  const pbkdf2 = resolvePolicy({ algorithm: 'PBKDF2/SHA-512', mode: 'probabilistic' }, LIMITS);
  assert.deepEqual([pbkdf2.cost, pbkdf2.keyPrefix, pbkdf2.maxCost], [ALGORITHM_DEFAULTS['PBKDF2/SHA-512'].cost, '000', 16_000]);
  assert.equal(resolvePolicy({ mode: 'probabilistic', keyPrefix: 'ABc0' }, LIMITS).keyPrefix, 'abc0');
  assert.equal(resolvePolicy({ mode: 'probabilistic', keyPrefixLength: 5 }, LIMITS).keyPrefix, '00000');
  const custom = resolvePolicy({ counterMax: 500 }, LIMITS);
  assert.deepEqual([custom.counterMin, custom.counterMax], [500, 500]);
  const min = resolvePolicy({ counterMin: 80_000 }, LIMITS);
  assert.deepEqual([min.counterMin, min.counterMax], [80_000, 80_000]);
});

test('v1 policies: SHA only, cost 1, maxnumber is counterMax, key length is the digest length', () => {
  const v1 = resolvePolicy({ version: 1, algorithm: 'SHA-512', maxnumber: 50_000 }, LIMITS);
  assert.deepEqual([v1.version, v1.algorithm, v1.cost, v1.keyLength, v1.counterMin, v1.counterMax], [1, 'SHA-512', 1, 64, 10_000, 50_000]);
  assert.equal(resolvePolicy({ version: 1 }, LIMITS).algorithm, 'SHA-256');
  for (const bad of [
    { version: 1, algorithm: 'PBKDF2/SHA-256' }, { version: 1, mode: 'probabilistic' }, { version: 1, cost: 2 },
    { version: 1, keyLength: 32 }, { version: 1, maxnumber: 10, counterMax: 10 }, { version: 1, memoryCost: 8 },
    { version: 2, maxnumber: 100 }, { version: 3 },
  ]) assert.throws(() => resolvePolicy(bad, LIMITS), { code: 'POLICY_INVALID' }, JSON.stringify(bad));
});

test('malformed stored policies: POLICY_INVALID', () => {
  const bad: Record<string, unknown>[] = [
    { algorithm: 'MD5' }, { algorithm: 'sha-256' }, { mode: 'fast' }, { cost: 0 }, { cost: 1.5 }, { cost: '1' },
    { cost: Number.MAX_SAFE_INTEGER + 2 }, { unknownField: 1 }, { keyLength: 8 }, { keyLength: 33, algorithm: 'SHA-256' },
    { keyLength: 65, algorithm: 'PBKDF2/SHA-256' }, { algorithm: 'SCRYPT', cost: 1000 }, { algorithm: 'SCRYPT', cost: 1 },
    { algorithm: 'SHA-256', memoryCost: 8 }, { algorithm: 'ARGON2ID', memoryCost: 8, parallelism: 2 },
    { algorithm: 'ARGON2ID', parallelism: 17 }, { counterMin: 10, counterMax: 5 }, { counterMax: MAX_COUNTER + 1 },
    { counterMin: -1 }, { mode: 'probabilistic', counterMax: 5 }, { keyPrefix: '00' }, { mode: 'probabilistic', keyPrefix: 'zz' },
    { mode: 'probabilistic', keyPrefix: '' }, { mode: 'probabilistic', keyPrefix: '0'.repeat(17) },
    { mode: 'probabilistic', keyPrefix: '00', keyPrefixLength: 2 }, { mode: 'probabilistic', keyPrefixLength: 0 },
    { expiresInMs: 9_999 }, { expiresInMs: 24 * 3_600_000 + 1 }, { cost: 4, maxCost: 3 },
    { algorithm: 'SCRYPT', mode: 'probabilistic', maxCost: 3000 },
  ];
  for (const stored of bad) assert.throws(() => resolvePolicy(stored, LIMITS), { code: 'POLICY_INVALID' }, JSON.stringify(stored));
  assert.throws(() => resolvePolicy([] as never, LIMITS), { code: 'POLICY_INVALID' });
});

test('POW_MAX_MEMORY: scrypt 128·N·r·p and Argon2id memoryCost KiB above the limit are POLICY_NOT_ALLOWED', () => {
  // 128 · 131072 · 8 · 1 = 128 MiB exactly: allowed; twice that is not.
  assert.equal(resolvePolicy({ algorithm: 'SCRYPT', cost: 131_072, memoryCost: 8 }, LIMITS).cost, 131_072);
  assert.throws(() => resolvePolicy({ algorithm: 'SCRYPT', cost: 262_144, memoryCost: 8 }, LIMITS), { code: 'POLICY_NOT_ALLOWED' });
  assert.throws(() => resolvePolicy({ algorithm: 'SCRYPT', cost: 1024, memoryCost: 8, parallelism: 16 }, { maxMemoryBytes: 8 * MB }), { code: 'POLICY_NOT_ALLOWED' });
  assert.equal(resolvePolicy({ algorithm: 'ARGON2ID', memoryCost: 131_072 }, LIMITS).memoryCost, 131_072);
  assert.throws(() => resolvePolicy({ algorithm: 'ARGON2ID', memoryCost: 131_073 }, LIMITS), { code: 'POLICY_NOT_ALLOWED' });
  // Probabilistic scrypt scales N: an explicit ceiling must fit, a defaulted one shrinks to fit.
  assert.throws(() => resolvePolicy({ algorithm: 'SCRYPT', mode: 'probabilistic', cost: 1024, maxCost: 262_144 }, LIMITS), { code: 'POLICY_NOT_ALLOWED' });
  assert.equal(resolvePolicy({ algorithm: 'SCRYPT', mode: 'probabilistic', cost: 65_536 }, LIMITS).maxCost, 131_072);
  assert.equal(resolvePolicy({ algorithm: 'SCRYPT', mode: 'probabilistic', cost: 131_072 }, LIMITS).maxCost, 131_072);
  // Deterministic scrypt scales the counters, not N: the ceiling does not count against memory.
  assert.equal(resolvePolicy({ algorithm: 'SCRYPT', cost: 131_072 }, LIMITS).maxCost, 16 * 131_072);
});

test('scalePolicy: penalty 0 (or junk) returns the policy itself', () => {
  const p = resolvePolicy(null, LIMITS);
  for (const penalty of [0, -1, Number.NaN, -Infinity]) assert.equal(scalePolicy(p, penalty), p);
});

test('scalePolicy: deterministic policies scale the counter range by 1 + penalty, at most maxCost / cost', () => {
  const p = resolvePolicy({ counterMin: 100, counterMax: 300, maxCost: 4 }, LIMITS);
  const once = scalePolicy(p, 1);
  assert.deepEqual([once.counterMin, once.counterMax, once.cost], [200, 600, 1]);
  const half = scalePolicy(p, 0.5);
  assert.deepEqual([half.counterMin, half.counterMax], [150, 450]);
  const capped = scalePolicy(p, 100);
  assert.deepEqual([capped.counterMin, capped.counterMax], [400, 1200]);
  const huge = scalePolicy(resolvePolicy({ counterMin: 2 ** 31, counterMax: 2 ** 31 }, LIMITS), 3);
  assert.deepEqual([huge.counterMin, huge.counterMax], [MAX_COUNTER, MAX_COUNTER]);
  assert.equal(scalePolicy(resolvePolicy({ maxCost: 1 }, LIMITS), 5).counterMax, 70_000, 'maxCost = cost: no scaling');
  const v1 = scalePolicy(resolvePolicy({ version: 1, counterMin: 10, maxnumber: 20 }, LIMITS), 2);
  assert.deepEqual([v1.version, v1.counterMin, v1.counterMax], [1, 30, 60]);
});

test('scalePolicy: probabilistic policies scale cost (scrypt by powers of two), at most maxCost', () => {
  const pbkdf2 = resolvePolicy({ algorithm: 'PBKDF2/SHA-256', mode: 'probabilistic', cost: 1000, maxCost: 5000 }, LIMITS);
  assert.equal(scalePolicy(pbkdf2, 1).cost, 2000);
  assert.equal(scalePolicy(pbkdf2, 2.5).cost, 3500);
  assert.equal(scalePolicy(pbkdf2, 50).cost, 5000);
  const scrypt = resolvePolicy({ algorithm: 'SCRYPT', mode: 'probabilistic', cost: 1024 }, LIMITS);
  assert.deepEqual([1, 2, 3, 7, 1000].map((p) => scalePolicy(scrypt, p).cost), [2048, 2048, 4096, 8192, 16_384]);
  assert.equal(scalePolicy(scrypt, 0.5), scrypt, 'a factor below 2 cannot double N');
  assert.equal(scalePolicy(scrypt, 3).counterMax, 0);
});
