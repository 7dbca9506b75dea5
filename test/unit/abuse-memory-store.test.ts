// The in-memory StateStore the abuse tests use (test/helpers/memory-store.ts) passes the same
// conformance suite as the shared-memory and Redis stores, so what the abuse tests prove with it
// holds for the real stores.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRateRule } from '../../src/parse.js';
import { MemoryStore } from '../helpers/memory-store.js';
import { storeConformance } from '../helpers/store-conformance.js';

storeConformance('MemoryStore (test helper)', () => Promise.resolve(new MemoryStore()));

test('MemoryStore: a stepped clock moves windows, holds and penalties', async () => {
  let now = 1_700_000_000_000;
  const store = new MemoryStore({ now: () => now });
  const rule = parseRateRule('1/1m(block=5m)');
  assert.equal((await store.hit('k', rule)).allowed, true);
  const held = await store.hit('k', rule);
  assert.deepEqual([held.allowed, held.blockedUntil], [false, now + 300_000]);
  now += 299_999;
  assert.equal((await store.hit('k', rule)).allowed, false);
  now += 1;
  assert.equal((await store.hit('k', rule)).allowed, true);
  assert.equal(await store.addPenalty('p', 3, 1000), 3);
  now += 999;
  assert.equal(await store.penalty('p'), 3);
  now += 1;
  assert.equal(await store.penalty('p'), 0);
});

test('MemoryStore: failWith makes every call reject with that code and counts the call', async () => {
  const store = new MemoryStore();
  store.failWith = 'STORE_UNAVAILABLE';
  await assert.rejects(store.hit('k', parseRateRule('1/1m')), { code: 'STORE_UNAVAILABLE' });
  await assert.rejects(store.penalty('k'), { code: 'STORE_UNAVAILABLE' });
  assert.equal(await store.ping(), false);
  assert.deepEqual(store.calls, { claimOnce: 0, seenOnce: 0, hit: 1, peek: 0, addPenalty: 0, penalty: 1, countUpTo: 0 });
});
