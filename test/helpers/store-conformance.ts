// One behaviour, two stores: registers the StateStore conformance tests (DESIGN.md section 3) for
// a store factory. test/unit/shared-memory-store.test.ts and test/integration/redis-store.test.ts
// call it; each adds the tests only its store needs.
//
// Windows are fixed and aligned to the Unix epoch, so exact counts use a one-day window (a test
// crossing midnight UTC would see a new window; the odds are about one in a million). Tests with
// short TTLs assert only what no scheduling delay can change: expired after a wait longer than
// the TTL, never "still there" close to the TTL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { parseRateRule, type RateRule } from '../../src/parse.js';
import { STORE_LIMITS, type HitResult, type StateStore } from '../../src/store/state-store.js';

export interface ConformanceOptions {
  /** Skip everything (an integration service is not reachable). */
  skip?: boolean;
}

/** Registers the suite under `describe(name)`; `open` is called once, the store closed at the end. */
export function storeConformance(name: string, open: () => Promise<StateStore>, options: ConformanceOptions = {}): void {
  describe(`StateStore conformance: ${name}`, { skip: options.skip ?? false }, () => {
    let store: StateStore;
    // Every id and key is unique to this run, so reruns against a persistent store start clean.
    const run = randomBytes(6).toString('hex');
    const id = (s: string) => `${run}:${s}`;
    // Claims take an epoch-ms moment, not a TTL, and the same id always comes with the same moment
    // (the shared-memory store files a claim by it): one moment, half an hour ahead, for the run.
    const later = Date.now() + 30 * 60_000;
    const soon = () => later;

    before(async () => {
      store = await open();
    });
    after(async () => {
      await store?.close();
    });

    test('claimOnce answers true once, then false', async () => {
      assert.equal(await store.claimOnce(id('once'), soon()), true);
      assert.equal(await store.claimOnce(id('once'), soon()), false);
      assert.equal(await store.claimOnce(id('once'), soon()), false);
    });

    test('claimOnce: concurrent claims of one id grant it exactly once', async () => {
      const results = await Promise.all(Array.from({ length: 200 }, () => store.claimOnce(id('race'), soon())));
      assert.equal(results.filter(Boolean).length, 1);
    });

    test('claimOnce: distinct ids are independent, including near-identical ones', async () => {
      const ids = ['a', 'A', 'a ', ' a', 'a\n', 'b', 'ab', 'ba', '0', '00', 'é', 'e\u0301'].map(id);
      for (const x of ids) assert.equal(await store.claimOnce(x, soon()), true, JSON.stringify(x));
      for (const x of ids) assert.equal(await store.claimOnce(x, soon()), false, JSON.stringify(x));
    });

    test('claimOnce: ids of any length and any Unicode, lone surrogates kept apart', async () => {
      const long = 'x'.repeat(100_000);
      const ids = [
        '', '日本語の識別子', '😀', '\u{1F600}\u{1F601}', '\uD800', '\uD801', '\uDC00', '\uD800x', 'x\uD800',
        long, `${long}y`, `${long}z`, 'y'.repeat(199), 'y'.repeat(200), 'y'.repeat(201), 'y'.repeat(255), 'y'.repeat(256),
      ];
      for (const x of ids) assert.equal(await store.claimOnce(`${run}${x}`, soon()), true, `first ${x.length}`);
      for (const x of ids) assert.equal(await store.claimOnce(`${run}${x}`, soon()), false, `second ${x.length}`);
    });

    test('claimOnce: hostile ids (NUL, glob and hash-tag characters, CRLF, protocol text) are plain ids', async () => {
      const ids = [
        'a\0b', 'a\0c', 'a', '\0', '\0\0', '*', '?', '[a-z]', '{tag}', '{tag}x', '\r\n', 'x\r\nSET y 1\r\n',
        '*3\r\n$3\r\nSET\r\n', 'c:x', 'c#x', 'p:x', `${'\u0000'.repeat(1000)}`, '%s%n', '../../etc/passwd',
      ];
      for (const x of ids) assert.equal(await store.claimOnce(`${run}${x}`, soon()), true, JSON.stringify(x));
      for (const x of ids) assert.equal(await store.claimOnce(`${run}${x}`, soon()), false, JSON.stringify(x));
    });

    test('claimOnce: an id is claimable again once its moment has passed', async () => {
      assert.equal(await store.claimOnce(id('ttl'), Date.now() + 30), true);
      await sleep(120);
      assert.equal(await store.claimOnce(id('ttl'), soon()), true);
      assert.equal(await store.claimOnce(id('ttl'), soon()), false);
    });

    test('claimOnce: the farthest moment is accepted; bad ids and moments are refused', async () => {
      const far = Date.now() + STORE_LIMITS.maxTtlMs - 60_000;
      assert.equal(await store.claimOnce(id('maxttl'), far), true);
      assert.equal(await store.claimOnce(id('maxttl'), far), false);
      const now = Date.now();
      const bad = [0, -1, 1.5, Number.NaN, Infinity, now - 1_000, now + STORE_LIMITS.maxTtlMs + 60_000, '100' as unknown as number, now + 0.5];
      for (const until of bad) await assert.rejects(store.claimOnce(id('badttl'), until), RangeError, String(until));
      await assert.rejects(store.claimOnce(42 as unknown as string, soon()), TypeError);
      await assert.rejects(store.claimOnce(undefined as unknown as string, soon()), TypeError);
      // nothing was stored by the refused calls
      assert.equal(await store.claimOnce(id('badttl'), soon()), true);
    });

    test('seenOnce: true the first time within its TTL, then false; claims and first-seen keys are apart', async () => {
      assert.equal(await store.seenOnce(id('seen'), 60_000), true);
      assert.equal(await store.seenOnce(id('seen'), 60_000), false);
      assert.equal(await store.claimOnce(id('seen'), soon()), true, 'a claim of the same text is separate');
      assert.equal(await store.seenOnce(id('seen-ttl'), 30), true);
      await sleep(120);
      assert.equal(await store.seenOnce(id('seen-ttl'), 60_000), true);
      for (const ttl of [0, -1, 1.5, STORE_LIMITS.maxTtlMs + 1]) await assert.rejects(store.seenOnce(id('seen-bad'), ttl), RangeError, String(ttl));
      await assert.rejects(store.seenOnce(7 as unknown as string, 1000), TypeError);
    });

    test('hit: count, remaining and allowed are exact within a window; then denied', async () => {
      const rule = parseRateRule('5/1d');
      const results: HitResult[] = [];
      for (let i = 0; i < 7; i++) results.push(await store.hit(id('count'), rule));
      assert.deepEqual(results.map((r) => r.count), [1, 2, 3, 4, 5, 6, 7]);
      assert.deepEqual(results.map((r) => r.remaining), [4, 3, 2, 1, 0, 0, 0]);
      assert.deepEqual(results.map((r) => r.allowed), [true, true, true, true, true, false, false]);
      assert.deepEqual(results.map((r) => r.blockedUntil), [0, 0, 0, 0, 0, 0, 0]);
      for (const r of results) assert.ok(r.resetMs > 0 && r.resetMs <= 86_400_000, String(r.resetMs));
      // the same window: reset times do not grow
      for (let i = 1; i < results.length; i++) assert.ok(results[i]!.resetMs <= results[i - 1]!.resetMs);
      const expectedEnd = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000;
      assert.ok(Math.abs(Date.now() + results[6]!.resetMs - expectedEnd) < 5_000, 'windows align to the epoch');
    });

    test('hit: keys, windows and stores of other kinds are independent', async () => {
      const day = parseRateRule('2/1d');
      const hour = parseRateRule('2/1h');
      assert.equal((await store.hit(id('k1'), day)).count, 1);
      assert.equal((await store.hit(id('k1'), day)).count, 2);
      assert.equal((await store.hit(id('k2'), day)).count, 1);
      assert.equal((await store.hit(id('k1'), hour)).count, 1, 'another window length is another counter');
      assert.equal(await store.claimOnce(id('k1'), soon()), true, 'a claim of the same text is separate');
      assert.equal(await store.penalty(id('k1')), 0);
      assert.equal((await store.hit(id('k1'), day)).count, 3);
    });

    test('hit: hostile keys count separately', async () => {
      const rule = parseRateRule('3/1d');
      const keys = ['\0', '\0\0', '*', '{a}', '\r\n', 'x'.repeat(50_000), `${'x'.repeat(50_000)}!`, '\uD800', '\uDBFF'];
      for (const k of keys) assert.equal((await store.hit(`${run}${k}`, rule)).count, 1, JSON.stringify(k.slice(0, 8)));
      for (const k of keys) assert.equal((await store.hit(`${run}${k}`, rule)).count, 2, JSON.stringify(k.slice(0, 8)));
    });

    test('hit: a new window starts from zero', async () => {
      const rule = parseRateRule('2/300ms');
      const denied = await hitUntilDenied(store, id('reset'), rule);
      assert.equal(denied.remaining, 0);
      assert.ok(denied.resetMs > 0 && denied.resetMs <= 300);
      await sleep(denied.resetMs + 30);
      const fresh = await store.hit(id('reset'), rule);
      assert.equal(fresh.allowed, true);
      assert.equal(fresh.count, 1);
      assert.equal(fresh.remaining, 1);
    });

    test('hit: block holds the key through new windows, then releases it', async () => {
      const rule = parseRateRule('2/200ms(block=1500ms)');
      const denied = await hitUntilDenied(store, id('block'), rule);
      assert.ok(denied.blockedUntil > Date.now() - 100, 'blockedUntil is set');
      assert.ok(denied.resetMs > 200 && denied.resetMs <= 1500, String(denied.resetMs));
      await sleep(400); // at least one window later
      const still = await store.hit(id('block'), rule);
      assert.equal(still.allowed, false);
      assert.equal(still.remaining, 0);
      assert.equal(still.blockedUntil, denied.blockedUntil, 'a hit while held does not extend the hold');
      assert.equal(still.count, denied.count + 1, 'hits while held still count');
      await sleep(Math.max(0, still.blockedUntil - Date.now()) + 50);
      const released = await store.hit(id('block'), rule);
      assert.equal(released.allowed, true);
      assert.equal(released.count, 1);
      assert.equal(released.blockedUntil, 0);
    });

    test('hit: a block shorter than the window holds until the window ends', async () => {
      const rule = parseRateRule('1/1d(block=1s)');
      await store.hit(id('shortblock'), rule);
      const denied = await store.hit(id('shortblock'), rule);
      assert.equal(denied.allowed, false);
      const windowEnd = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000;
      assert.ok(Math.abs(denied.blockedUntil - windowEnd) < 5_000, `${denied.blockedUntil} vs ${windowEnd}`);
    });

    test('peek: expire marks a key; peek reads the mark without counting', async () => {
      const rule = parseRateRule('1/200ms(expire=1200ms)');
      const before = await store.peek(id('mark'), rule);
      assert.deepEqual({ ...before, resetMs: 0 }, { allowed: true, remaining: 1, resetMs: 0, blockedUntil: 0, count: 0 });
      const denied = await hitUntilDenied(store, id('mark'), rule);
      assert.ok(denied.blockedUntil > 0);
      const marked = await store.peek(id('mark'), rule);
      const again = await store.peek(id('mark'), rule);
      assert.equal(marked.allowed, false);
      assert.equal(marked.blockedUntil, denied.blockedUntil);
      assert.equal(marked.count, denied.count, 'peek does not count');
      assert.equal(again.count, denied.count, 'peek does not count');
      await sleep(Math.max(0, denied.blockedUntil - Date.now()) + 50);
      const cleared = await store.peek(id('mark'), rule);
      assert.equal(cleared.blockedUntil, 0);
      assert.equal(cleared.count, 0);
      assert.equal(cleared.allowed, true);
    });

    test('peek: an unheld key reports the window count', async () => {
      const rule = parseRateRule('3/1d');
      await store.hit(id('peekcount'), rule);
      await store.hit(id('peekcount'), rule);
      const p = await store.peek(id('peekcount'), rule);
      assert.deepEqual([p.allowed, p.count, p.remaining, p.blockedUntil], [true, 2, 1, 0]);
      await store.hit(id('peekcount'), rule);
      const full = await store.peek(id('peekcount'), rule);
      assert.deepEqual([full.allowed, full.count, full.remaining, full.blockedUntil], [false, 3, 0, 0]);
    });

    test('hit: the largest rule count and bad rules', async () => {
      const big = parseRateRule(`${STORE_LIMITS.maxRuleCount}/1w`);
      const r = await store.hit(id('big'), big);
      assert.deepEqual([r.allowed, r.count, r.remaining], [true, 1, STORE_LIMITS.maxRuleCount - 1]);
      const bad: RateRule[] = [
        { ...big, count: STORE_LIMITS.maxRuleCount + 1 }, { ...big, count: 0 }, { ...big, windowMs: 0 },
        { ...big, windowMs: 1.5 }, { ...big, blockMs: -1 }, { ...big, expireMs: Number.NaN },
      ];
      for (const rule of bad) await assert.rejects(store.hit(id('bad'), rule), RangeError);
      await assert.rejects(store.hit(7 as unknown as string, big), TypeError);
      await assert.rejects(store.peek(id('bad'), { ...big, count: 0 }), RangeError);
    });

    test('penalty: adds up, reads back, unknown keys are 0', async () => {
      assert.equal(await store.penalty(id('pen')), 0);
      assert.equal(await store.addPenalty(id('pen'), 3, 60_000), 3);
      assert.equal(await store.addPenalty(id('pen'), 4, 60_000), 7);
      assert.equal(await store.addPenalty(id('pen'), 0, 60_000), 7);
      assert.equal(await store.penalty(id('pen')), 7);
      assert.equal(await store.penalty(id('pen2')), 0);
      assert.equal(await store.addPenalty(`${run}\0*{}\r\n`, 2, 60_000), 2);
      assert.equal(await store.penalty(`${run}\0*{}\r\n`), 2);
      assert.equal(await store.penalty(`${run}\0*{}\r`), 0);
    });

    test('penalty: expires after its TTL, and each addition renews the TTL', async () => {
      assert.equal(await store.addPenalty(id('penttl'), 5, 40), 5);
      await sleep(120);
      assert.equal(await store.penalty(id('penttl')), 0);
      assert.equal(await store.addPenalty(id('penttl'), 2, 60_000), 2, 'starts afresh');

      assert.equal(await store.addPenalty(id('renew'), 1, 1000), 1);
      await sleep(600);
      assert.equal(await store.addPenalty(id('renew'), 1, 1000), 2);
      await sleep(600); // past the first TTL, within the renewed one
      assert.equal(await store.penalty(id('renew')), 2);
    });

    test('penalty: large numbers saturate at maxPenalty; bad amounts are refused', async () => {
      assert.equal(await store.addPenalty(id('penbig'), 16_000_000, 60_000), 16_000_000);
      assert.equal(await store.addPenalty(id('penbig'), 1_000_000, 60_000), STORE_LIMITS.maxPenalty);
      assert.equal(await store.addPenalty(id('penbig'), Number.MAX_SAFE_INTEGER, 60_000), STORE_LIMITS.maxPenalty);
      assert.equal(await store.penalty(id('penbig')), STORE_LIMITS.maxPenalty);
      for (const n of [-1, 0.5, Number.NaN, Infinity, 2 ** 53]) {
        await assert.rejects(store.addPenalty(id('penbad'), n, 60_000), RangeError, String(n));
      }
      await assert.rejects(store.addPenalty(id('penbad'), 1, 0), RangeError);
      assert.equal(await store.penalty(id('penbad')), 0);
    });

    test('countUpTo: absent without a seed stores nothing; a seed creates it; counts up to the limit, then refuses without counting', async () => {
      const k = id('count');
      const until = Date.now() + 60_000;
      assert.equal(await store.countUpTo(k, 5, null, until), null);
      assert.equal(await store.countUpTo(k, 5, null, until), null);
      assert.deepEqual(await store.countUpTo(k, 5, 2, until), { allowed: true, count: 3 });
      // A later seed does not replace the counter.
      assert.deepEqual(await store.countUpTo(k, 5, 0, until), { allowed: true, count: 4 });
      assert.deepEqual(await store.countUpTo(k, 5, null, until), { allowed: true, count: 5 });
      assert.deepEqual(await store.countUpTo(k, 5, null, until), { allowed: false, count: 5 });
      assert.deepEqual(await store.countUpTo(k, 5, null, until), { allowed: false, count: 5 });
      // A raised limit lets more through; a seed at or past the limit refuses at once.
      assert.deepEqual(await store.countUpTo(k, 6, null, until), { allowed: true, count: 6 });
      assert.deepEqual(await store.countUpTo(id('count-over'), 10, 12, until), { allowed: false, count: 12 });
      assert.deepEqual(await store.countUpTo(id('count-zero'), 0, 0, until), { allowed: false, count: 0 });
    });

    test('countUpTo: concurrent uses of one counter let exactly the limit through', async () => {
      const k = id('count-race');
      const until = Date.now() + 60_000;
      assert.deepEqual(await store.countUpTo(k, 100, 0, until), { allowed: true, count: 1 });
      const results = await Promise.all(Array.from({ length: 300 }, () => store.countUpTo(k, 100, null, until)));
      assert.equal(results.filter((r) => r?.allowed).length, 99);
      assert.deepEqual(results.filter((r) => r?.allowed).map((r) => r!.count).sort((a, b) => a - b),
        Array.from({ length: 99 }, (_, i) => i + 2));
      // Concurrent first uses with seeds: one seed wins, the limit still holds exactly.
      const fresh = id('count-seeds');
      const seeded = await Promise.all(Array.from({ length: 50 }, (_, i) => store.countUpTo(fresh, 30, i % 2 === 0 ? 10 : 20, until)));
      const allowed = seeded.filter((r) => r?.allowed).length;
      assert.ok(allowed === 20 || allowed === 10, `${allowed} allowed`);
      assert.equal(Math.max(...seeded.map((r) => r!.count)), 30);
    });

    test('countUpTo: gone at its moment, not renewed by uses; apart from penalties and windows of the same text', async () => {
      const k = id('count-ttl');
      assert.deepEqual(await store.countUpTo(k, 10, 0, Date.now() + 400), { allowed: true, count: 1 });
      await sleep(200);
      assert.deepEqual(await store.countUpTo(k, 10, null, Date.now() + 60_000), { allowed: true, count: 2 });
      await sleep(400);
      assert.equal(await store.countUpTo(k, 10, null, Date.now() + 60_000), null);
      const shared = id('count-shared');
      await store.addPenalty(shared, 7, 60_000);
      await store.hit(shared, parseRateRule('3/1d'));
      assert.equal(await store.countUpTo(shared, 10, null, Date.now() + 60_000), null);
      assert.deepEqual(await store.countUpTo(shared, 10, 0, Date.now() + 60_000), { allowed: true, count: 1 });
      assert.equal(await store.penalty(shared), 7);
    });

    test('countUpTo: limits up to maxCounter, seeds clamped to it; bad arguments refused', async () => {
      const max = STORE_LIMITS.maxCounter;
      const until = Date.now() + 60_000;
      assert.deepEqual(await store.countUpTo(id('count-max'), max, max - 1, until), { allowed: true, count: max });
      assert.deepEqual(await store.countUpTo(id('count-max'), max, null, until), { allowed: false, count: max });
      assert.deepEqual(await store.countUpTo(id('count-clamp'), max, Number.MAX_SAFE_INTEGER, until), { allowed: false, count: max });
      for (const limit of [-1, 0.5, max + 1, Number.NaN]) {
        await assert.rejects(store.countUpTo(id('count-bad'), limit, 0, until), RangeError, String(limit));
      }
      for (const seed of [-1, 0.5, Number.NaN, 2 ** 53]) {
        await assert.rejects(store.countUpTo(id('count-bad'), 5, seed, until), RangeError, String(seed));
      }
      await assert.rejects(store.countUpTo(id('count-bad'), 5, 0, Date.now() - 1), RangeError);
      assert.equal(await store.countUpTo(id('count-bad'), 5, null, until), null);
    });

    test('ping answers true while open', async () => {
      assert.equal(await store.ping(), true);
    });
  });
}

async function hitUntilDenied(store: StateStore, key: string, rule: RateRule): Promise<HitResult> {
  for (let i = 0; i < 50; i++) {
    const r = await store.hit(key, rule);
    if (!r.allowed) return r;
  }
  throw new Error(`${key} was never denied under ${rule.source}`);
}
