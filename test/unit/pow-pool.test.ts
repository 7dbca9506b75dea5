// The challenge pool: issuing is a pop, refills run behind a concurrency limit up to `size`, an
// empty pool makes requests wait (bounded in time and number), close() stops everything, and a
// pooled challenge is signed at issue time so it is never stale.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { verifySolution, type Challenge } from 'altcha-lib';
import { signChallenge, type DerivedChallenge } from '../../src/pow/challenge.js';
import { resolvePolicy, type ChallengePolicy } from '../../src/pow/policy.js';
import { createChallengePool, isPooled, poolSizeOptions } from '../../src/pow/pool.js';
import { deriveKeySecret, preparePowSecrets, type PowSecrets } from '../../src/pow/secrets.js';
import { verifyPayload } from '../../src/pow/verify.js';
import { clientDeriveKey, memoryClaimOnce, solveV2 } from '../helpers/pow-test-server.js';

const HMAC_SECRET = 'pool-test-hmac-secret-0123456789ab';
const secrets = preparePowSecrets(HMAC_SECRET);
const LIMITS = { maxMemoryBytes: 128 * 1024 * 1024 };
const PBKDF2 = resolvePolicy({ algorithm: 'PBKDF2/SHA-256', cost: 5000, counterMin: 0, counterMax: 8 }, LIMITS);
const SCRYPT = resolvePolicy({ algorithm: 'SCRYPT', cost: 1024, counterMin: 0, counterMax: 3 }, LIMITS);
const ARGON = resolvePolicy({ algorithm: 'ARGON2ID', cost: 1, memoryCost: 256, counterMin: 0, counterMax: 3 }, LIMITS);

/** A derivation the test completes by hand, counting calls and the most in flight at once. */
function manualDerive() {
  const pending: { resolve: (c: DerivedChallenge) => void; reject: (e: Error) => void }[] = [];
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let serial = 0;
  const derive = (_policy: ChallengePolicy, _secrets: PowSecrets) => {
    calls++;
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    return new Promise<DerivedChallenge>((resolve, reject) => {
      pending.push({
        resolve: (c) => { inFlight--; resolve(c); },
        reject: (e) => { inFlight--; reject(e); },
      });
    });
  };
  const next = (): DerivedChallenge => {
    const n = (serial++).toString(16).padStart(32, '0');
    return { nonce: n, salt: n, keyPrefix: '00', keySignature: '0'.repeat(64) };
  };
  return {
    derive,
    pending,
    stats: () => ({ calls, inFlight, maxInFlight }),
    /** Completes every pending derivation, then lets the pool react. */
    async settle(rounds = 1): Promise<void> {
      for (let i = 0; i < rounds; i++) {
        for (const p of pending.splice(0)) p.resolve(next());
        await new Promise((r) => setImmediate(r));
      }
    },
  };
}

test('isPooled: deterministic v2 policies whose derivation leaves the event loop', () => {
  assert.equal(isPooled(resolvePolicy(null, LIMITS)), false);
  assert.equal(isPooled(PBKDF2), true);
  assert.equal(isPooled(SCRYPT), true);
  assert.equal(isPooled(ARGON), true);
  assert.equal(isPooled(resolvePolicy({ algorithm: 'SCRYPT', mode: 'probabilistic' }, LIMITS)), false);
  assert.equal(isPooled(resolvePolicy({ version: 1 }, LIMITS)), false);
});

test('an empty pool: the first take waits for a derivation, then the pool fills to size within the concurrency limit', async () => {
  const m = manualDerive();
  const pool = createChallengePool({ secrets, derive: m.derive }, { size: 6, lowWater: 2, concurrency: 2 });
  const first = pool.take(PBKDF2);
  assert.equal(m.stats().inFlight, 2);
  await m.settle();
  assert.equal((await first).nonce.length, 32);
  await m.settle(5);
  assert.equal(pool.ready(PBKDF2), 6);
  assert.equal(m.stats().maxInFlight, 2);
  assert.equal(m.stats().inFlight, 0);
  const callsWhenFull = m.stats().calls;
  // Taking down to the low-water mark starts nothing; going below it refills back to size.
  for (let i = 0; i < 4; i++) await pool.take(PBKDF2);
  assert.equal(m.stats().calls, callsWhenFull);
  await pool.take(PBKDF2);
  assert.equal(m.stats().inFlight, 2);
  await m.settle(4);
  assert.equal(pool.ready(PBKDF2), 6);
  // Of the 6 takes, the first waited and five were answered from stock.
  assert.deepEqual(pool.stats(), { ready: 6, fromStock: 5, waited: 1, refused: 0 });
  pool.close();
});

test('waiting is bounded: CHALLENGE_POOL_TIMEOUT after waitTimeoutMs, and at once past maxWaiters', async () => {
  const m = manualDerive();
  const pool = createChallengePool({ secrets, derive: m.derive }, { concurrency: 1, waitTimeoutMs: 50, maxWaiters: 2 });
  const a = pool.take(PBKDF2);
  const b = pool.take(PBKDF2);
  await assert.rejects(pool.take(PBKDF2), { code: 'CHALLENGE_POOL_TIMEOUT' });
  await assert.rejects(a, { code: 'CHALLENGE_POOL_TIMEOUT' });
  await assert.rejects(b, { code: 'CHALLENGE_POOL_TIMEOUT' });
  // The derivation still running lands in the pool for the next request.
  await m.settle();
  assert.equal(pool.ready(PBKDF2), 1);
  assert.deepEqual(pool.stats(), { ready: 1, fromStock: 0, waited: 2, refused: 1 });
  pool.close();
});

test('close(): waiting requests fail with NOT_READY, later takes too, and nothing refills', async () => {
  const m = manualDerive();
  const pool = createChallengePool({ secrets, derive: m.derive }, { concurrency: 1 });
  const waiting = pool.take(PBKDF2);
  pool.close();
  await assert.rejects(waiting, { code: 'NOT_READY' });
  await assert.rejects(pool.take(PBKDF2), { code: 'NOT_READY' });
  const calls = m.stats().calls;
  await m.settle(3);
  assert.equal(m.stats().calls, calls);
  assert.equal(pool.ready(PBKDF2), 0);
  pool.warm(PBKDF2);
  assert.equal(m.stats().calls, calls);
});

test('a failing derivation fails who waits and pauses refilling until the next take', async () => {
  const m = manualDerive();
  const pool = createChallengePool({ secrets, derive: m.derive }, { concurrency: 1 });
  const waiting = pool.take(PBKDF2);
  m.pending.shift()!.reject(new Error('argon2 exploded'));
  await assert.rejects(waiting, /argon2 exploded/);
  await new Promise((r) => setImmediate(r));
  assert.equal(m.stats().calls, 1, 'no retry storm');
  const again = pool.take(PBKDF2);
  await m.settle();
  assert.ok(await again);
  pool.close();
});

test('pools are per derivation policy, least recently used dropped beyond maxPools; warm() pre-fills', async () => {
  const m = manualDerive();
  const pool = createChallengePool({ secrets, derive: m.derive }, { size: 2, lowWater: 1, concurrency: 4, maxPools: 2 });
  pool.warm(PBKDF2);
  pool.warm(SCRYPT);
  await m.settle(2);
  assert.deepEqual([pool.ready(PBKDF2), pool.ready(SCRYPT)], [2, 2]);
  // The same derivation parameters share a pool, whatever else differs (expiry is signed later).
  assert.equal(pool.ready(resolvePolicy({ algorithm: 'PBKDF2/SHA-256', cost: 5000, counterMin: 0, counterMax: 8, expiresInMs: 60_000 }, LIMITS)), 2);
  pool.warm(ARGON);
  await m.settle(2);
  assert.deepEqual([pool.ready(PBKDF2), pool.ready(SCRYPT), pool.ready(ARGON)], [0, 2, 2]);
  pool.close();
});

for (const policy of [PBKDF2, SCRYPT, ARGON]) {
  test(`${policy.algorithm}: a pooled challenge is signed when issued (fresh expiry) and solves and verifies`, async () => {
    const pool = createChallengePool({ secrets }, { size: 2, lowWater: 1, concurrency: 2 });
    pool.warm(policy);
    const derived = await pool.take(policy);
    // Issue it as if it had waited an hour in the pool: the expiry counts from issue time.
    const later = Date.now() + 3_600_000;
    const body = signChallenge(policy, derived, { secrets, apiKeyId: 'key_pool', now: later });
    const json = JSON.parse(body) as Challenge;
    assert.equal(json.parameters.expiresAt, Math.floor((later + policy.expiresInMs) / 1000));
    const fresh = signChallenge(policy, await pool.take(policy), { secrets, apiKeyId: 'key_pool' });
    const { challenge, solution, payload } = await solveV2(fresh);
    const lib = await verifySolution({
      challenge, solution, deriveKey: clientDeriveKey(policy.algorithm), hmacSignatureSecret: HMAC_SECRET,
      hmacKeySignatureSecret: deriveKeySecret(HMAC_SECRET),
    });
    assert.equal(lib.verified, true);
    assert.equal((await verifyPayload(payload, { secrets, claimOnce: memoryClaimOnce() }, 'key_pool')).verified, true);
    pool.close();
  });
}

test('stats() sums the ready challenges of every pool', async () => {
  const m = manualDerive();
  const pool = createChallengePool({ secrets, derive: m.derive }, { size: 3, lowWater: 1, concurrency: 4 });
  assert.deepEqual(pool.stats(), { ready: 0, fromStock: 0, waited: 0, refused: 0 });
  pool.warm(PBKDF2);
  pool.warm(SCRYPT);
  await m.settle(4);
  assert.equal(pool.ready(PBKDF2), 3);
  assert.equal(pool.ready(SCRYPT), 3);
  await pool.take(SCRYPT);
  assert.deepEqual(pool.stats(), { ready: 5, fromStock: 1, waited: 0, refused: 0 });
  pool.close();
  assert.equal(pool.stats().ready, 0);
});

test('poolSizeOptions (CHALLENGE_POOL_SIZE): refilling starts below a quarter of the size', () => {
  assert.deepEqual(poolSizeOptions(32), { size: 32, lowWater: 8 });
  assert.deepEqual(poolSizeOptions(1), { size: 1, lowWater: 1 });
  assert.deepEqual(poolSizeOptions(5), { size: 5, lowWater: 2 });
  assert.deepEqual(poolSizeOptions(100_000), { size: 100_000, lowWater: 25_000 });
  // Every size the configuration accepts makes a pool.
  for (const size of [1, 2, 3, 7, 100_000]) createChallengePool({ secrets }, poolSizeOptions(size)).close();
});

test('option checks', () => {
  assert.throws(() => createChallengePool({ secrets }, { size: 2, lowWater: 3 }), /lowWater/);
  assert.throws(() => createChallengePool({ secrets }, { concurrency: 0 }), /concurrency/);
});
