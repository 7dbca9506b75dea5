// Known answers and node:crypto cross-checks for every hashing primitive of the addon, and the
// argument checks of its wrappers (a wrong call throws, it never reaches C++ or crashes).
import assert from 'node:assert/strict';
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import { test } from 'node:test';
import { inspect } from 'node:util';
import {
  HASH_ALGORITHMS, digestLength, fromHex, hmac, hmacPrepared, hmacPreparedHex, hmacPreparedInto,
  hmacPreparedVerifyHex, iteratedSha, iteratedShaAsync, pbkdf2, pbkdf2Async, prepareHmacKey, sha,
  timingSafeEqual, toHex, type HashAlgorithm,
} from '../../src/native/index.js';

const hex = (s: string): Buffer => Buffer.from(s, 'hex');

/** Deterministic PRNG (mulberry32) so a failing random case can be reproduced from its seed. */
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

function randomBytes(rand: (n: number) => number, length: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) b[i] = rand(256);
  return b;
}

/** Random text mixing ASCII, 2-, 3- and 4-byte UTF-8 characters and lone surrogates. */
function randomText(rand: (n: number) => number, length: number): string {
  const parts = ['a', 'Z', '{', '"', 'é', 'ß', '€', '中', '😀', '\ud800', '\udfff', '\u0000'];
  let s = '';
  while (s.length < length) s += parts[rand(parts.length)];
  return s;
}

const NIST: Record<string, Record<HashAlgorithm, string>> = {
  abc: {
    sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    sha384: 'cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7',
    sha512: 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
  },
  '': {
    sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    sha384: '38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b',
    sha512: 'cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e',
  },
  abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq: {
    sha256: '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    sha384: '3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6b0455a8520bc4e6f5fe95b1fe3c8452b',
    sha512: '204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445',
  },
};

const KEY_131 = Buffer.alloc(131, 0xaa);
/** RFC 4231 section 4, test cases 1–7: key, data, HMAC-SHA-256/384/512 (case 5 truncated to 128 bits). */
const RFC4231: Array<[Buffer, Buffer, string, string, string]> = [
  [Buffer.alloc(20, 0x0b), Buffer.from('Hi There'),
    'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
    'afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6',
    '87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854'],
  [Buffer.from('Jefe'), Buffer.from('what do ya want for nothing?'),
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    'af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649',
    '164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737'],
  [Buffer.alloc(20, 0xaa), Buffer.alloc(50, 0xdd),
    '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe',
    '88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b2a5ab39dc13814b94e3ab6e101a34f27',
    'fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb'],
  [Buffer.from(Array.from({ length: 25 }, (_, i) => i + 1)), Buffer.alloc(50, 0xcd),
    '82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b',
    '3e8a69b7783c25851933ab6290af6ca77a9981480850009cc5577c6e1f573b4e6801dd23c4a7d679ccf8a386c674cffb',
    'b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd'],
  [Buffer.alloc(20, 0x0c), Buffer.from('Test With Truncation'),
    'a3b6167473100ee06e0c796c2955552b', '3abf34c3503b2a23a46efc619baef897', '415fad6271580a531d4179bc891d87a6'],
  [KEY_131, Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First'),
    '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
    '4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952',
    '80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598'],
  [KEY_131, Buffer.from('This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.'),
    '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
    '6617178e941f020d351e2f254e8fd32c602420feb0b8fb9adccebb82461e99c5a678cc31e799176d3860e6110c46523e',
    'e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58'],
];

/** PBKDF2-HMAC-SHA-256: RFC 7914 section 11, then the RFC 6070 inputs with SHA-256 (published vectors). */
const PBKDF2_SHA256: Array<[string, string, number, number, string]> = [
  ['passwd', 'salt', 1, 64, '55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783'],
  ['Password', 'NaCl', 80000, 64, '4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d'],
  ['password', 'salt', 1, 32, '120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b'],
  ['password', 'salt', 2, 32, 'ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43'],
  ['password', 'salt', 4096, 32, 'c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a'],
  ['passwordPASSWORDpassword', 'saltSALTsaltSALTsaltSALTsaltSALTsalt', 4096, 40, '348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1c635518c7dac47e9'],
  ['pass\0word', 'sa\0lt', 4096, 16, '89b69d0516f829893c696226650a8687'],
];

// PROTOCOL.md section 1: nonce 39ba…, salt 5e00…, counter 123 (password = nonce ‖ uint32_be(123)).
const P_SALT = hex('5e00d5d152e1a5db7d44fb6404a40a5e');
const P_PASSWORD = Buffer.concat([hex('39baf91a19d671f8231217f9e28342a6'), hex('0000007b')]);

test('SHA-2: NIST vectors ("abc", empty, 448-bit message), as Buffer, Uint8Array and string', () => {
  for (const [message, byAlg] of Object.entries(NIST)) {
    for (const alg of HASH_ALGORITHMS) {
      assert.equal(sha(alg, message).toString('hex'), byAlg[alg]);
      assert.equal(sha(alg, Buffer.from(message)).toString('hex'), byAlg[alg]);
      assert.equal(sha(alg, new Uint8Array(Buffer.from(message))).toString('hex'), byAlg[alg]);
      assert.equal(sha(alg, message).length, digestLength(alg));
    }
  }
});

test('HMAC: RFC 4231 test cases 1-7, one-shot and prepared (Buffer, hex, into, verify)', () => {
  RFC4231.forEach(([key, data, ...expected]) => {
    HASH_ALGORITHMS.forEach((alg, i) => {
      const want = expected[i]!;
      const cut = (b: Buffer | string): string => (typeof b === 'string' ? b : b.toString('hex')).slice(0, want.length);
      const prepared = prepareHmacKey(alg, key);
      assert.equal(cut(hmac(alg, key, data)), want);
      assert.equal(cut(hmacPrepared(prepared, data)), want);
      assert.equal(cut(hmacPreparedHex(prepared, data)), want);
      const out = Buffer.alloc(digestLength(alg));
      hmacPreparedInto(prepared, data, out);
      assert.equal(cut(out), want);
      if (want.length === 2 * digestLength(alg)) {
        assert.equal(hmacPreparedVerifyHex(prepared, data, want), true);
        assert.equal(hmacPreparedVerifyHex(prepared, data, want.toUpperCase()), true);
      }
    });
  });
});

test('PBKDF2-HMAC-SHA-256: RFC 7914 and RFC 6070-input vectors, sync and async', async () => {
  for (const [pw, salt, iterations, keyLength, want] of PBKDF2_SHA256) {
    assert.equal(pbkdf2('sha256', Buffer.from(pw), Buffer.from(salt), iterations, keyLength).toString('hex'), want);
    assert.equal(pbkdf2('sha256', pw, salt, iterations, keyLength).toString('hex'), want);
    assert.equal((await pbkdf2Async('sha256', pw, salt, iterations, keyLength)).toString('hex'), want);
  }
});

test('PROTOCOL.md section 1 known answers: SHA-256 cost 1, PBKDF2/SHA-256 cost 1 and 2', async () => {
  assert.equal(iteratedSha('sha256', P_SALT, P_PASSWORD, 1, 32).toString('hex'),
    '6deccc5eecdb14c99d57129ef8f2f7d3e71812d8bd022c1caaf9e56512ec186c');
  assert.equal((await iteratedShaAsync('sha256', P_SALT, P_PASSWORD, 1, 32)).toString('hex'),
    '6deccc5eecdb14c99d57129ef8f2f7d3e71812d8bd022c1caaf9e56512ec186c');
  assert.equal(pbkdf2('sha256', P_PASSWORD, P_SALT, 1, 32).toString('hex'),
    '722ede188d41e7a7c9fd5447dca6cbb84e09c15724dbaadfb5bfb37d2cd4effa');
  assert.equal(pbkdf2('sha256', P_PASSWORD, P_SALT, 2, 32).toString('hex'),
    'cba117f9a790022a55589d5008c9f003e49c011ff7fe34fc838788a1825524f7');
});

/** The reference of PROTOCOL.md section 1, written with node:crypto. */
function referenceIteratedSha(alg: HashAlgorithm, salt: Buffer, pw: Buffer, cost: number, keyLength: number): Buffer {
  let d = createHash(alg).update(salt).update(pw).digest();
  for (let i = 1; i < cost; i++) d = createHash(alg).update(d).digest();
  return d.subarray(0, keyLength);
}

for (const alg of HASH_ALGORITHMS) {
  test(`${alg}: 200 random inputs agree with node:crypto (hash, HMAC one-shot and prepared, PBKDF2, iterated)`, () => {
    const seed = 0x5eed + alg.length * 7919 + digestLength(alg);
    const rand = rng(seed);
    const block = digestLength(alg) === 32 ? 64 : 128;
    const lengths = [0, 1, block - 1, block, block + 1, 2 * block + 3, 1000];
    for (let i = 0; i < 200; i++) {
      const where = `seed ${seed}, case ${i}`;
      const data = randomBytes(rand, i < lengths.length ? lengths[i]! : rand(1500));
      const key = randomBytes(rand, i < lengths.length ? lengths[lengths.length - 1 - i]! : rand(3 * block));
      assert.deepEqual(sha(alg, data), createHash(alg).update(data).digest(), where);
      const mac = createHmac(alg, key).update(data).digest();
      assert.deepEqual(hmac(alg, key, data), mac, where);
      const prepared = prepareHmacKey(alg, key);
      assert.deepEqual(hmacPrepared(prepared, data), mac, where);
      assert.equal(hmacPreparedHex(prepared, data), mac.toString('hex'), where);
      assert.equal(hmacPreparedVerifyHex(prepared, data, mac.toString('hex')), true, where);
      const text = randomText(rand, rand(300));
      assert.deepEqual(sha(alg, text), createHash(alg).update(text, 'utf8').digest(), where);
      assert.deepEqual(hmacPrepared(prepared, text), createHmac(alg, key).update(text, 'utf8').digest(), where);
      const iterations = 1 + rand(40);
      const keyLength = 1 + rand(3 * digestLength(alg));
      assert.deepEqual(pbkdf2(alg, key, data, iterations, keyLength), pbkdf2Sync(key, data, iterations, keyLength, alg), where);
      const cost = 1 + rand(30);
      const cut = 1 + rand(digestLength(alg));
      assert.deepEqual(iteratedSha(alg, data, key, cost, cut), referenceIteratedSha(alg, data, key, cost, cut), where);
    }
  });
}

test('strings of any size cross the boundary as UTF-8 (scratch buffer edges, lone surrogates, long text)', () => {
  const key = Buffer.from('k');
  const prepared = prepareHmacKey('sha256', key);
  // The per-thread scratch holds 16,384 bytes: probe just below, at and above it with 1-4 byte characters.
  for (const unit of ['a', 'é', '€', '😀', '\ud83d']) {
    for (const bytes of [16_370, 16_379, 16_380, 16_381, 16_384, 16_390, 70_000]) {
      const s = unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)));
      const want = createHmac('sha256', key).update(s, 'utf8').digest('hex');
      assert.equal(hmacPreparedHex(prepared, s), want, `${JSON.stringify(unit)} × ${s.length}`);
      assert.deepEqual(sha('sha256', s), createHash('sha256').update(s, 'utf8').digest());
    }
  }
});

test('views with a byte offset are read from their offset', () => {
  const backing = Buffer.from('xxxxabcyyyy');
  const view = backing.subarray(4, 7);
  assert.equal(sha('sha256', view).toString('hex'), NIST.abc!.sha256);
  assert.equal(sha('sha256', new Uint8Array(backing.buffer, backing.byteOffset + 4, 3)).toString('hex'), NIST.abc!.sha256);
  const out = Buffer.alloc(40, 0xee);
  const target = out.subarray(4, 36);
  hmacPreparedInto(prepareHmacKey('sha256', 'Jefe'), 'what do ya want for nothing?', target);
  assert.equal(target.toString('hex'), RFC4231[1]![2]);
  assert.equal(out.subarray(0, 4).toString('hex'), 'eeeeeeee');
  assert.equal(out.subarray(36).toString('hex'), 'eeeeeeee');
});

test('iterated SHA: key = d[0:keyLength] with slice semantics, cost counts every hash', async () => {
  const salt = Buffer.from('salt');
  const pw = Buffer.from('pw');
  for (const alg of HASH_ALGORITHMS) {
    const full = referenceIteratedSha(alg, salt, pw, 5, 64);
    assert.deepEqual(iteratedSha(alg, salt, pw, 5, 1000), full);
    assert.equal(iteratedSha(alg, salt, pw, 5, 1000).length, digestLength(alg));
    assert.deepEqual(await iteratedShaAsync(alg, salt, pw, 5, 7), full.subarray(0, 7));
  }
  assert.deepEqual(iteratedSha('sha256', salt, pw, 1, 32), createHash('sha256').update('saltpw').digest());
  assert.deepEqual(iteratedSha('sha256', salt, pw, 2, 32),
    createHash('sha256').update(createHash('sha256').update('saltpw').digest()).digest());
});

test('async derivations copy their inputs and agree with the sync ones under concurrency', async () => {
  const pw = Buffer.from('password');
  const salt = Buffer.from('salt');
  const pending = Array.from({ length: 16 }, (_, i) => pbkdf2Async('sha512', pw, salt, 500 + i, 80));
  const iterated = iteratedShaAsync('sha384', salt, pw, 3000, 48);
  pw.fill(0);
  salt.fill(0);
  const keys = await Promise.all(pending);
  keys.forEach((key, i) => assert.deepEqual(key, pbkdf2Sync('password', 'salt', 500 + i, 80, 'sha512')));
  assert.deepEqual(await iterated, referenceIteratedSha('sha384', Buffer.from('salt'), Buffer.from('password'), 3000, 48));
});

test('hex: lowercase out, either case in, round trips, anything else is null', () => {
  const rand = rng(42);
  for (let i = 0; i < 200; i++) {
    const b = randomBytes(rand, rand(300));
    const h = toHex(b);
    assert.equal(h, b.toString('hex'));
    assert.deepEqual(fromHex(h), b);
    assert.deepEqual(fromHex(h.toUpperCase()), b);
  }
  assert.equal(toHex(Buffer.alloc(0)), '');
  assert.deepEqual(fromHex(''), Buffer.alloc(0));
  assert.deepEqual(fromHex('00fFaB'), Buffer.from([0, 255, 171]));
  assert.equal(toHex(new Uint8Array([1, 2, 254])), '0102fe');
  for (const bad of ['0', 'abc', '0g', 'g0', 'zz', ' 00', '00 ', '0x00', '-1', '\u0130\u0130', '\u0660\u0661', '\uff10\uff10', 'é0']) {
    assert.equal(fromHex(bad), null, JSON.stringify(bad));
  }
});

test('timingSafeEqual: equal, unequal, and unequal lengths are false without throwing', () => {
  const a = Buffer.from('0123456789abcdef');
  assert.equal(timingSafeEqual(a, Buffer.from('0123456789abcdef')), true);
  assert.equal(timingSafeEqual(a, Buffer.from('0123456789abcdeF')), false);
  assert.equal(timingSafeEqual(a, Buffer.from('x123456789abcdef')), false);
  assert.equal(timingSafeEqual(a, Buffer.from('0123456789abcde')), false);
  assert.equal(timingSafeEqual(a, Buffer.alloc(0)), false);
  assert.equal(timingSafeEqual(Buffer.alloc(0), Buffer.alloc(0)), true);
  assert.equal(timingSafeEqual(new Uint8Array([1, 2]), Buffer.from([1, 2])), true);
});

test('hmacPreparedVerifyHex: wrong MAC, wrong length, non-hex and the other key are false', () => {
  const prepared = prepareHmacKey('sha256', 'secret');
  const good = createHmac('sha256', 'secret').update('msg').digest('hex');
  assert.equal(hmacPreparedVerifyHex(prepared, 'msg', good), true);
  assert.equal(hmacPreparedVerifyHex(prepared, 'msh', good), false);
  assert.equal(hmacPreparedVerifyHex(prepareHmacKey('sha256', 'secreT'), 'msg', good), false);
  assert.equal(hmacPreparedVerifyHex(prepared, 'msg', good.slice(0, 62)), false);
  assert.equal(hmacPreparedVerifyHex(prepared, 'msg', `${good}00`), false);
  assert.equal(hmacPreparedVerifyHex(prepared, 'msg', `${good.slice(0, 63)}g`), false);
  assert.equal(hmacPreparedVerifyHex(prepared, 'msg', ''), false);
  assert.equal(hmacPreparedVerifyHex(prepared, 'msg', 'f'.repeat(1_000_000)), false);
  assert.equal(hmacPreparedVerifyHex(prepareHmacKey('sha512', 'secret'), 'msg', good), false);
});

test('a prepared key shows no key material and cannot be forged', () => {
  const prepared = prepareHmacKey('sha384', Buffer.alloc(16, 0x41));
  assert.equal(prepared.alg, 'sha384');
  assert.equal(prepared.digestLength, 48);
  assert.equal(Object.isFrozen(prepared), true);
  assert.equal(JSON.stringify(prepared), '{"alg":"sha384","digestLength":48}');
  assert.doesNotMatch(inspect(prepared, { showHidden: true, depth: 5 }), /Buffer|<|[0-9a-f]{8}/);
  const forged = { alg: 'sha256', digestLength: 32 } as unknown as ReturnType<typeof prepareHmacKey>;
  assert.throws(() => hmacPrepared(forged, 'x'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => hmacPreparedHex(Object.create(prepared), 'x'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
});

test('wrong argument types throw TypeError, out-of-range numbers RangeError; the process survives', async () => {
  const typeError = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
  const rangeError = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };
  const junk: unknown[] = [undefined, null, 1, 1n, true, {}, [], [1, 2], () => 1, Symbol('s'), new Uint16Array(4),
    new Float64Array(1), new DataView(new ArrayBuffer(4)), new ArrayBuffer(4), new Uint8ClampedArray(4)];
  const p = prepareHmacKey('sha256', 'k');
  const b = Buffer.from('x');
  const anyf = <T extends (...args: never[]) => unknown>(f: T) => f as unknown as (...args: unknown[]) => unknown;
  for (const v of junk) {
    assert.throws(() => anyf(sha)('sha256', v), typeError);
    assert.throws(() => anyf(hmac)('sha256', v, b), typeError);
    assert.throws(() => anyf(hmac)('sha256', b, v), typeError);
    assert.throws(() => anyf(prepareHmacKey)('sha256', v), typeError);
    assert.throws(() => anyf(hmacPrepared)(v, b), typeError);
    assert.throws(() => anyf(hmacPrepared)(p, v), typeError);
    assert.throws(() => anyf(hmacPreparedHex)(p, v), typeError);
    assert.throws(() => anyf(hmacPreparedInto)(p, b, v), typeError);
    assert.throws(() => anyf(hmacPreparedVerifyHex)(p, b, v), typeError);
    assert.throws(() => anyf(pbkdf2)('sha256', v, b, 1, 32), typeError);
    assert.throws(() => anyf(pbkdf2)('sha256', b, v, 1, 32), typeError);
    assert.throws(() => anyf(pbkdf2Async)('sha256', v, b, 1, 32), typeError);
    assert.throws(() => anyf(iteratedSha)('sha256', v, b, 1, 32), typeError);
    assert.throws(() => anyf(iteratedShaAsync)('sha256', b, v, 1, 32), typeError);
    assert.throws(() => anyf(timingSafeEqual)(v, b), typeError);
    assert.throws(() => anyf(timingSafeEqual)(b, v), typeError);
    assert.throws(() => anyf(toHex)(v), typeError);
    if (typeof v !== 'string') assert.throws(() => anyf(fromHex)(v), typeError);
    if (typeof v !== 'number') {
      assert.throws(() => anyf(pbkdf2)('sha256', b, b, v, 32), typeError);
      assert.throws(() => anyf(iteratedSha)('sha256', b, b, 1, v), typeError);
    }
  }
  for (const alg of ['md5', 'SHA-256', 'SHA256', 'sha1', '', '__proto__', 'toString', 'constructor', 0, null]) {
    assert.throws(() => anyf(sha)(alg, b), typeError);
    assert.throws(() => anyf(hmac)(alg, b, b), typeError);
    assert.throws(() => anyf(prepareHmacKey)(alg, b), typeError);
    assert.throws(() => anyf(pbkdf2)(alg, b, b, 1, 32), typeError);
    assert.throws(() => anyf(iteratedSha)(alg, b, b, 1, 32), typeError);
  }
  for (const n of [0, -1, 1.5, NaN, Infinity, 2 ** 32, Number.MAX_SAFE_INTEGER + 2]) {
    assert.throws(() => pbkdf2('sha256', b, b, n, 32), rangeError);
    assert.throws(() => pbkdf2('sha256', b, b, 1, n), rangeError);
    assert.throws(() => pbkdf2Async('sha256', b, b, n, 32), rangeError);
    assert.throws(() => iteratedSha('sha256', b, b, n, 32), rangeError);
    assert.throws(() => iteratedShaAsync('sha256', b, b, 1, n), rangeError);
  }
  assert.throws(() => pbkdf2('sha256', b, b, 1, 2 ** 20 + 1), rangeError);
  assert.throws(() => hmacPreparedInto(p, b, Buffer.alloc(31)), rangeError);
  assert.throws(() => hmacPreparedInto(p, b, Buffer.alloc(33)), rangeError);
  // Still alive and still right after all of the above.
  assert.equal(sha('sha256', 'abc').toString('hex'), NIST.abc!.sha256);
});

test('error messages never echo argument values (they may be secrets)', () => {
  const secret = 'sec_DoNotLeakThisValue';
  for (const f of [
    () => sha(secret as HashAlgorithm, 'x'),
    () => pbkdf2('sha256', secret, 'salt', -5, 32),
    () => hmacPrepared({ secret } as unknown as ReturnType<typeof prepareHmacKey>, 'x'),
  ]) {
    assert.throws(f, (err: Error) => !err.message.includes(secret) && !err.message.includes('-5'));
  }
});
