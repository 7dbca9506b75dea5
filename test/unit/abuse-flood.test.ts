// The flood limit (src/abuse/flood.ts) against the in-memory store with a stepped clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { createDeviceKeys } from '../../src/abuse/device-key.js';
import { apiKeyIdOf, createFloodGuard, type FloodGuardDeps, type FloodRequest } from '../../src/abuse/flood.js';
import { createAbuseMetrics } from '../../src/abuse/metrics.js';
import type { Reply } from '../../src/http/types.js';
import { parseRateRule, type RateRule } from '../../src/parse.js';
import type { HitResult } from '../../src/store/state-store.js';
import { captureLogger, MemoryStore } from '../helpers/memory-store.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const KEY_A = 'key_AAAAAAAAAAAAAAAAAAAAAAAA';
const KEY_B = 'key_BBBBBBBBBBBBBBBBBBBBBBBB';
const SALT = 'a-hashing-salt-of-sufficient-length';

function req(ip: string, headers: Record<string, string> = {}, query = ''): FloodRequest {
  return { ip, headers, query: new URLSearchParams(query) };
}

function setup(rule: RateRule | null, over: Partial<FloodGuardDeps> = {}) {
  const clock = { now: T0 };
  const now = () => clock.now;
  const store = new MemoryStore({ now });
  const registry = new Registry();
  const metrics = createAbuseMetrics(registry);
  const { logger, records } = captureLogger();
  const guard = createFloodGuard({ store, rule, key: 'ip', logger, metrics, ...over }, { now });
  return { clock, store, registry, metrics, records, guard };
}

async function run(check: ReturnType<typeof createFloodGuard>['check'], r: FloodRequest, exempt = false): Promise<Reply | undefined> {
  return await check(r, exempt);
}

async function admitted(guard: ReturnType<typeof createFloodGuard>, r: FloodRequest, n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) if ((await run(guard.check, r)) === undefined) ok++;
  return ok;
}

async function counter(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await registry.getSingleMetric(name)!.get();
  const v = metric.values.find((x) => Object.entries(labels).every(([k, l]) => x.labels[k] === l));
  return v?.value ?? 0;
}

test('no rule: disabled, check answers nothing and never touches the store', async () => {
  const { guard, store } = setup(null);
  assert.equal(guard.enabled, false);
  for (let i = 0; i < 1000; i++) assert.equal(guard.check(req('192.0.2.1'), false), undefined);
  assert.deepEqual(store.calls, { claimOnce: 0, seenOnce: 0, hit: 0, peek: 0, addPenalty: 0, penalty: 0, countUpTo: 0 });
});

test('100/1m: exactly 100 per window, then 429 RATE_LIMITED with Retry-After until the window ends', async () => {
  const { guard, clock, registry } = setup(parseRateRule('100/1m'));
  assert.equal(guard.enabled, true);
  clock.now = T0 + 15_000; // 45 s before the window ends
  assert.equal(await admitted(guard, req('192.0.2.1'), 300), 100);
  const denied = await run(guard.check, req('192.0.2.1'));
  assert.deepEqual(denied, {
    status: 429, headers: { 'retry-after': '45' }, body: '{"error":"RATE_LIMITED","statusCode":429}',
  });
  assert.equal(await counter(registry, 'palisade_rate_limited_total', { reason: 'flood' }), 201);
  clock.now = T0 + 59_001;
  assert.equal((await run(guard.check, req('192.0.2.1')))?.headers?.['retry-after'], '1');
  clock.now = T0 + 60_000;
  assert.equal(await admitted(guard, req('192.0.2.1'), 150), 100, 'the next window admits 100 again');
  assert.equal(await admitted(guard, req('192.0.2.2'), 150), 100, 'another IP has its own bucket');
});

test('exempt callers are not counted and cost no store call', async () => {
  const { guard, store } = setup(parseRateRule('1/1m'));
  for (let i = 0; i < 10; i++) assert.equal(guard.check(req('192.0.2.1'), true), undefined);
  assert.equal(store.calls.hit, 0);
  assert.equal(await run(guard.check, req('192.0.2.1')), undefined, 'the exempt requests did not use up the budget');
});

test('block: a client past the limit is refused until the block ends, through new windows', async () => {
  const { guard, clock } = setup(parseRateRule('2/1s(block=10s)'));
  assert.equal(await admitted(guard, req('192.0.2.9'), 3), 2);
  clock.now = T0 + 4_000;
  const r = await run(guard.check, req('192.0.2.9'));
  assert.equal(r?.status, 429);
  assert.equal(r?.headers?.['retry-after'], '6', 'seconds until blockedUntil, not until the 1 s window ends');
  clock.now = T0 + 9_999;
  assert.equal((await run(guard.check, req('192.0.2.9')))?.status, 429);
  clock.now = T0 + 10_000;
  assert.equal(await admitted(guard, req('192.0.2.9'), 3), 2);
});

test('ip key: two addresses of one IPv6 /64 share a bucket; another /64 and IPv4-mapped forms are apart', async () => {
  const { guard } = setup(parseRateRule('3/1m'));
  assert.equal(await admitted(guard, req('2001:db8:1:2::1'), 2), 2);
  assert.equal(await admitted(guard, req('2001:db8:1:2:ffff:0:0:7'), 2), 1, 'same /64');
  assert.equal(await admitted(guard, req('2001:db8:1:3::1'), 4), 3, 'next /64');
  assert.equal(await admitted(guard, req('198.51.100.4'), 2), 2);
  assert.equal(await admitted(guard, req('::ffff:198.51.100.4'), 2), 1, 'IPv4-mapped IPv6 is the IPv4 address');
});

test('ip key: forwarding and identity headers do not change the key (only the resolved IP does)', async () => {
  const { guard } = setup(parseRateRule('2/1m'));
  assert.equal(await admitted(guard, req('192.0.2.5', { 'x-forwarded-for': '203.0.113.1' }), 1), 1);
  assert.equal(await admitted(guard, req('192.0.2.5', { 'x-forwarded-for': '203.0.113.2', 'x-real-ip': '203.0.113.3' }), 1), 1);
  assert.equal(await admitted(guard, req('192.0.2.5', { 'user-agent': 'other' }, `apiKey=${KEY_A}`), 1), 0);
});

test('device key: same browser behind one address is one bucket, another browser another', async () => {
  const deviceKeys = createDeviceKeys(SALT);
  const { guard } = setup(parseRateRule('2/1m'), { key: 'device', deviceKeys });
  assert.equal(guard.key, 'device');
  const firefox = { 'user-agent': 'Mozilla/5.0 Firefox/130.0', 'accept-language': 'de' };
  const chrome = { 'user-agent': 'Mozilla/5.0 Chrome/128.0', 'accept-language': 'de' };
  assert.equal(await admitted(guard, req('192.0.2.7', firefox), 5), 2);
  assert.equal(await admitted(guard, req('192.0.2.7', chrome), 5), 2);
  assert.equal(await admitted(guard, req('192.0.2.8', firefox), 5), 2, 'the IP is part of the device');
  assert.throws(() => createFloodGuard({ ...baseDeps(), rule: parseRateRule('1/1m'), key: 'device' }), TypeError);
});

test('a key= written in the rule wins over FLOOD_RATE_LIMIT_KEY', async () => {
  const deviceKeys = createDeviceKeys(SALT);
  assert.equal(setup(parseRateRule('5/1m(key=device)'), { key: 'ip', deviceKeys }).guard.key, 'device');
  assert.equal(setup(parseRateRule('5/1m(key=ip)'), { key: 'device', deviceKeys }).guard.key, 'ip');
  assert.equal(setup(parseRateRule('5/1m(block=1m)'), { key: 'device', deviceKeys }).guard.key, 'device');
});

test('apiKey key: only key ids the cache knows get their own bucket; invented ids fall back to the IP', async () => {
  const known = new Map([[KEY_A, { accountId: 'acc1' }], [KEY_B, { accountId: 'acc1' }]]);
  const { guard } = setup(parseRateRule('3/1m'), { key: 'apiKey', knownKey: (id) => known.get(id) });
  assert.equal(await admitted(guard, req('192.0.2.1', {}, `apiKey=${KEY_A}`), 2), 2);
  assert.equal(await admitted(guard, req('192.0.2.2', { authorization: `Bearer ${KEY_A}` }), 2), 1, 'one bucket for the key across IPs');
  assert.equal(await admitted(guard, req('192.0.2.3', {}, `apiKey=${KEY_B}`), 4), 3);
  // Rotating unknown ids from one IP: all in that IP's bucket.
  let ok = 0;
  for (let i = 0; i < 6; i++) {
    const fake = `key_${String(i).padStart(24, 'Z')}`;
    if ((await run(guard.check, req('192.0.2.4', {}, `apiKey=${fake}`))) === undefined) ok++;
  }
  assert.equal(ok, 3);
  // Malformed ids and secrets never become keys.
  assert.equal(apiKeyIdOf(req('192.0.2.1', {}, 'apiKey=key_short')), undefined);
  assert.equal(apiKeyIdOf(req('192.0.2.1', { authorization: 'Bearer sec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })), undefined);
  assert.equal(apiKeyIdOf(req('192.0.2.1', { authorization: `Bearer ${KEY_A}${'x'.repeat(300)}` })), undefined);
  assert.equal(apiKeyIdOf(req('192.0.2.1', { authorization: `bearer  ${KEY_B} ` })), KEY_B);
});

test('account key: the keys of one account share a bucket; without knownKey everything counts per IP', async () => {
  const known = new Map([[KEY_A, { accountId: 'acc1' }], [KEY_B, { accountId: 'acc1' }]]);
  const { guard } = setup(parseRateRule('3/1m'), { key: 'account', knownKey: (id) => known.get(id) });
  assert.equal(await admitted(guard, req('192.0.2.1', {}, `apiKey=${KEY_A}`), 2), 2);
  assert.equal(await admitted(guard, req('192.0.2.2', {}, `apiKey=${KEY_B}`), 2), 1);
  const blind = setup(parseRateRule('3/1m'), { key: 'apiKey' }).guard;
  assert.equal(await admitted(blind, req('192.0.2.1', {}, `apiKey=${KEY_A}`), 2), 2);
  assert.equal(await admitted(blind, req('192.0.2.2', {}, `apiKey=${KEY_A}`), 2), 2);
});

test('store unavailable or full: fail open, counted, one warning per interval', async () => {
  const { guard, store, clock, registry, records } = setup(parseRateRule('1/1m'));
  store.failWith = 'STORE_UNAVAILABLE';
  assert.equal(await admitted(guard, req('192.0.2.1'), 5), 5);
  store.failWith = 'STORE_FULL';
  assert.equal(await admitted(guard, req('192.0.2.1'), 2), 2);
  assert.equal(await counter(registry, 'palisade_store_errors_total', { code: 'STORE_UNAVAILABLE' }), 5);
  assert.equal(await counter(registry, 'palisade_store_errors_total', { code: 'STORE_FULL' }), 2);
  const warnings = () => records.filter((r) => r.msg === 'state store failed: abuse check skipped (fail-open)');
  assert.equal(warnings().length, 1);
  assert.deepEqual([warnings()[0]!.check, warnings()[0]!.code, warnings()[0]!.level], ['flood', 'STORE_UNAVAILABLE', 40]);
  clock.now += 10_000;
  assert.equal(await admitted(guard, req('192.0.2.1'), 1), 1);
  assert.equal(warnings().length, 2);
  assert.equal(warnings()[1]!.suppressed, 6);
  store.failWith = null;
  assert.equal(await admitted(guard, req('192.0.2.1'), 3), 1, 'limits apply again once the store answers');
});

test('an error that is not a store failure is a bug: it propagates', async () => {
  const { guard, store } = setup(parseRateRule('1/1m'));
  store.hit = () => Promise.reject(new TypeError('boom'));
  await assert.rejects(Promise.resolve(guard.check(req('192.0.2.1'), false)), TypeError);
});

test('a store with StateStore.sync (shared memory) is checked synchronously: no Promise on the hot path', () => {
  const { guard } = setupSync(parseRateRule('2/1m'));
  const a = guard.check(req('192.0.2.1'), false);
  const b = guard.check(req('192.0.2.1'), false);
  const c = guard.check(req('192.0.2.1'), false);
  assert.equal(a, undefined);
  assert.equal(b, undefined);
  assert.ok(c !== undefined && !(c instanceof Promise));
  assert.equal((c as Reply).status, 429);
});

test('hostile input: empty or garbage client IPs and huge headers are plain keys', async () => {
  const { guard } = setup(parseRateRule('1/1m'));
  assert.equal(await admitted(guard, req(''), 2), 1);
  assert.equal(await admitted(guard, req('not-an-ip:::'), 2), 1);
  assert.equal(await admitted(guard, req('192.0.2.1', { 'user-agent': 'x'.repeat(16_000) }), 2), 1);
  const device = setup(parseRateRule('1/1m'), { key: 'device', deviceKeys: createDeviceKeys(SALT) }).guard;
  assert.equal(await admitted(device, req('192.0.2.1', { 'user-agent': '\u0000\uD800'.repeat(5000) }), 2), 1);
});

test('a rule the stores cannot hold is refused at start-up', () => {
  // Configuration refuses such a count already (parse.ts); the guard checks rules from anywhere else.
  assert.throws(() => parseRateRule('10000000/1m'), /out of range/);
  assert.throws(() => setup({ ...parseRateRule('10/1m'), count: 10_000_000 }), RangeError);
});

function baseDeps(): FloodGuardDeps {
  const { logger } = captureLogger();
  return { store: new MemoryStore(), rule: null, key: 'ip', logger, metrics: createAbuseMetrics() };
}

function setupSync(rule: RateRule) {
  const store = new MemoryStore();
  // What SharedMemoryStore offers: the same hit, synchronously.
  const windows = new Map<string, number>();
  const sync = Object.assign(store, {
    sync: {
      hitSync(key: string, r: RateRule): HitResult {
        const count = (windows.get(key) ?? 0) + 1;
        windows.set(key, count);
        const allowed = count <= r.count;
        return { allowed, remaining: allowed ? r.count - count : 0, resetMs: 30_000, blockedUntil: 0, count };
      },
      penaltySync: () => 0,
      claimOnceSync: () => { throw new Error('the flood guard claims nothing'); },
      countUpToSync: () => { throw new Error('the flood guard counts nothing'); },
    },
  });
  const { logger } = captureLogger();
  return { guard: createFloodGuard({ store: sync, rule, key: 'ip', logger, metrics: createAbuseMetrics() }) };
}
