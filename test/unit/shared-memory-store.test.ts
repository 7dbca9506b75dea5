import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseRateRule } from '../../src/parse.js';
import { createStateStore } from '../../src/store/index.js';
import { ShmTable } from '../../src/native/index.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';
import { storeConformance } from '../helpers/store-conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'palisade-shm-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = () => join(dir, `t${files++}`, 'state.shm');
/** One claim moment for the file (claims take an epoch-ms moment, the same for every attempt at an id). */
const LATER = Date.now() + 30 * 60_000;

storeConformance('SharedMemoryStore', async () => openSharedMemoryStore(fresh(), { capacity: 1 << 16 }));

test('the file: header, 16 bytes per slot, mode 0600, a random seed per file', () => {
  const a = fresh();
  const b = fresh();
  const sa = openSharedMemoryStore(a, { capacity: 1024 });
  const sb = openSharedMemoryStore(b, { capacity: 1024 });
  assert.deepEqual(sa.stats(), { full: 0, busy: 0, capacity: 1024, fileBytes: 64 + 1024 * 16 });
  assert.equal(statSync(a).size, 64 + 1024 * 16);
  assert.equal(statSync(a).mode & 0o777, 0o600);
  const ha = readFileSync(a).subarray(0, 64);
  const hb = readFileSync(b).subarray(0, 64);
  assert.equal(ha.subarray(0, 8).toString('latin1'), 'PALSHM\r\n');
  assert.equal(ha.readUInt32LE(8), 2, 'version');
  assert.equal(ha.readUInt32LE(12), 16, 'slot bytes');
  assert.equal(ha.readBigUInt64LE(16), 1024n, 'capacity');
  const epoch = Number(ha.readBigUInt64LE(24));
  assert.ok(Math.abs(epoch - Date.now()) < 60_000, 'epoch is the creation time');
  const seedA = ha.subarray(32, 48);
  const seedB = hb.subarray(32, 48);
  assert.notDeepEqual(seedA, Buffer.alloc(16));
  assert.notDeepEqual(seedA, seedB);
  void sa.close();
  void sb.close();
});

test('a full soft table evicts the least recently used entry instead of refusing; claims never compete with it', async () => {
  const store = openSharedMemoryStore(fresh(), { capacity: 64 });
  const rule = parseRateRule('5/1h');
  const t0 = Date.now();
  store.setClock(t0);
  for (let i = 0; i < 64; i++) assert.equal(store.hitSync(`old${i}`, rule).count, 1);
  assert.deepEqual(store.occupancy(), { live: 64, expired: 0, empty: 0 });
  // Stamps count in 64 ms units: entries used a second later are younger than the 64 above.
  store.setClock(t0 + 1000);
  assert.equal(store.hitSync('old7', rule).count, 2, 'a used entry is renewed');
  assert.equal(store.penaltySync('nothing'), 0);
  for (let i = 0; i < 10; i++) assert.equal(store.hitSync(`new${i}`, rule).count, 1, 'no STORE_FULL');
  assert.equal(await store.addPenalty('p', 3, 60_000), 3);
  assert.equal(store.seenOnceSync('seen', 60_000), true);
  assert.deepEqual(store.evictions(), { seen: 0, window: 12, penalty: 0, counter: 0 });
  assert.equal(store.hitSync('old7', rule).count, 3, 'the recently used entry was not evicted');
  assert.equal(store.hitSync('new3', rule).count, 2, 'nor the newest');
  assert.equal(store.stats().full, 0);
  // Claims live apart: a full soft table takes nothing from them.
  store.setClock(0);
  for (let i = 0; i < 1000; i++) assert.equal(store.claimOnceSync(`claim${i}`, LATER), true);
  for (let i = 0; i < 1000; i++) assert.equal(store.claimOnceSync(`claim${i}`, LATER), false);
  assert.equal(store.claimMemory().claims, 1000);
  await store.close();
});

test('counters give way last: a flood of other keys never evicts one; only counters evict counters, read as absent then', () => {
  // 64 slots: one probe window, so every key competes with every other.
  const store = openSharedMemoryStore(fresh(), { capacity: 64 });
  const rule = parseRateRule('5/1h');
  const until = Date.now() + 3_600_000;
  const t0 = Date.now();
  store.setClock(t0);
  assert.deepEqual(store.countUpToSync('plan|a', 100, 0, until), { allowed: true, count: 1 });
  // Long unused, then 10,000 new keys of every soft kind (rotating addresses): the counter stays.
  for (let i = 0; i < 10_000; i++) {
    store.setClock(t0 + 1000 + i);
    store.hitSync(`ip${i}`, rule);
    if (i % 10 === 0) store.addPenaltySync(`pen${i}`, 1, 60_000);
    if (i % 10 === 5) store.seenOnceSync(`seen${i}`, 60_000);
  }
  const e = store.evictions();
  assert.ok(e.window + e.penalty + e.seen > 9_000, JSON.stringify(e));
  assert.equal(e.counter, 0);
  assert.deepEqual(store.countUpToSync('plan|a', 100, null, until), { allowed: true, count: 2 });
  // Counters fill the window: the least recently used counter goes, and reads as absent (to be seeded again).
  store.setClock(t0 + 20_000);
  for (let i = 0; i < 64; i++) {
    store.setClock(t0 + 20_000 + i * 100);
    assert.deepEqual(store.countUpToSync(`plan|n${i}`, 100, 0, until), { allowed: true, count: 1 }, `n${i}`);
  }
  assert.equal(store.evictions().counter, 1);
  assert.equal(store.countUpToSync('plan|a', 100, null, until), null);
  assert.deepEqual(store.countUpToSync('plan|n63', 100, null, until), { allowed: true, count: 2 });
  assert.equal(store.stats().full, 0);
  void store.close();
});

test('occupancy of a range of slots wraps at the end; sampleLoad walks the table window by window', () => {
  const store = openSharedMemoryStore(fresh(), { capacity: 4096 });
  for (let i = 0; i < 1000; i++) assert.equal(store.seenOnceSync(`o${i}`, 60_000), true);
  const table = new ShmTable(join(dir, `t${files++}.shm`), 256);
  try {
    assert.deepEqual(table.occupancy(), { live: 0, expired: 0, empty: 256 });
    for (let i = 0; i < 128; i++) assert.equal(table.claim(`w${i}`, 60_000), 1);
    const sum = (...r: { live: number; expired: number; empty: number }[]) =>
      r.reduce((a, b) => ({ live: a.live + b.live, expired: a.expired + b.expired, empty: a.empty + b.empty }));
    assert.deepEqual(table.occupancy(), { live: 128, expired: 0, empty: 128 });
    assert.deepEqual(sum(table.occupancy(0, 100), table.occupancy(100, 156)), { live: 128, expired: 0, empty: 128 });
    // Six slots before the end and four after: the same as the two walks apart.
    assert.deepEqual(table.occupancy(250, 10), sum(table.occupancy(250, 6), table.occupancy(0, 4)));
    assert.deepEqual(table.occupancy(17, 256), { live: 128, expired: 0, empty: 128 }, 'the whole table from any slot');
    assert.throws(() => table.occupancy(256, 1), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
    assert.throws(() => table.occupancy(-1, 1), { name: 'RangeError' });
    assert.throws(() => table.occupancy(0, 0), { name: 'RangeError' });
    assert.throws(() => table.occupancy(0, 257), { name: 'RangeError' });
    assert.throws(() => table.occupancy(0.5, 1), { name: 'RangeError' });
    assert.throws(() => table.occupancy('1' as unknown as number, 1), { name: 'TypeError' });
  } finally {
    table.close();
  }
  // Four windows of 1,024 slots cover the 4,096 once, wherever the first starts: their live slots add
  // up to the 1,000 entries, and each window agrees with a walk of the same slots.
  const loads = [0, 1, 2, 3].map(() => store.sampleLoad(1024));
  assert.equal(Math.round(loads.reduce((a, b) => a + b, 0) * 1024), 1000);
  assert.equal(store.sampleLoad(8192), 1000 / 4096, 'a window larger than the table counts it whole');
  assert.equal(store.capacity, 4096);
  void store.close();
  assert.equal(store.sampleLoad(8192), 1000 / 4096, 'after close: the last sample, not an error (a scrape during shutdown)');
});

test('claims survive a restart: reopening the file keeps them', async () => {
  const path = fresh();
  const first = openSharedMemoryStore(path, { capacity: 4096 });
  for (let i = 0; i < 1000; i++) assert.equal(first.claimOnceSync(`r${i}`, LATER), true);
  first.hitSync('ip:9', parseRateRule('10/1d'));
  first.addPenaltySync('pk', 9, 60_000);
  await first.close();
  const second = openSharedMemoryStore(path, { capacity: 4096 });
  for (let i = 0; i < 1000; i++) assert.equal(second.claimOnceSync(`r${i}`, LATER), false, `r${i}`);
  assert.equal(second.claimOnceSync('r1000', LATER), true);
  assert.equal(second.hitSync('ip:9', parseRateRule('10/1d')).count, 2);
  assert.equal(second.penaltySync('pk'), 9);
  await second.close();
});

test('two mappings of one file in one process see each other', () => {
  const path = fresh();
  const a = openSharedMemoryStore(path, { capacity: 1024 });
  const b = openSharedMemoryStore(path, { capacity: 1024 });
  assert.equal(a.claimOnceSync('shared', LATER), true);
  assert.equal(b.claimOnceSync('shared', LATER), false);
  assert.equal(b.hitSync('k', parseRateRule('3/1d')).count, 1);
  assert.equal(a.hitSync('k', parseRateRule('3/1d')).count, 2);
  void a.close();
  void b.close();
});

test('a file of another capacity, format or size is refused with what to do', () => {
  const path = fresh();
  void openSharedMemoryStore(path, { capacity: 1024 }).close();
  assert.throws(() => openSharedMemoryStore(path, { capacity: 2048 }), /holds 1024 slots but 2048 are configured; configure 1024, or stop every process and remove the file/);

  const versioned = fresh();
  void openSharedMemoryStore(versioned, { capacity: 1024 }).close();
  patch(versioned, 8, Buffer.from([1, 0, 0, 0]));
  assert.throws(() => openSharedMemoryStore(versioned, { capacity: 1024 }), /format version 1 and this build reads version 2/);

  const cut = fresh();
  void openSharedMemoryStore(cut, { capacity: 1024 }).close();
  writeFileSync(cut, readFileSync(cut).subarray(0, 64 + 100 * 16));
  assert.throws(() => openSharedMemoryStore(cut, { capacity: 1024 }), /is 1664 bytes, expected 16448; it is damaged/);

  const foreign = fresh();
  openSharedMemoryStore(foreign, { capacity: 1024 }).close();
  writeFileSync(foreign, 'not a state file at all, just text. '.repeat(1000));
  assert.throws(() => openSharedMemoryStore(foreign, { capacity: 1024 }), /is not a Palisade state file/);
  writeFileSync(foreign, '');
  assert.throws(() => openSharedMemoryStore(foreign, { capacity: 1024 }), /is not a Palisade state file/);
});

test('bad capacities and paths are refused', () => {
  for (const capacity of [0, 63, 64.5, 2 ** 32 + 1, Number.NaN]) {
    assert.throws(() => openSharedMemoryStore(fresh(), { capacity }), { code: 'ERR_OUT_OF_RANGE' }, String(capacity));
  }
  assert.throws(() => openSharedMemoryStore(join(dir, 'nul\0byte')), { code: 'ERR_INVALID_ARG_TYPE' });
  const blocker = join(dir, 'a-file');
  writeFileSync(blocker, 'x');
  assert.throws(() => openSharedMemoryStore(join(blocker, 'state.shm')), /ENOTDIR|EEXIST/);
});

test('createStateStore without a Redis URL opens the shared-memory store', async () => {
  const store = await createStateStore({ shmPath: fresh(), shmCapacity: 256 });
  assert.equal(store.kind, 'shared-memory');
  assert.equal(await store.claimOnce('factory', LATER), true);
  assert.equal(await store.claimOnce('factory', LATER), false);
  await store.close();
});

test('sync and async methods are the same operations', async () => {
  const store = openSharedMemoryStore(fresh(), { capacity: 1024 });
  const rule = parseRateRule('2/1d');
  assert.equal(store.claimOnceSync('s', LATER), true);
  assert.equal(await store.claimOnce('s', LATER), false);
  assert.equal(store.seenOnceSync('s', 60_000), true);
  assert.equal(await store.seenOnce('s', 60_000), false);
  assert.equal(store.hitSync('h', rule).count, 1);
  assert.equal((await store.hit('h', rule)).count, 2);
  assert.equal(store.peekSync('h', rule).count, 2);
  assert.equal(store.addPenaltySync('p', 2, 60_000), 2);
  assert.equal(await store.addPenalty('p', 2, 60_000), 4);
  assert.equal(store.penaltySync('p'), 4);
  await store.close();
});

test('after close: ping is false and operations throw', async () => {
  const store = openSharedMemoryStore(fresh(), { capacity: 1024 });
  await store.close();
  await store.close(); // twice is fine
  assert.equal(await store.ping(), false);
  assert.throws(() => store.claimOnceSync('x', LATER), /closed/);
  await assert.rejects(store.claimOnce('x', LATER), /closed/);
  await assert.rejects(store.seenOnce('x', 1000), /closed/);
  await assert.rejects(store.hit('x', parseRateRule('1/1m')), /closed/);
  await assert.rejects(store.penalty('x'), /closed/);
});

function patch(path: string, offset: number, bytes: Buffer): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
}
