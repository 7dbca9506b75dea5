// Address rotation against the shared-memory store: a million IPv6 /64 sources each create a flood
// window, a probe counter and a penalty on a small soft table. The table evicts its least recently
// used entries instead of refusing, claims live apart and never fail, and a source that keeps
// attacking keeps its mark. Time is simulated (setClock): 5,000 new sources a second.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseRateRule } from '../../src/parse.js';
import { ipKey } from '../../src/store/limit-key.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';

const dir = mkdtempSync(join(tmpdir(), 'palisade-rotation-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('1,000,000 rotating /64 sources on a 65,536-slot table: no STORE_FULL, 10,000 fresh claims all succeed, the attacker keeps its mark', () => {
  const store = openSharedMemoryStore(join(dir, 'state.shm'), { capacity: 65_536, sweepEveryMs: 0 });
  const flood = parseRateRule('100/1m');
  const probe = parseRateRule('2/5m(expire=48h)');
  const PENALTY_TTL = 30 * 60_000;
  const MARK_TTL = 48 * 3_600_000;
  const SOURCES = 1_000_000;
  const PER_SECOND = 5000;
  const t0 = Date.now();
  const attacker = ipKey('2001:db8:ffff:ffff::1');
  let clock = t0;
  // The attacker is marked at the start, then keeps probing every 100 simulated ms.
  for (let i = 0; i < 3; i++) store.hitSync(`probe|${attacker}`, probe);
  store.addPenaltySync(`mark|probe|${attacker}`, 1, MARK_TTL);
  assert.ok(store.peekSync(`probe|${attacker}`, probe).blockedUntil > t0, 'marked');
  const started = performance.now();
  try {
    for (let i = 0; i < SOURCES; i++) {
      if (i % (PER_SECOND / 10) === 0) {
        clock = t0 + Math.floor((i / PER_SECOND) * 1000);
        store.setClock(clock);
        store.hitSync(`probe|${attacker}`, probe);
        store.addPenaltySync(`mark|probe|${attacker}`, 1, MARK_TTL);
      }
      const ip = ipKey(`2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`);
      store.hitSync(`flood|${ip}`, flood);
      store.hitSync(`probe|${ip}`, probe);
      store.addPenaltySync(ip, 1, PENALTY_TTL);
    }
    const rotation = performance.now() - started;
    const evicted = store.evictions();
    console.log(`[rotation] ${SOURCES} sources (${3 * SOURCES} soft entries) in ${(rotation / 1000).toFixed(1)} s on 65,536 slots: ` +
      `evicted ${evicted.window} windows and ${evicted.penalty} penalties, STORE_FULL ${store.stats().full}`);
    assert.equal(store.stats().full, 0);
    assert.ok(evicted.window > 1_000_000 && evicted.penalty > 500_000, JSON.stringify(evicted));

    // The attacker, still coming back well inside the eviction horizon (65,536 slots / 15,000 new
    // entries a second ≈ 4 s), keeps its counter's hold and its mark.
    const held = store.peekSync(`probe|${attacker}`, probe);
    assert.ok(held.blockedUntil > clock + 47 * 3_600_000, `probe hold until ${held.blockedUntil}`);
    assert.ok(store.penaltySync(`mark|probe|${attacker}`) > 1000, 'the mark kept counting');

    // Claims never competed: 10,000 fresh claims succeed, each exactly once.
    const until = clock + 21 * 60_000;
    for (let i = 0; i < 10_000; i++) assert.equal(store.claimOnceSync(`fresh-${i}`, until), true, `fresh-${i}`);
    for (let i = 0; i < 10_000; i++) assert.equal(store.claimOnceSync(`fresh-${i}`, until), false, `fresh-${i}`);
    assert.equal(store.stats().full, 0);
  } finally {
    void store.close();
  }
});

test('an entry nobody uses for longer than the eviction horizon is what rotation takes first', () => {
  const store = openSharedMemoryStore(join(dir, 'quiet.shm'), { capacity: 4096, sweepEveryMs: 0 });
  const rule = parseRateRule('5/1h');
  // Windows are aligned to the clock: start just after an hour begins, so the 50 simulated seconds
  // never cross into the next window (a real-clock start 13 s before the hour once reset 'busy').
  const t0 = (Math.floor(Date.now() / 3_600_000) + 1) * 3_600_000 + 1000;
  try {
    store.setClock(t0);
    store.hitSync('quiet', rule);
    store.hitSync('busy', rule);
    for (let i = 0; i < 50_000; i++) {
      store.setClock(t0 + i);
      if (i % 100 === 0) store.hitSync('busy', rule);
      store.hitSync(`rotating-${i}`, rule);
    }
    assert.equal(store.peekSync('quiet', rule).count, 0, 'the quiet entry was evicted (a reset counter, nothing worse)');
    assert.equal(store.peekSync('busy', rule).count, 501, 'the busy one kept every hit');
  } finally {
    void store.close();
  }
});
