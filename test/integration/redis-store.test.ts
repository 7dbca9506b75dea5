import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { Redis } from 'ioredis';
import { parseRateRule } from '../../src/parse.js';
import { createStateStore } from '../../src/store/index.js';
import { openRedisStore } from '../../src/store/redis-store.js';
import type { StoreLogger } from '../../src/store/state-store.js';
import { startHungRedis, startThrowawayRedis, type ThrowawayRedis } from '../helpers/redis-server.js';
import { deleteRedisKeys, REDIS_URL, requireService } from '../helpers/services.js';
import { storeConformance } from '../helpers/store-conformance.js';
import { report, waitFor } from '../reliability/harness.js';

const skip = !(await requireService('redis'));
const prefix = `palisade-test-${randomBytes(6).toString('hex')}:`;
const throwaways: ThrowawayRedis[] = [];

after(async () => {
  for (const t of throwaways) await t.kill();
  if (skip) return;
  await deleteRedisKeys(REDIS_URL, prefix);
});

interface Logged {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

function captureLogger(): { logger: StoreLogger; lines: Logged[] } {
  const lines: Logged[] = [];
  return {
    lines,
    logger: {
      info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
      warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
      error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
    },
  };
}

/** One claim moment for the file (a claim's moment comes with its id, as a challenge's expiry does). */
const LATER = Date.now() + 30 * 60_000;

storeConformance('RedisStore', () => openRedisStore(REDIS_URL, { keyPrefix: prefix, logger: captureLogger().logger }), { skip });

test('keys: prefixed, kind-separated, TTLs set; long ids and lone surrogates are hashed', { skip }, async () => {
  const store = await openRedisStore(REDIS_URL, { keyPrefix: `${prefix}layout:`, logger: captureLogger().logger });
  const raw = new Redis(REDIS_URL);
  try {
    assert.equal(await store.claimOnce('abc', LATER), true);
    // Kept until the claim's moment, to the millisecond (SET … PXAT).
    assert.equal(Number(await raw.call('PEXPIRETIME', `${prefix}layout:c:abc`)), LATER);
    assert.equal(await raw.get(`${prefix}layout:c:abc`), '1');
    await store.hit('ip:1.2.3.4', parseRateRule('3/1m'));
    assert.match((await raw.get(`${prefix}layout:r60000:ip:1.2.3.4`))!, /^0:\d+:1$/);
    await store.addPenalty('ip:1.2.3.4', 4, 30_000);
    assert.equal(await raw.get(`${prefix}layout:p:ip:1.2.3.4`), '4');
    const ppttl = await raw.pttl(`${prefix}layout:p:ip:1.2.3.4`);
    assert.ok(ppttl > 0 && ppttl <= 30_000);
    await store.claimOnce('z'.repeat(201), LATER);
    await store.claimOnce('\uD800', LATER);
    const keys = (await raw.keys(`${prefix}layout:*`)).sort();
    assert.equal(keys.length, 5);
    assert.equal(keys.filter((k) => /^.*layout:c#[A-Za-z0-9_-]{43}$/.test(k)).length, 2, keys.join(' '));
  } finally {
    await store.close();
    await raw.quit();
  }
});

test('penalty reads in one event-loop turn go to Redis as one MGET, each with its own value', { skip }, async () => {
  const store = await openRedisStore(REDIS_URL, { keyPrefix: `${prefix}mget:`, logger: captureLogger().logger });
  const raw = new Redis(REDIS_URL);
  const monitor = await raw.monitor();
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args.some((a) => a.startsWith(`${prefix}mget:`))) seen.push(args);
  });
  try {
    await store.addPenalty('a', 3, 60_000);
    await store.addPenalty('b', 5, 60_000);
    await sleep(50);
    seen.length = 0;
    const values = await Promise.all([store.penalty('a'), store.penalty('missing'), store.penalty('b'), store.penalty('a')]);
    assert.deepEqual(values, [3, 0, 5, 3]);
    assert.equal(await store.penalty('b'), 5, 'a read alone in its turn');
    await sleep(100); // MONITOR lines arrive after the replies
    assert.deepEqual(seen.map((args) => args[0]!.toLowerCase()), ['mget', 'get'], JSON.stringify(seen));
    assert.deepEqual(seen[0]!.slice(1), ['a', 'missing', 'b', 'a'].map((k) => `${prefix}mget:p:${k}`));
    // A key the store refuses fails alone, before any command.
    await assert.rejects(Promise.all([store.penalty(42 as unknown as string), store.penalty('a')]), { name: 'TypeError' });
  } finally {
    monitor.disconnect();
    await raw.quit();
    await store.close();
  }
});

test('claims and hits of one event-loop turn go to Redis as one command each, in order; large turns are split', { skip }, async () => {
  const store = await openRedisStore(REDIS_URL, { keyPrefix: `${prefix}turn:`, logger: captureLogger().logger });
  const raw = new Redis(REDIS_URL);
  const monitor = await raw.monitor();
  const seen: string[][] = [];
  // The commands the client sent (a script's own calls show as source "lua").
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua' && args.some((a) => a.startsWith(`${prefix}turn:`))) seen.push(args);
  });
  const rule = parseRateRule('2/1m');
  try {
    // Load both scripts (the first call of a script may go as EVALSHA, then EVAL).
    await Promise.all([store.claimOnce('warm-1', LATER), store.claimOnce('warm-2', LATER), store.hit('warm', rule)]);
    await sleep(100);
    seen.length = 0;

    const [claims, hits, reads] = await Promise.all([
      Promise.all([store.claimOnce('x1', LATER), store.claimOnce('x2', LATER), store.claimOnce('x1', LATER)]),
      Promise.all([store.hit('h', rule), store.hit('h', rule), store.hit('other', rule), store.hit('h', rule)]),
      Promise.all([store.penalty('p1'), store.penalty('p2')]),
    ]);
    assert.deepEqual(claims, [true, true, false], 'the first claim of an id in a turn wins');
    assert.deepEqual(hits.map((h) => [h.allowed, h.remaining, h.count]), [[true, 1, 1], [true, 0, 2], [true, 1, 1], [false, 0, 3]]);
    for (const h of hits) assert.ok(h.resetMs > 0 && h.resetMs <= 60_000, String(h.resetMs));
    assert.deepEqual(reads, [0, 0]);
    await sleep(100); // MONITOR lines arrive after the replies
    assert.deepEqual(seen.map((a) => [a[0]!.toLowerCase(), a[2]]), [['evalsha', '4'], ['evalsha', '3'], ['mget', `${prefix}turn:p:p2`]], JSON.stringify(seen));
    assert.deepEqual(seen[1]!.slice(3), [...['x1', 'x2', 'x1'].map((k) => `${prefix}turn:c:${k}`), 'PXAT', String(LATER), 'PXAT', String(LATER), 'PXAT', String(LATER)]);
    assert.equal(Number(await raw.call('PEXPIRETIME', `${prefix}turn:c:x2`)), LATER);

    // 1,201 claims in one turn: three commands of at most 500 keys; every id claimed exactly once.
    seen.length = 0;
    const ids = Array.from({ length: 1201 }, (_, i) => `big-${i}`);
    assert.deepEqual(await Promise.all(ids.map((id) => store.claimOnce(id, LATER))), Array(1201).fill(true));
    assert.deepEqual(await Promise.all(ids.map((id) => store.claimOnce(id, LATER))), Array(1201).fill(false));
    await sleep(200);
    assert.deepEqual(seen.map((a) => Number(a[2])), [500, 500, 201, 500, 500, 201]);
  } finally {
    monitor.disconnect();
    await raw.quit();
    await store.close();
  }
});

test('unreachable Redis: every operation rejects with STORE_UNAVAILABLE, quickly, never true', async () => {
  const { logger, lines } = captureLogger();
  const started = Date.now();
  const store = await openRedisStore('redis://127.0.0.1:1', { connectTimeout: 500, commandTimeout: 300, logger });
  try {
    await assert.rejects(store.claimOnce('x', LATER), { code: 'STORE_UNAVAILABLE', statusCode: 503 });
    await assert.rejects(store.claimOnce('x', LATER), { code: 'STORE_UNAVAILABLE' });
    await assert.rejects(store.hit('k', parseRateRule('1/1m')), { code: 'STORE_UNAVAILABLE' });
    await assert.rejects(store.peek('k', parseRateRule('1/1m')), { code: 'STORE_UNAVAILABLE' });
    await assert.rejects(store.addPenalty('k', 1, 1000), { code: 'STORE_UNAVAILABLE' });
    await assert.rejects(store.penalty('k'), { code: 'STORE_UNAVAILABLE' });
    const batch = await Promise.allSettled([store.penalty('k1'), store.penalty('k2'), store.penalty('k3')]);
    assert.deepEqual(batch.map((r) => r.status === 'rejected' && (r.reason as { code?: string }).code), Array(3).fill('STORE_UNAVAILABLE'));
    const scripts = await Promise.allSettled([store.claimOnce('y1', LATER), store.claimOnce('y2', LATER), store.hit('k1', parseRateRule('1/1m')), store.hit('k2', parseRateRule('1/1m'))]);
    assert.deepEqual(scripts.map((r) => r.status === 'rejected' && (r.reason as { code?: string }).code), Array(4).fill('STORE_UNAVAILABLE'));
    assert.equal(await store.ping(), false);
    // Bounded by the timeouts, not by retries; generous for a loaded machine.
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
    assert.ok(lines.some((l) => l.level === 'error' && /unavailable/.test(l.msg)), 'the outage is logged');
    assert.ok(lines.every((l) => !JSON.stringify(l).includes('password')));
  } finally {
    await store.close();
  }
});

test('a hung Redis: commands reject with STORE_UNAVAILABLE after commandTimeout', async () => {
  const hung = await startHungRedis();
  const store = await openRedisStore(hung.url, { connectTimeout: 1000, commandTimeout: 200, logger: captureLogger().logger });
  try {
    assert.equal(await store.ping(), true, 'the handshake completed');
    const started = Date.now();
    await assert.rejects(store.claimOnce('x', LATER), { code: 'STORE_UNAVAILABLE' });
    await assert.rejects(store.hit('k', parseRateRule('1/1m')), { code: 'STORE_UNAVAILABLE' });
    await assert.rejects(store.penalty('k'), { code: 'STORE_UNAVAILABLE' });
    assert.ok(Date.now() - started >= 190 * 3 - 30, 'each waited for its timeout');
    const batch = await Promise.allSettled([store.penalty('k1'), store.penalty('k2')]);
    assert.deepEqual(batch.map((r) => r.status === 'rejected' && (r.reason as { code?: string }).code), ['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
    // Batched claims and hits (one script each for the turn) fail together, never true.
    const rule = parseRateRule('1/1m');
    const scripts = await Promise.allSettled([store.claimOnce('y1', LATER), store.claimOnce('y2', LATER), store.hit('k1', rule), store.hit('k2', rule)]);
    assert.deepEqual(scripts.map((r) => r.status === 'rejected' && (r.reason as { code?: string }).code), Array(4).fill('STORE_UNAVAILABLE'));
  } finally {
    await store.close();
    await hung.close();
  }
});

test('eviction policy: start-up is refused unless maxmemory-policy is noeviction; REDIS_ALLOW_EVICTION goes on with a warning', async () => {
  const server = await startThrowawayRedis(['--maxmemory-policy', 'allkeys-lru']);
  throwaways.push(server);
  const raw = new Redis(server.url);
  try {
    for (const policy of ['allkeys-lru', 'volatile-lru', 'volatile-ttl', 'allkeys-random', 'noeviction']) {
      await raw.config('SET', 'maxmemory-policy', policy);
      const refused = captureLogger();
      if (policy === 'noeviction') {
        const store = await openRedisStore(server.url, { logger: refused.logger });
        assert.deepEqual(refused.lines.filter((l) => l.level !== 'info'), [], policy);
        assert.equal(await store.claimOnce(`ok-${policy}`, LATER), true);
        await store.close();
        continue;
      }
      await assert.rejects(openRedisStore(server.url, { logger: refused.logger }), (err: Error) => {
        assert.match(err.message, new RegExp(`maxmemory-policy is "${policy}"`));
        assert.match(err.message, /used-challenge/);
        assert.match(err.message, /noeviction/);
        assert.match(err.message, /REDIS_ALLOW_EVICTION=1/);
        return true;
      }, policy);
      const allowed = captureLogger();
      const store = await openRedisStore(server.url, { logger: allowed.logger, allowEviction: true });
      const warnings = allowed.lines.filter((l) => l.level === 'warn');
      assert.equal(warnings.length, 1, policy);
      assert.deepEqual(warnings[0]!.obj, { maxmemoryPolicy: policy });
      assert.equal(await store.claimOnce(`opt-out-${policy}`, LATER), true, 'the opt-out serves claims');
      await store.close();
    }
    // A server switched to an evicting policy after start-up: claims answer 503 after the next
    // reconnection instead of trusting keys Redis may drop.
    await raw.config('SET', 'maxmemory-policy', 'noeviction');
    const { logger, lines } = captureLogger();
    const store = await openRedisStore(server.url, { logger });
    await raw.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await raw.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await waitFor('the policy check after reconnecting', () => lines.some((l) => l.level === 'error' && /maxmemory-policy is "allkeys-lru"/.test(l.msg)), 10_000);
    await assert.rejects(store.claimOnce('after-switch', LATER), { code: 'STORE_UNAVAILABLE' });
    await store.close();
  } finally {
    await raw.quit();
  }
});

test('a full Redis (maxmemory, noeviction) answers 503 for claims, never a second "claimed"; soft keys carry TTLs', async () => {
  const server = await startThrowawayRedis(['--maxmemory', '3mb', '--maxmemory-policy', 'noeviction']);
  throwaways.push(server);
  const { logger } = captureLogger();
  const store = await openRedisStore(server.url, { logger });
  const raw = new Redis(server.url);
  try {
    // Bytes per claim key, as Redis counts them (key, value, expiry and the dict entry).
    assert.equal(await store.claimOnce('pow2:0123456789abcdef0123456789abcdef', LATER), true);
    const bytes = Number(await raw.call('MEMORY', 'USAGE', 'palisade:c:pow2:0123456789abcdef0123456789abcdef'));
    report('redis claim key', `${bytes} bytes by MEMORY USAGE for a v2 claim (prefix palisade:, 32-hex nonce)`);
    assert.ok(bytes > 0 && bytes <= 128, String(bytes));
    // Fill Redis with claims until it refuses writes.
    const granted: string[] = [];
    let refused = 0;
    for (let batch = 0; refused === 0 && batch < 200; batch++) {
      const ids = Array.from({ length: 500 }, (_, i) => `fill-${batch}-${i}`);
      const results = await Promise.allSettled(ids.map((id) => store.claimOnce(id, LATER)));
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') {
          assert.equal(r.value, true);
          granted.push(ids[i]!);
        } else {
          assert.equal((r.reason as { code?: string }).code, 'STORE_UNAVAILABLE');
          refused++;
        }
      });
    }
    assert.ok(refused > 0, 'Redis reached maxmemory');
    // 500 claims in flight hold query buffers that count toward maxmemory; once they drain, Redis
    // has room again. Fill it one claim at a time until it is full at rest.
    for (let i = 0; i < 100_000; i++) {
      const id = `fill-seq-${i}`;
      const r = await store.claimOnce(id, LATER).catch((err: { code?: string }) => err.code);
      if (r !== true) {
        assert.equal(r, 'STORE_UNAVAILABLE');
        break;
      }
      granted.push(id);
    }
    // Full: a new claim is refused with 503, and a replay of any granted one is still refused,
    // never answered "claimed" (nothing was evicted).
    const more: PromiseSettledResult<boolean>[] = [];
    for (let i = 0; i < 200; i++) more.push(...await Promise.allSettled([store.claimOnce(`new-while-full-${i}`, LATER)]));
    for (const r of more) {
      if (r.status === 'fulfilled') assert.equal(r.value, true);
      else assert.equal((r.reason as { code?: string }).code, 'STORE_UNAVAILABLE');
    }
    assert.ok(more.some((r) => r.status === 'rejected'), 'a full Redis refuses new claims with 503');
    let replaysAccepted = 0;
    for (const id of granted.slice(0, 2000)) {
      const r = await store.claimOnce(id, LATER).catch((err: { code?: string }) => err.code);
      if (r === true) replaysAccepted++;
      else assert.ok(r === false || r === 'STORE_UNAVAILABLE', String(r));
    }
    assert.equal(replaysAccepted, 0);
    for (const id of granted.slice(0, 50)) assert.equal(await raw.exists(`palisade:c:${id}`), 1, 'nothing was evicted');
  } finally {
    await raw.quit();
    await store.close();
  }
  // Soft state: every key has a TTL (a flood of addresses cannot grow Redis without bound).
  const soft = await openRedisStore(server.url, { logger, keyPrefix: 'soft:' });
  const raw2 = new Redis(server.url);
  try {
    await raw2.flushall();
    await soft.hit('ip:192.0.2.1', parseRateRule('10/1m'));
    await soft.addPenalty('ip:192.0.2.1', 2, 30_000);
    assert.equal(await soft.seenOnce('hdr|ip:192.0.2.1|dev', 30_000), true);
    for (const key of await raw2.keys('soft:*')) {
      const ttl = await raw2.pttl(key);
      assert.ok(ttl > 0 && ttl <= 60_000, `${key}: ${ttl}`);
    }
    assert.equal((await raw2.keys('soft:*')).length, 3);
  } finally {
    await raw2.quit();
    await soft.close();
  }
});

test('address rotation against a Redis with maxmemory: soft state sheds past 80 %, claims keep their room, a marked attacker stays marked', async () => {
  const server = await startThrowawayRedis(['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction']);
  throwaways.push(server);
  const { logger, lines } = captureLogger();
  const store = await openRedisStore(server.url, { logger });
  const rule = parseRateRule('2/5m(expire=48h)');
  try {
    // The attacker is marked before the flood starts.
    for (let i = 0; i < 3; i++) await store.hit('ip|203.0.113.66', rule);
    assert.equal(await store.addPenalty('mark|203.0.113.66', 4, 48 * 3_600_000), 4);
    // Rotation: every request from another /64, each creating a window, a penalty and a first-seen entry.
    let sent = 0;
    while (!store.shedding && sent < 400_000) {
      await Promise.all(Array.from({ length: 1000 }, (_, j) => {
        const ip = `2001:db8:${((sent + j) >>> 16).toString(16)}:${((sent + j) & 0xffff).toString(16)}::`;
        return Promise.all([store.hit(`ip|${ip}`, rule), store.addPenalty(`p|${ip}`, 1, 3_600_000), store.seenOnce(`hdr|${ip}`, 3_600_000)]);
      }));
      sent += 1000;
      await store.checkMemory();
    }
    assert.equal(store.shedding, true, `shedding after ${sent} rotated sources`);
    // The flood goes on: nothing is refused, new entries are simply not stored.
    for (let k = 0; k < 20; k++) {
      await Promise.all(Array.from({ length: 1000 }, (_, j) => {
        const ip = `2001:db9:${k.toString(16)}:${j.toString(16)}::`;
        return Promise.all([store.hit(`ip|${ip}`, rule), store.addPenalty(`p|${ip}`, 1, 3_600_000), store.seenOnce(`hdr|${ip}`, 3_600_000)]);
      }));
    }
    const e = store.evictions();
    assert.ok(e.window >= 20_000 && e.penalty >= 20_000 && e.seen >= 20_000, JSON.stringify(e));
    // Claims still have their room: 2,000 fresh ones all succeed, and each is refused a second time.
    const ids = Array.from({ length: 2000 }, (_, i) => `fresh-${i}`);
    assert.deepEqual(new Set(await Promise.all(ids.map((id) => store.claimOnce(id, LATER)))), new Set([true]));
    assert.deepEqual(new Set(await Promise.all(ids.map((id) => store.claimOnce(id, LATER)))), new Set([false]));
    // Plan-limit counters are created and count on, as claims are: a shed counter would be seeded again on every request.
    assert.deepEqual(await store.countUpTo('plan|acc_new|2024-05', 2, 0, LATER), { allowed: true, count: 1 });
    assert.deepEqual(await store.countUpTo('plan|acc_new|2024-05', 2, null, LATER), { allowed: true, count: 2 });
    assert.deepEqual(await store.countUpTo('plan|acc_new|2024-05', 2, null, LATER), { allowed: false, count: 2 });
    assert.equal(store.evictions().counter, 0);
    // The attacker keeps its mark and its window keeps counting.
    assert.equal(await store.penalty('mark|203.0.113.66'), 4);
    assert.equal(await store.addPenalty('mark|203.0.113.66', 1, 48 * 3_600_000), 5);
    assert.equal((await store.hit('ip|203.0.113.66', rule)).count, 4);
    assert.ok(lines.some((l) => l.level === 'warn' && /past 80 % of maxmemory/.test(l.msg)));
    report('redis rotation', `shedding after ${sent} rotated sources on a 4 MB Redis; then ${JSON.stringify(e)} shed, 2,000 claims granted`);
  } finally {
    await store.close();
  }
});

test('Redis killed and restarted: STORE_UNAVAILABLE meanwhile, then service resumes', async () => {
  const server = await startThrowawayRedis();
  throwaways.push(server);
  const { logger } = captureLogger();
  const store = await openRedisStore(server.url, { commandTimeout: 500, connectTimeout: 500, logger });
  try {
    assert.equal(await store.claimOnce('before', LATER), true);
    await server.kill();
    await assert.rejects(store.claimOnce('during', LATER), { code: 'STORE_UNAVAILABLE' });
    await assert.rejects(store.claimOnce('before', LATER), { code: 'STORE_UNAVAILABLE' });
    assert.equal(await store.ping(), false);
    await server.restart();
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      up = await store.ping();
      if (!up) await sleep(100);
    }
    assert.equal(up, true, 'reconnected');
    assert.equal(await store.claimOnce('during', LATER), true);
    assert.equal(await store.claimOnce('during', LATER), false);
  } finally {
    await store.close();
  }
});

test('Redis down at start: the store opens anyway and serves once Redis is up', async () => {
  const server = await startThrowawayRedis();
  throwaways.push(server);
  await server.kill();
  const { logger, lines } = captureLogger();
  const store = await openRedisStore(server.url, { commandTimeout: 500, connectTimeout: 500, logger });
  try {
    assert.equal(await store.ping(), false);
    await assert.rejects(store.claimOnce('late', LATER), { code: 'STORE_UNAVAILABLE' });
    assert.ok(lines.some((l) => l.level === 'error'));
    await server.restart();
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      up = await store.ping();
      if (!up) await sleep(100);
    }
    assert.equal(up, true, 'connected once Redis came up');
    assert.equal(await store.claimOnce('late', LATER), true);
    assert.equal(await store.claimOnce('late', LATER), false);
  } finally {
    await store.close();
  }
});

test('scripts survive SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
  const server = await startThrowawayRedis();
  throwaways.push(server);
  const store = await openRedisStore(server.url, { logger: captureLogger().logger });
  const raw = new Redis(server.url);
  try {
    const rule = parseRateRule('5/1d');
    assert.equal((await store.hit('k', rule)).count, 1);
    assert.equal(await store.addPenalty('p', 1, 60_000), 1);
    await raw.script('FLUSH');
    assert.equal((await store.hit('k', rule)).count, 2);
    assert.equal((await store.peek('k', rule)).count, 2);
    assert.equal(await store.addPenalty('p', 1, 60_000), 2);
  } finally {
    await store.close();
    await raw.quit();
  }
});

test('two key prefixes are two separate stores', { skip }, async () => {
  const a = await openRedisStore(REDIS_URL, { keyPrefix: `${prefix}a:`, logger: captureLogger().logger });
  const b = await openRedisStore(REDIS_URL, { keyPrefix: `${prefix}b:`, logger: captureLogger().logger });
  try {
    assert.equal(await a.claimOnce('same', LATER), true);
    assert.equal(await b.claimOnce('same', LATER), true);
    assert.equal(await a.claimOnce('same', LATER), false);
  } finally {
    await a.close();
    await b.close();
  }
});

test('createStateStore with a Redis URL opens the Redis store', { skip }, async () => {
  const store = await createStateStore({
    redisUrl: REDIS_URL, shmPath: '/nonexistent/never-created.shm', redisKeyPrefix: `${prefix}factory:`,
    logger: captureLogger().logger,
  });
  try {
    assert.equal(store.kind, 'redis');
    assert.equal(await store.claimOnce('f', LATER), true);
    assert.equal(await store.claimOnce('f', LATER), false);
  } finally {
    await store.close();
  }
});
