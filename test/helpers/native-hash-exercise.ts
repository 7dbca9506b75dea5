// Calls every hashing entry point of the addon once or a few times, on the paths that differ in
// C++ (stack vs heap buffers, scratch edges, async workers, thrown argument errors), and checks
// each answer against node:crypto. Small enough to run under valgrind (docs/development.md, "Memory
// checks of the addon"); exits 1 on a wrong answer.
//   valgrind --error-exitcode=1 --leak-check=no node dist/test/helpers/native-hash-exercise.js
import assert from 'node:assert/strict';
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import {
  HASH_ALGORITHMS, fromHex, hmac, hmacPrepared, hmacPreparedHex, hmacPreparedInto, hmacPreparedVerifyHex,
  iteratedSha, iteratedShaAsync, pbkdf2, pbkdf2Async, prepareHmacKey, sha, timingSafeEqual, toHex,
} from '../../src/native/index.js';
import { deriveKey, deriveKeySync } from '../../src/pow/derive.js';

const bytes = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);
const texts = ['', 'abc', 'é€😀\ud800', 'x'.repeat(16_379), '€'.repeat(5_460), '😀'.repeat(4_100), 'y'.repeat(40_000)];

for (const alg of HASH_ALGORITHMS) {
  for (const data of [bytes(0, 0), bytes(1, 1), bytes(200, 2), bytes(1000, 3), ...texts]) {
    assert.deepEqual(sha(alg, data), createHash(alg).update(data).digest());
  }
  for (const key of [bytes(0, 0), bytes(20, 0x0b), bytes(64, 4), bytes(129, 5), bytes(300, 6), 'Jefe']) {
    const prepared = prepareHmacKey(alg, key);
    for (const data of [bytes(0, 0), bytes(200, 7), ...texts]) {
      const want = createHmac(alg, key).update(data).digest();
      assert.deepEqual(hmac(alg, key, data), want);
      assert.deepEqual(hmacPrepared(prepared, data), want);
      const out = Buffer.alloc(want.length);
      hmacPreparedInto(prepared, data, out);
      assert.deepEqual(out, want);
      assert.equal(hmacPreparedHex(prepared, data), want.toString('hex'));
      assert.equal(hmacPreparedVerifyHex(prepared, data, want.toString('hex').toUpperCase()), true);
      assert.equal(hmacPreparedVerifyHex(prepared, data, 'zz'.repeat(want.length)), false);
      assert.equal(hmacPreparedVerifyHex(prepared, data, '0'.repeat(10_000)), false);
    }
  }
  for (const [iterations, keyLength] of [[1, 1], [3, 32], [50, 200]] as const) {
    assert.deepEqual(pbkdf2(alg, 'pw', bytes(37, 8), iterations, keyLength),
      pbkdf2Sync('pw', bytes(37, 8), iterations, keyLength, alg));
  }
  let d = createHash(alg).update('salt').update('pw').digest();
  for (let i = 1; i < 10; i++) d = createHash(alg).update(d).digest();
  assert.deepEqual(iteratedSha(alg, 'salt', 'pw', 10, 64), d);
  assert.deepEqual(await iteratedShaAsync(alg, 'salt', 'pw', 10, 5), d.subarray(0, 5));
  assert.deepEqual(await pbkdf2Async(alg, 'pw', 'salt', 20, 100), pbkdf2Sync('pw', 'salt', 20, 100, alg));
}

for (const n of [0, 1, 31, 200, 5000]) {
  const b = bytes(n, 0xa5);
  assert.equal(toHex(b), b.toString('hex'));
  assert.deepEqual(fromHex(b.toString('hex')), b);
  assert.equal(timingSafeEqual(b, Buffer.from(b)), true);
}
assert.equal(fromHex(`${'a'.repeat(600)}g`), null);
assert.equal(fromHex('\u0130\u0130'), null);
assert.equal(timingSafeEqual(bytes(3, 1), bytes(4, 1)), false);

const throwsType = (f: () => unknown): void => assert.throws(f, { name: 'TypeError' });
const loose = <T extends (...args: never[]) => unknown>(f: T) => f as unknown as (...args: unknown[]) => unknown;
throwsType(() => loose(sha)('sha256', 5));
throwsType(() => loose(hmacPrepared)({}, 'x'));
throwsType(() => loose(pbkdf2)('sha256', {}, 'salt', 1, 32));
throwsType(() => loose(timingSafeEqual)(new Uint16Array(2), bytes(4, 0)));

const nonce = bytes(16, 9);
const salt = bytes(16, 10);
for (const params of [
  { algorithm: 'SHA-256', cost: 3, keyLength: 32 },
  { algorithm: 'PBKDF2/SHA-512', cost: 5000, keyLength: 64 },
] as const) {
  assert.deepEqual(await deriveKey(params, nonce, salt, 7), deriveKeySync(params, nonce, salt, 7));
}
console.log('native hashing exercise: all answers match node:crypto');
