// The risk score (src/abuse/score.ts): 0 for a clean client, rising with penalty and failures,
// GOOD < 1 ≤ NEUTRAL < 2 ≤ BAD at the documented points.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { score } from '../../src/abuse/score.js';
import { classify } from '../../src/pow/server-signature.js';

test('a clean client scores 0 (GOOD)', () => {
  assert.equal(score(0, 0), 0);
  assert.equal(classify(score(0, 0)), 'GOOD');
});

test('the documented thresholds and examples', () => {
  assert.deepEqual([score(1, 0), score(1, 1), score(2, 2), score(11, 0), score(6, 6)], [0.33, 0.81, 1.28, 1.73, 2.07]);
  assert.equal(score(4, 0), 1);
  assert.equal(score(0, 2), 1);
  assert.equal(score(16, 0), 2);
  assert.equal(score(0, 8), 2);
  assert.equal(classify(score(3, 0)), 'GOOD');
  assert.equal(classify(score(4, 0)), 'NEUTRAL');
  assert.equal(classify(score(15, 0)), 'NEUTRAL');
  assert.equal(classify(score(16, 0)), 'BAD');
  assert.ok(score(1e9, 1e9) < 3);
});

test('monotone in both arguments', () => {
  for (let p = 0; p < 40; p++) {
    for (let f = 0; f < 20; f++) {
      assert.ok(score(p + 1, f) >= score(p, f), `penalty ${p}`);
      assert.ok(score(p, f + 1) >= score(p, f), `failures ${f}`);
    }
  }
  assert.ok(score(1, 0) > score(0, 0));
  assert.ok(score(0, 1) > score(0, 0));
});

test('garbage in: negative, NaN and infinite values count as 0', () => {
  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
    assert.equal(score(bad, 0), 0);
    assert.equal(score(0, bad), 0);
  }
});
