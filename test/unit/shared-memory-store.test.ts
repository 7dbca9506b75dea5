import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { parseRateRule } from '../../src/parse.js';
import { createStateStore } from '../../src/store/index.js';
import { ShmTable } from '../../src/native.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';
import { storeConformance } from '../helpers/store-conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'palisade-shm-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = () => join(dir, `t${files++}`, 'state.shm');

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
  assert.equal(ha.readUInt32LE(8), 1, 'version');
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

test('a full table fails closed with STORE_FULL, counts it, and reuses expired slots', async () => {
  const store = openSharedMemoryStore(fresh(), { capacity: 64 });
  for (let i = 0; i < 64; i++) assert.equal(store.claimOnceSync(`short${i}`, 150), true);
  assert.throws(() => store.claimOnceSync('one-too-many', 60_000), { code: 'STORE_FULL', statusCode: 503 });
  await assert.rejects(store.claimOnce('one-too-many', 60_000), { code: 'STORE_FULL' });
  await assert.rejects(store.hit('ip:1', parseRateRule('5/1m')), { code: 'STORE_FULL' });
  await assert.rejects(store.addPenalty('p', 1, 1000), { code: 'STORE_FULL' });
  assert.equal(store.penaltySync('p'), 0, 'reads of a full table still work');
  assert.equal(store.claimOnceSync('short5', 60_000), false, 'present ids still answer false');
  assert.equal(store.stats().full, 4);
  assert.deepEqual(store.occupancy(), { live: 64, expired: 0, empty: 0 });
  await sleep(250);
  assert.deepEqual(store.occupancy(), { live: 0, expired: 64, empty: 0 });
  for (let i = 0; i < 64; i++) assert.equal(store.claimOnceSync(`long${i}`, 60_000), true);
  assert.throws(() => store.claimOnceSync('again-too-many', 60_000), { code: 'STORE_FULL' });
  assert.equal(store.stats().full, 5);
  assert.equal(store.claimOnceSync('long0', 60_000), false);
  await store.close();
});

test('occupancy of a range of slots wraps at the end; sampleLoad walks the table window by window', () => {
  const store = openSharedMemoryStore(fresh(), { capacity: 4096 });
  for (let i = 0; i < 1000; i++) assert.equal(store.claimOnceSync(`o${i}`, 60_000), true);
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
  // up to the 1,000 claims, and each window agrees with a walk of the same slots.
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
  for (let i = 0; i < 1000; i++) assert.equal(first.claimOnceSync(`r${i}`, 60_000), true);
  first.hitSync('ip:9', parseRateRule('10/1d'));
  first.addPenaltySync('pk', 9, 60_000);
  await first.close();
  const second = openSharedMemoryStore(path, { capacity: 4096 });
  for (let i = 0; i < 1000; i++) assert.equal(second.claimOnceSync(`r${i}`, 60_000), false, `r${i}`);
  assert.equal(second.claimOnceSync('r1000', 60_000), true);
  assert.equal(second.hitSync('ip:9', parseRateRule('10/1d')).count, 2);
  assert.equal(second.penaltySync('pk'), 9);
  await second.close();
});

test('two mappings of one file in one process see each other', () => {
  const path = fresh();
  const a = openSharedMemoryStore(path, { capacity: 1024 });
  const b = openSharedMemoryStore(path, { capacity: 1024 });
  assert.equal(a.claimOnceSync('shared', 60_000), true);
  assert.equal(b.claimOnceSync('shared', 60_000), false);
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
  patch(versioned, 8, Buffer.from([2, 0, 0, 0]));
  assert.throws(() => openSharedMemoryStore(versioned, { capacity: 1024 }), /format version 2 and this build reads version 1/);

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
  assert.equal(await store.claimOnce('factory', 1000), true);
  assert.equal(await store.claimOnce('factory', 1000), false);
  await store.close();
});

test('sync and async methods are the same operations', async () => {
  const store = openSharedMemoryStore(fresh(), { capacity: 1024 });
  const rule = parseRateRule('2/1d');
  assert.equal(store.claimOnceSync('s', 60_000), true);
  assert.equal(await store.claimOnce('s', 60_000), false);
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
  assert.throws(() => store.claimOnceSync('x', 1000), /closed/);
  await assert.rejects(store.claimOnce('x', 1000), /closed/);
  await assert.rejects(store.hit('x', parseRateRule('1/1m')), /closed/);
  await assert.rejects(store.penalty('x'), /closed/);
});

function patch(path: string, offset: number, bytes: Buffer): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
}
