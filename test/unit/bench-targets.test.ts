// The bench's target decisions (bench/lib/scenario-runner.ts): met on the unrounded ratio, and a
// miss that two places would round onto the target shown with four places.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { atLeast, shown } from '../../bench/lib/scenario-runner.js';

test('bench targets: met on the unrounded ratio; a rounded-up miss is shown with four places', () => {
  assert.equal(atLeast(9540, 31814, 0.3), false, '0.29987 is not ≥ 0.3');
  assert.equal(atLeast(9546, 31814, 0.3), true);
  assert.equal(atLeast(null, 31814, 0.3), false);
  assert.equal(atLeast(9540, 0, 0.3), false);
  assert.equal(shown(0.3, 9540, 31814, 0.3, false), 0.2998);
  assert.equal(shown(0.3, 9546, 31814, 0.3, true), 0.3, 'a met target keeps its rounded figure');
  assert.equal(shown(0.29, 9200, 31814, 0.3, false), 0.29, 'a plain miss keeps its rounded figure');
});
