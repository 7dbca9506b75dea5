// Penalty books (src/abuse/penalty.ts) and header combinations per IP (src/abuse/header-entropy.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDeviceKeys } from '../../src/abuse/device-key.js';
import { createHeaderEntropy } from '../../src/abuse/header-entropy.js';
import { createAbuseMetrics } from '../../src/abuse/metrics.js';
import { createPenalties } from '../../src/abuse/penalty.js';
import { captureLogger, MemoryStore } from '../helpers/memory-store.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const SALT = 'a-hashing-salt-of-sufficient-length';

function setup(store = new MemoryStore({ now: () => clock.now }), clock = { now: T0 }, ttlMs = 30 * 60_000) {
  const { logger, records } = captureLogger();
  const metrics = createAbuseMetrics();
  const penalties = createPenalties({ store, logger, metrics }, { ttlMs, now: () => clock.now });
  return { store, clock, records, metrics, logger, penalties };
}

test('penalize adds up per IP (IPv6 per /64) and resets PENALTY_TTL after the last addition', async () => {
  const clock = { now: T0 };
  const { penalties, store } = setup(new MemoryStore({ now: () => clock.now }), clock, 60_000);
  assert.equal(await penalties.score('192.0.2.1'), 0);
  assert.equal(await penalties.penalize('192.0.2.1', 2, 'manual'), 2);
  assert.equal(await penalties.penalize('192.0.2.1', 3, 'probe'), 5);
  assert.equal(await penalties.score('192.0.2.2'), 0);
  assert.equal(await penalties.penalize('2001:db8:0:1::1', 1, 'manual'), 1);
  assert.equal(await penalties.score('2001:db8:0:1::ffff'), 1);
  clock.now = T0 + 59_999;
  assert.equal(await penalties.score('192.0.2.1'), 5);
  clock.now = T0 + 60_000;
  assert.equal(await penalties.score('192.0.2.1'), 0, 'expired PENALTY_TTL after the last addition');
  const before = store.calls.addPenalty;
  assert.equal(await penalties.penalize('192.0.2.1', 0, 'manual'), 0, 'zero points read, never write');
  assert.equal(store.calls.addPenalty, before);
  await assert.rejects(penalties.penalize('192.0.2.1', -1, 'manual'), RangeError);
  await assert.rejects(penalties.penalize('192.0.2.1', 1.5, 'manual'), RangeError);
});

test('failed attempts are counted within PENALTY_TTL', async () => {
  const clock = { now: T0 };
  const { penalties } = setup(new MemoryStore({ now: () => clock.now }), clock, 60_000);
  assert.equal(await penalties.recordFailure('192.0.2.1'), 1);
  assert.equal(await penalties.recordFailure('192.0.2.1'), 2);
  assert.equal(await penalties.failedAttempts('192.0.2.1'), 2);
  assert.equal(await penalties.score('192.0.2.1'), 0, 'failures are not points');
  clock.now += 60_000;
  assert.equal(await penalties.failedAttempts('192.0.2.1'), 0);
});

test('store failures: reads are 0, writes are dropped, nothing rejects', async () => {
  const { penalties, store } = setup();
  store.failWith = 'STORE_UNAVAILABLE';
  assert.equal(await penalties.penalize('192.0.2.1', 4, 'manual'), 0);
  assert.equal(await penalties.score('192.0.2.1'), 0);
  assert.equal(await penalties.recordFailure('192.0.2.1'), 0);
  assert.equal(await penalties.failedAttempts('192.0.2.1'), 0);
});

test('a bad PENALTY_TTL is refused', () => {
  for (const ttlMs of [0, -1, 1.5, 2 ** 40]) assert.throws(() => setup(undefined, undefined, ttlMs), RangeError, String(ttlMs));
});

test('header entropy: combinations beyond HEADER_ENTROPY_MAX_ENTRIES earn one point each', async () => {
  const { penalties, store, logger, metrics, clock } = setup();
  const now = () => clock.now;
  const entropy = createHeaderEntropy({ store, penalties, logger, metrics, deviceKeys: createDeviceKeys(SALT, { now }) }, { maxEntries: 3, now });
  const ua = (i: number) => ({ ip: '192.0.2.1', headers: { 'user-agent': `bot/${i}` } });
  for (let i = 0; i < 3; i++) assert.equal(await entropy.observe(ua(i)), 0);
  assert.equal(await penalties.score('192.0.2.1'), 0);
  assert.equal(await entropy.observe(ua(3)), 1);
  assert.equal(await entropy.observe(ua(4)), 1);
  assert.equal(await penalties.score('192.0.2.1'), 2);
  // Seen combinations cost nothing more, not even a store call (per-worker memory).
  const calls = store.calls.seenOnce;
  for (let i = 0; i < 5; i++) assert.equal(await entropy.observe(ua(i)), 0);
  assert.equal(store.calls.seenOnce, calls);
  // Another IP has its own count.
  for (let i = 0; i < 3; i++) assert.equal(await entropy.observe({ ip: '192.0.2.2', headers: { 'user-agent': `bot/${i}` } }), 0);
});

test('header entropy: exact across workers (two instances, one store), memory per worker bounded', async () => {
  const { penalties, store, logger, metrics, clock } = setup();
  const now = () => clock.now;
  const make = () => createHeaderEntropy({ store, penalties, logger, metrics, deviceKeys: createDeviceKeys(SALT, { now }) }, { maxEntries: 2, lruSize: 2, now });
  const w1 = make();
  const w2 = make();
  const r = (i: number) => ({ ip: '198.51.100.7', headers: { 'accept-language': `l${i}` } });
  assert.equal(await w1.observe(r(0)), 0);
  assert.equal(await w2.observe(r(0)), 0, 'the other worker sees the same combination: not new');
  assert.equal(await w2.observe(r(1)), 0);
  assert.equal(await w1.observe(r(2)), 1, 'the third distinct combination across both workers');
  for (let i = 3; i < 10; i++) await w1.observe(r(i));
  assert.equal(w1.cached, 2);
  assert.equal(await penalties.score('198.51.100.7'), 8);
  // After PENALTY_TTL the memory and the count are gone.
  clock.now += 30 * 60_000;
  assert.equal(await w1.observe(r(50)), 0);
  assert.equal(await w1.observe(r(51)), 0);
});

test('header entropy: store failures are passed over', async () => {
  const { penalties, store, logger, metrics } = setup();
  const entropy = createHeaderEntropy({ store, penalties, logger, metrics, deviceKeys: createDeviceKeys(SALT) }, { maxEntries: 1 });
  store.failWith = 'STORE_FULL';
  assert.equal(await entropy.observe({ ip: '192.0.2.1', headers: {} }), 0);
  assert.throws(() => createHeaderEntropy({ store, penalties, logger, metrics, deviceKeys: createDeviceKeys(SALT) }, { maxEntries: 0 }), RangeError);
});
