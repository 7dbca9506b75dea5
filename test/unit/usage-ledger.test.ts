// The usage ledger (src/usage/usage-ledger.ts, ledger-cells.ts): regions held by one process each,
// counts that outlive the process that made them, and the flush protocol that writes each count
// exactly once whichever store of a flush the owner died after.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { UsageBatch } from '../../src/db/usage.js';
import { drainRegion } from '../../src/primary/usage-drain.js';
import { BAD, batchOf, emptyRows, GOOD, LedgerCells, NEUTRAL, REQUESTS } from '../../src/usage/ledger-cells.js';
import { createUsageBuffer, type UsageBuffer } from '../../src/usage/usage-buffer.js';
import { LEDGER_LAYOUT, openUsageLedger, type LedgerRegion } from '../../src/usage/usage-ledger.js';

const dir = mkdtempSync(join(tmpdir(), 'palisade-ledger-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const NOW = Date.UTC(2024, 4, 15);
const MONTH = '2024-05';
const A = { id: 'key_a', accountId: 'acc_1' };
const B = { id: 'key_b', accountId: 'acc_2' };

type Totals = Record<string, number>;

/** An in-memory database with writeUsageBatch's semantics: additive, each batch id applied once (false the second time). */
function fakeDb(from?: { totals: Totals; applied: Set<string> }) {
  const totals: Totals = { ...from?.totals };
  const applied = new Set(from?.applied);
  const add = (k: string, n: number) => { if (n !== 0) totals[k] = (totals[k] ?? 0) + n; };
  return {
    totals, applied,
    write: async (batch: UsageBatch) => {
      if (applied.has(batch.id)) return false;
      applied.add(batch.id);
      for (const c of batch.counters) {
        add(`${c.apiKeyId}/${c.month}/requests`, c.requests);
        add(`${c.apiKeyId}/${c.month}/good`, c.good);
        add(`${c.apiKeyId}/${c.month}/neutral`, c.neutral);
        add(`${c.apiKeyId}/${c.month}/bad`, c.bad);
      }
      for (const r of batch.referrers) add(`${r.apiKeyId}/${r.month}/${r.origin}`, r.requests);
      return true;
    },
  };
}

/** A region over plain memory that behaves as a file region (batch ids from a prefix, fixed size). */
function memoryRegion(cells: number, buffer = new ArrayBuffer((cells + 1) * LEDGER_LAYOUT.cellBytes)): LedgerRegion {
  return { index: 0, cells, buffer, byteOffset: 0, batchPrefix: 'test.0.', release() {} };
}

function countSome(buffer: UsageBuffer, expected: Totals, n: number): void {
  const add = (k: string) => { expected[k] = (expected[k] ?? 0) + 1; };
  for (let i = 0; i < n; i++) {
    const key = i % 3 === 0 ? B : A;
    const cls = (['GOOD', 'NEUTRAL', 'BAD', null] as const)[i % 4];
    const origin = i % 2 === 0 ? `https://o${i % 3}.example` : null;
    buffer.countUsage(key, cls, origin);
    add(`${key.id}/${MONTH}/requests`);
    if (cls !== null) add(`${key.id}/${MONTH}/${cls.toLowerCase()}`);
    if (origin !== null) add(`${key.id}/${MONTH}/${origin}`);
  }
}

test('a region belongs to one ledger at a time and is free again once its holder closes', () => {
  const path = join(dir, 'own.shm');
  const one = openUsageLedger(path);
  const two = openUsageLedger(path);
  try {
    const r0 = one.claim()!;
    assert.equal(r0.index, 0);
    assert.equal(two.tryClaim(0), null);
    assert.equal(one.tryClaim(0), null, 'held by this ledger already');
    assert.equal(two.claim()!.index, 1);
    r0.release();
    assert.equal(two.tryClaim(0)!.index, 0);
    assert.equal(one.tryClaim(0), null);
    two.close();
    assert.equal(one.tryClaim(0)!.index, 0, 'closing a ledger (its process dying) frees its regions');
    assert.equal(one.tryClaim(1)!.index, 1);
  } finally {
    one.close();
    two.close();
  }
});

test('counts of a process that stopped without writing them are written by the next owner of its region, or by drainRegion', async () => {
  const path = join(dir, 'adopt.shm');
  const expected: Totals = {};
  const dead = openUsageLedger(path);
  const lost = createUsageBuffer(async () => { throw new Error('never written'); }, { region: dead.claim()!, timeZone: 'UTC', now: () => NOW });
  countSome(lost, expected, 50);
  dead.close(); // what the kernel does for a killed process

  const next = openUsageLedger(path);
  try {
    const db = fakeDb();
    const region = next.claim()!;
    assert.equal(region.index, 0);
    const buffer = createUsageBuffer(db.write, { region, timeZone: 'UTC', now: () => NOW });
    assert.equal(buffer.pendingAccountRequests('acc_1', MONTH), expected[`key_a/${MONTH}/requests`]);
    countSome(buffer, expected, 7);
    await buffer.flush();
    assert.deepEqual(db.totals, expected);
    region.release();

    // The same through the primary's drain, with a batch left in flight.
    const again = next.claim()!;
    const third = createUsageBuffer(async () => new Promise(() => {}), { region: again, timeZone: 'UTC', now: () => NOW });
    countSome(third, expected, 11);
    void third.flush();
    countSome(third, expected, 4);
    again.release();
    const drained = next.tryClaim(0)!;
    assert.equal(await drainRegion(drained, db.write), 11 + 4);
    assert.deepEqual(db.totals, expected);
    assert.equal(await drainRegion(drained, db.write), 0, 'nothing is written twice');
  } finally {
    next.close();
  }
});

// A SIGKILL lands between two stores. Every store a flush makes into the region is recorded in
// the order it is made, and from the state after each prefix of them, the next owner of the region
// (a worker's usage buffer, or the primary's drainRegion) brings the database to exactly what was
// counted: never less (a count lost) nor more (a batch applied twice).
test('the owner dies after any store of a flush: the next owner writes every count exactly once', async () => {
  const CELLS = 8;
  const region = memoryRegion(CELLS);
  const cells = new LedgerCells(region);
  cells.adopt();
  const index = new Map<string, number>();
  const counted: Totals = {};
  const count = (n: number) => {
    for (let i = 0; i < n; i++) {
      const key = i % 3 === 0 ? B : A;
      const cls = ([GOOD, NEUTRAL, BAD, -1] as const)[i % 4]!;
      const bump = (kind: 'key' | 'referrer', origin: string, k: number, name: string) => {
        const id = `${kind}/${key.id}/${origin}`;
        let cell = index.get(id);
        if (cell === undefined) {
          cell = cells.allocate({ kind, apiKeyId: key.id, accountId: key.accountId, month: MONTH, origin });
          index.set(id, cell);
        }
        cells.f64[cells.counted(cell) + k]!++;
        counted[`${key.id}/${MONTH}/${name}`] = (counted[`${key.id}/${MONTH}/${name}`] ?? 0) + 1;
      };
      bump('key', '', REQUESTS, 'requests');
      if (cls >= 0) bump('key', '', cls, ['good', 'neutral', 'bad'][cls - 1]!);
      if (i % 2 === 0) bump('referrer', `https://o${i % 3}.example`, REQUESTS, `https://o${i % 3}.example`);
    }
  };
  const image = () => new Float64Array(region.buffer.slice(0));
  const real = cells.f64;
  const stores: [number, number][] = [];
  const recording = new Proxy(real, {
    set(target, key, value: number) {
      if (typeof key === 'string' && /^\d+$/.test(key)) stores.push([Number(key), value]);
      return Reflect.set(target, key, value);
    },
    get(target, key) {
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });

  count(9);
  const countedBefore = { ...counted };
  const start = image();
  cells.f64 = recording;
  const rows = emptyRows();
  const id = cells.prepare(rows)!;
  const prepareStores = stores.splice(0);
  cells.f64 = real;
  const db = fakeDb();
  const empty = { totals: {}, applied: new Set<string>() };
  await db.write(batchOf(id, rows));
  const written = { totals: { ...db.totals }, applied: new Set(db.applied) };
  assert.deepEqual(written.totals, countedBefore);
  count(5); // while the batch was on its way: they belong to the next one
  const countedAfter = { ...counted };
  const beforeFinish = image();
  cells.f64 = recording;
  cells.finish(null, () => {});
  const finishStores = stores.splice(0);
  cells.f64 = real;

  const cases = [
    // Preparing: the batch is not written before the last of these stores, then it may or may not be.
    ...prefixes(start, prepareStores).map((state, k) => ({ name: `prepare, ${k} of ${prepareStores.length} stores`, state, db: empty, expected: countedBefore })),
    { name: 'written, not acknowledged', state: prefixes(start, prepareStores).at(-1)!, db: written, expected: countedBefore },
    // Finishing: the database has the batch.
    ...prefixes(beforeFinish, finishStores).map((state, k) => ({ name: `finish, ${k} of ${finishStores.length} stores`, state, db: written, expected: countedAfter })),
  ];
  assert.ok(prepareStores.length >= 20 && finishStores.length >= 20, `${prepareStores.length} + ${finishStores.length} stores`);
  for (const c of cases) {
    const byBuffer = fakeDb(c.db);
    await createUsageBuffer(byBuffer.write, { region: memoryRegion(CELLS, c.state.slice().buffer), timeZone: 'UTC', now: () => NOW }).flush();
    assert.deepEqual(byBuffer.totals, c.expected, `a worker adopting the region after a death in ${c.name}`);
    const byDrain = fakeDb(c.db);
    await drainRegion(memoryRegion(CELLS, c.state.slice().buffer), byDrain.write);
    assert.deepEqual(byDrain.totals, c.expected, `the primary draining the region after a death in ${c.name}`);
  }
});

test('counts that find no room in the region (full, or an identity too long for a cell) are kept in the heap and written all the same', async () => {
  const db = fakeDb();
  const buffer = createUsageBuffer(db.write, { region: memoryRegion(2), timeZone: 'UTC', now: () => NOW });
  const expected: Totals = {};
  countSome(buffer, expected, 12); // 2 keys + 3 origins: 5 cells for 2
  const long = `https://${'x'.repeat(500)}.example`;
  buffer.countUsage(A, null, long);
  expected[`key_a/${MONTH}/requests`]!++;
  expected[`key_a/${MONTH}/${long}`] = 1;
  assert.ok(buffer.stats().outsideLedger > 0);
  await buffer.flush();
  assert.deepEqual(db.totals, expected);
  assert.equal(buffer.stats().pendingCounters, 0);
});

test('a file that is not a usage ledger of this layout is refused, not overwritten', () => {
  const path = join(dir, 'other.shm');
  writeFileSync(path, 'not a ledger');
  assert.throws(() => openUsageLedger(path), /is not a Palisade usage ledger/);
});

/** The state after each prefix of `stores` (0 to all) applied to `from`. */
function prefixes(from: Float64Array, stores: readonly [number, number][]): Float64Array[] {
  const out = [from.slice()];
  const state = from.slice();
  for (const [w, v] of stores) {
    state[w] = v;
    out.push(state.slice());
  }
  return out;
}
