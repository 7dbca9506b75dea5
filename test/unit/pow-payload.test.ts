// The payload helpers: canonicalJson agrees with altcha-lib's canonicalJSON (JSON.stringify of the
// keys sorted recursively) on every JSON value and on the shapes our own code signs; pooled random
// bytes are fresh per call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, decodePayload } from '../../src/pow/payload.js';
import { pooledRandomBytes } from '../../src/pow/random.js';

/** altcha-lib 2.x's sortKeys (dist/esm/v2/helpers.js), the reference canonicalJson must agree with. */
function sortKeys(obj: unknown): unknown {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return obj;
  const o = obj as Record<string, unknown>;
  return Object.fromEntries(Object.keys(o).sort().flatMap((key) => {
    const value = o[key];
    return value === undefined ? [] : [[key, sortKeys(value)]];
  }));
}
const reference = (v: unknown) => JSON.stringify(sortKeys(v));

test('canonicalJson equals altcha-lib canonicalJSON on random JSON values', () => {
  fc.assert(fc.property(fc.oneof(fc.jsonValue(), fc.dictionary(fc.oneof(fc.nat().map(String), fc.string()), fc.jsonValue())), (v) => canonicalJson(v) === reference(v)), { numRuns: 2000 });
});

test('canonicalJson equals altcha-lib canonicalJSON on objects with undefined, nested arrays and __proto__ keys', () => {
  const parsed = JSON.parse('{"b":1,"__proto__":{"z":1,"a":[{"y":2,"x":1}]},"a":"\\"q\\"","10":1,"9":2,"-1":3,"01":4}') as unknown;
  const shapes: unknown[] = [
    parsed,
    { z: undefined, y: 1, x: { b: undefined, a: [undefined, 1] } },
    { first: undefined, second: 2 },
    { only: undefined },
    {},
    [],
    null,
    'text',
    12.5,
    { algorithm: 'SHA-256', nonce: 'ab', data: { apiKey: 'key_x', 'params.b': '2', 'params.a': '1' }, keySignature: undefined },
  ];
  for (const v of shapes) assert.equal(canonicalJson(v), reference(v));
  assert.equal(canonicalJson(parsed), '{"9":2,"10":1,"-1":3,"01":4,"__proto__":{"a":[{"y":2,"x":1}],"z":1},"a":"\\"q\\"","b":1}');
  assert.equal(canonicalJson({ first: undefined, second: 2 }), '{"second":2}');
});

test('canonicalJson equals altcha-lib canonicalJSON on values already in canonical order (the JSON.stringify shortcut)', () => {
  // JSON.parse of the reference gives objects whose keys are in canonical order, as a payload's
  // parameters come back; canonicalJson then takes JSON.stringify's way and must write the same.
  const sorted = fc.oneof(fc.jsonValue(), fc.dictionary(fc.oneof(fc.nat().map(String), fc.string()), fc.jsonValue()))
    .map((v) => JSON.parse(reference(v) ?? 'null') as unknown);
  fc.assert(fc.property(sorted, (v) => canonicalJson(v) === reference(v)), { numRuns: 2000 });
  // Objects JSON.stringify writes otherwise than canonicalJson never take the shortcut.
  class Point { constructor(readonly y: number, readonly x: number) {} }
  const shapes: unknown[] = [
    { a: new Date(0) },
    { a: new Point(2, 1) },
    { a: Object.assign(Object.create(null) as object, { c: 1, b: 2 }) },
    { a: [{ d: 1, c: 2 }], b: { e: 1, f: { h: 1, g: 2 } } },
    { 1: 'x', 0: 'y', b: 1, a: 2 },
    { '': 1, a: 2 },
  ];
  for (const v of shapes) assert.equal(canonicalJson(v), reference(v));
  assert.equal(canonicalJson({ a: new Date(0) }), '{"a":{}}');
  // (altcha-lib would call this toJSON; no JSON text holds one. What matters is that the shortcut
  // does not change what canonicalJson wrote before it.)
  assert.equal(canonicalJson({ a: { toJSON: () => 'x' } }), '{"a":{}}');
});

test('decodePayload refuses what is not bounded canonical base64 JSON', () => {
  const b64 = (s: string) => Buffer.from(s, 'latin1').toString('base64');
  assert.deepEqual(decodePayload(b64('{"a":[1,2]}')), { a: [1, 2] });
  assert.equal(decodePayload(''), undefined);
  assert.equal(decodePayload('abc'), undefined); // not a multiple of 4
  assert.equal(decodePayload('ab$d'), undefined);
  assert.equal(decodePayload(b64('{"a":1}'), 4), undefined); // longer than the limit
  assert.equal(decodePayload(b64('[[[[[[[1]]]]]]]')), undefined); // deeper than 6
  assert.equal(decodePayload(b64('{"a":')), undefined);
  // Canonical base64 only: what encoding the bytes again gives back.
  const canonical = b64('{"a":"??>"}');
  assert.equal(canonical, 'eyJhIjoiPz8+In0=');
  assert.deepEqual(decodePayload(canonical), { a: '??>' });
  assert.equal(decodePayload(canonical.replace('+', '-')), undefined); // base64url's alphabet
  // Texts that Buffer decodes to the very same bytes, but that no encoder writes: set bits after
  // the last byte, and whitespace for the padding.
  for (const lenient of [canonical.replace('0=', '1='), `${canonical.slice(0, -1)} `]) {
    assert.equal(Buffer.from(lenient, 'base64').toString('latin1'), '{"a":"??>"}');
    assert.equal(decodePayload(lenient), undefined, lenient);
  }
  assert.equal(decodePayload(`${canonical.slice(0, -4)}=${canonical.slice(-3)}`), undefined); // padding inside
  assert.equal(decodePayload(b64('{"a":1}').replace(/=+$/, '')), undefined); // padding left out
  assert.equal(decodePayload(`${canonical.slice(0, -4)}é${canonical.slice(-3)}`), undefined);
  assert.equal(decodePayload(`${canonical.slice(0, -4)}\u{1F600}${canonical.slice(-2)}`), undefined);
  // Nesting: six levels pass, seven do not, brackets inside strings do not count.
  assert.deepEqual(decodePayload(b64('[[[[[[1]]]]]]')), [[[[[[1]]]]]]);
  assert.deepEqual(decodePayload(b64('{"a":"[[[[[[[[[[{{{{"}')), { a: '[[[[[[[[[[{{{{' });
  assert.equal(decodePayload(b64('[[[[[[{"a":1}]]]]]]')), undefined);
});

test('pooledRandomBytes hands out fresh bytes of the asked length and refuses odd lengths', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const n = 1 + (i % 48);
    const b = pooledRandomBytes(n);
    assert.equal(b.length, n);
    if (n >= 12) {
      const hex = b.toString('hex');
      assert.equal(seen.has(hex), false, 'a repeated 12+ byte value');
      seen.add(hex);
    }
  }
  const a = pooledRandomBytes(32);
  const copy = Buffer.from(a);
  for (let i = 0; i < 300; i++) pooledRandomBytes(200); // several refills
  assert.deepEqual(a, copy, 'a refill changed bytes already handed out');
  for (const bad of [0, -1, 257, 1.5, Number.NaN]) assert.throws(() => pooledRandomBytes(bad), RangeError);
});
