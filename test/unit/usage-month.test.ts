// Usage months: YYYY-MM in the configured time zone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMonthClock, isMonth, monthFormatter } from '../../src/usage/month.js';

test('months are calendar months of the time zone', () => {
  const utc = monthFormatter('UTC');
  const berlin = monthFormatter('Europe/Berlin');
  const la = monthFormatter('America/Los_Angeles');
  const t = Date.UTC(2024, 0, 31, 23, 30);
  assert.equal(utc(t), '2024-01');
  assert.equal(berlin(t), '2024-02');
  assert.equal(la(Date.UTC(2024, 1, 1, 5)), '2024-01');
  assert.equal(utc(Date.parse('0009-06-01T00:00:00Z')), '0009-06');
  assert.throws(() => monthFormatter('Mars/Olympus'));
});

test('the month clock recomputes at most once a second and follows the clock', () => {
  let now = Date.UTC(2024, 11, 31, 23, 59, 59, 500);
  const clock = createMonthClock('UTC', () => now);
  assert.equal(clock(), '2024-12');
  now += 600;
  assert.equal(clock(), '2024-12', 'cached for one second');
  now += 500;
  assert.equal(clock(), '2025-01');
  now -= 86_400_000;
  assert.equal(clock(), '2024-12', 'a clock moved back is noticed');
});

test('isMonth accepts YYYY-MM only', () => {
  for (const ok of ['2024-01', '1999-12', '0001-09']) assert.ok(isMonth(ok), ok);
  for (const bad of ['2024-1', '2024-13', '2024-00', '202-01', '2024-01 ', '2024-01-01', '', 'abcd-ef']) assert.ok(!isMonth(bad), bad);
});
