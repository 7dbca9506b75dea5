// The plan limit (src/usage/plan-limit.ts) over the test store and the real shared-memory store:
// seeding from the usage count, exact counting, re-seeding after a lost counter, and the fallback
// when the store or the database fails.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { PalisadeError } from '../../src/errors.js';
import type { AccountRequestCounter } from '../../src/keys/authorize.js';
import type { ApiKey } from '../../src/keys/types.js';
import { STORE_LIMITS, type StateStore } from '../../src/store/state-store.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';
import { createPlanLimit, type PlanLimitDeps } from '../../src/usage/plan-limit.js';
import { MemoryStore } from '../helpers/memory-store.js';

const dir = mkdtempSync(join(tmpdir(), 'palisade-plan-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const keyOf = (accountId: string, requestLimit: number | null): ApiKey => Object.freeze({
  id: `key_${accountId.padEnd(24, '0').slice(0, 24)}`, accountId, name: '', hostnames: [], planId: 'p', challengePolicy: null,
  rateLimit: null, enabled: true, secret: `sec_${'a'.repeat(32)}`, requestLimit,
});

interface Harness {
  charge: (key: ApiKey) => void | Promise<void>;
  durable: Map<string, number>;
  pending: Map<string, number>;
  reads: string[];
  errors: unknown[];
  month: { value: string };
  approximateUsed: { value: number };
}

function harness(store: StateStore, overrides: Partial<PlanLimitDeps> = {}): Harness {
  const durable = new Map<string, number>();
  const pending = new Map<string, number>();
  const reads: string[] = [];
  const errors: unknown[] = [];
  const month = { value: '2024-05' };
  const approximateUsed = { value: 0 };
  const approximate: AccountRequestCounter = { requests: () => approximateUsed.value, currentMonth: () => month.value };
  const charge = createPlanLimit({
    store,
    durable: async (accountId, m) => {
      reads.push(`${accountId}/${m}`);
      await new Promise((r) => setTimeout(r, 5));
      return durable.get(`${accountId}/${m}`) ?? 0;
    },
    buffer: { pendingAccountRequests: (a, m) => pending.get(`${a}/${m}`) ?? 0, currentMonth: () => month.value },
    approximate,
    onError: (err) => { errors.push(err); },
    ...overrides,
  });
  return { charge, durable, pending, reads, errors, month, approximateUsed };
}

/** How many of `n` charges at once pass; every refusal must be PLAN_LIMIT_EXCEEDED. */
async function passed(h: Harness, key: ApiKey, n: number): Promise<number> {
  const results = await Promise.allSettled(Array.from({ length: n }, () => Promise.resolve().then(() => h.charge(key))));
  for (const r of results) {
    if (r.status === 'rejected') assert.equal((r.reason as PalisadeError).code, 'PLAN_LIMIT_EXCEEDED');
  }
  return results.filter((r) => r.status === 'fulfilled').length;
}

for (const [name, open] of [
  ['test store', () => new MemoryStore()],
  ['shared-memory store', () => openSharedMemoryStore(join(dir, `${Math.random()}.shm`), { capacity: 4096 })],
] as [string, () => StateStore][]) {
  test(`${name}: the first use seeds from the database plus this worker's unwritten requests, read once; then exact`, async () => {
    const store = open();
    const h = harness(store);
    h.durable.set('acc_a/2024-05', 60);
    h.pending.set('acc_a/2024-05', 15);
    const key = keyOf('acc_a', 100);
    assert.equal(await passed(h, key, 60), 25);
    assert.deepEqual(h.reads, ['acc_a/2024-05']);
    await assert.rejects(async () => h.charge(key), { code: 'PLAN_LIMIT_EXCEEDED', statusCode: 429 });
    // Another account, the same plan: its own counter.
    assert.equal(await passed(h, keyOf('acc_b', 100), 120), 100);
    // A new month starts from that month's usage.
    h.month.value = '2024-06';
    assert.equal(await passed(h, key, 120), 100);
    assert.deepEqual(h.reads, ['acc_a/2024-05', 'acc_b/2024-05', 'acc_a/2024-06']);
    assert.deepEqual(h.errors, []);
    await store.close();
  });

  test(`${name}: unlimited keys cost nothing; a counter that exists answers without a Promise on the shared-memory store`, async () => {
    const store = open();
    const h = harness(store);
    assert.equal(h.charge(keyOf('acc_u', null)), undefined);
    const key = keyOf('acc_s', 3);
    await h.charge(key);
    if (store.sync !== undefined) assert.equal(h.charge(key), undefined);
    else await h.charge(key);
    await h.charge(key);
    if (store.sync !== undefined) assert.throws(() => h.charge(key), { code: 'PLAN_LIMIT_EXCEEDED' });
    else await assert.rejects(async () => h.charge(key), { code: 'PLAN_LIMIT_EXCEEDED' });
    await store.close();
  });
}

test('a lost counter is seeded again from the usage count: what was written and what this worker holds', async () => {
  const store = new MemoryStore();
  const h = harness(store);
  const key = keyOf('acc_e', 50);
  assert.equal(await passed(h, key, 30), 30);
  // 25 written, 5 still in this worker's buffer when the counter is lost.
  h.durable.set('acc_e/2024-05', 25);
  h.pending.set('acc_e/2024-05', 5);
  store.counters.clear();
  assert.equal(await passed(h, key, 40), 20);
  assert.deepEqual(h.reads, ['acc_e/2024-05', 'acc_e/2024-05']);
});

test('the store failing: the usage count decides (refused when it says used up), and the failure is reported', async () => {
  const store = new MemoryStore();
  const h = harness(store);
  const key = keyOf('acc_f', 10);
  store.failWith = 'STORE_UNAVAILABLE';
  h.approximateUsed.value = 9;
  await h.charge(key);
  h.approximateUsed.value = 10;
  await assert.rejects(async () => h.charge(key), { code: 'PLAN_LIMIT_EXCEEDED' });
  assert.deepEqual((h.errors as PalisadeError[]).map((e) => e.code), ['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
  // Anything but a store failure is a bug and propagates.
  const broken = harness({ ...store, sync: undefined, countUpTo: () => Promise.reject(new TypeError('bug')) } as unknown as StateStore);
  await assert.rejects(async () => broken.charge(key), TypeError);
});

test('the database failing while a counter must be seeded: the usage count decides, nothing is seeded', async () => {
  const store = new MemoryStore();
  const h = harness(store, { durable: () => Promise.reject(new Error('down')) });
  const key = keyOf('acc_d', 10);
  h.approximateUsed.value = 3;
  assert.equal(await passed(h, key, 5), 5);
  assert.equal(store.counters.size, 0);
  h.approximateUsed.value = 10;
  assert.equal(await passed(h, key, 5), 0);
  assert.equal(h.errors.length, 10);
});

test('a limit beyond the store counters: the usage count decides, the store is not asked', async () => {
  const store = new MemoryStore();
  const h = harness(store);
  const key = keyOf('acc_big', STORE_LIMITS.maxCounter + 1);
  h.approximateUsed.value = STORE_LIMITS.maxCounter;
  await h.charge(key);
  h.approximateUsed.value = STORE_LIMITS.maxCounter + 1;
  await assert.rejects(async () => h.charge(key), { code: 'PLAN_LIMIT_EXCEEDED' });
  assert.equal(store.calls.countUpTo, 0);
  // At the counters' largest limit the store counts.
  await h.charge(keyOf('acc_max', STORE_LIMITS.maxCounter));
  assert.equal(store.calls.countUpTo, 2);
});
