// The "submitted" marks the audio route reads (src/code-challenge/spent.ts) on the shared-memory
// store: reading creates nothing, a mark is seen by every later read (also through another handle
// on the same file, as another worker would have), it lasts as long as the claim, and a full store
// never fails the verification that marks.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { createSpentMarks } from '../../src/code-challenge/spent.js';
import { PalisadeError } from '../../src/errors.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';

const dir = mkdtempSync(join(tmpdir(), 'palisade-spent-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('shared memory: unmarked until marked, seen across handles, gone with its moment', async () => {
  const file = join(dir, 'a', 'state.shm');
  const a = openSharedMemoryStore(file, { capacity: 1024 });
  const b = openSharedMemoryStore(file, { capacity: 1024 });
  try {
    const marksA = createSpentMarks(a);
    const marksB = createSpentMarks(b);
    const nonce = '0123456789abcdef0123456789abcdef';
    for (let i = 0; i < 3; i++) assert.equal(marksB.isSpent(nonce), false, 'reading creates nothing');
    marksA.mark(nonce, Date.now() + 600);
    assert.equal(marksA.isSpent(nonce), true);
    assert.equal(marksB.isSpent(nonce), true);
    assert.equal(marksB.isSpent('ffffffffffffffffffffffffffffffff'), false);
    marksA.mark(nonce, Date.now() + 600); // a second mark (a replayed payload) changes nothing
    assert.equal(marksB.isSpent(nonce), true);
    await sleep(900);
    assert.equal(marksB.isSpent(nonce), false);
  } finally {
    await a.close();
    await b.close();
  }
});

test('a store that fails: marking swallows it (the claim already decided), reading reports it', async () => {
  const file = join(dir, 'b', 'state.shm');
  const store = openSharedMemoryStore(file, { capacity: 1024 });
  try {
    const sync = store.sync;
    sync.countUpToSync = () => { throw new PalisadeError('STORE_FULL'); };
    const marks = createSpentMarks(store);
    assert.doesNotThrow(() => marks.mark('0123456789abcdef0123456789abcdef', Date.now() + 60_000));
    assert.throws(() => marks.isSpent('0123456789abcdef0123456789abcdef'), { code: 'STORE_FULL' });
  } finally {
    await store.close();
  }
});
