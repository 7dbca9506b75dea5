// Per-API-key rate limits (src/abuse/key-rate-limit.ts): ApiKey.rateLimit parsed once per key id
// and text, counted per client IP of the key by default, RATE_LIMITED with retryAfter.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { createDeviceKeys } from '../../src/abuse/device-key.js';
import { createKeyRateLimiter } from '../../src/abuse/key-rate-limit.js';
import { createAbuseMetrics } from '../../src/abuse/metrics.js';
import type { ApiKey } from '../../src/keys/types.js';
import { captureLogger, MemoryStore } from '../helpers/memory-store.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

function apiKey(id: string, rateLimit: string | null, accountId = 'acc1'): ApiKey {
  return {
    id, accountId, name: 'test', hostnames: [], planId: null, challengePolicy: null, rateLimit, enabled: true,
    secret: 'sec_SSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSS',
  };
}

function setup(options: { maxCachedRules?: number } = {}) {
  const clock = { now: T0 };
  const now = () => clock.now;
  const store = new MemoryStore({ now });
  const registry = new Registry();
  const { logger, records } = captureLogger();
  const limiter = createKeyRateLimiter(
    { store, logger, metrics: createAbuseMetrics(registry), deviceKeys: createDeviceKeys('a-hashing-salt-of-sufficient-length', { now }) },
    { now, ...options },
  );
  return { clock, store, registry, records, limiter };
}

async function passes(limiter: ReturnType<typeof createKeyRateLimiter>, key: ApiKey, ip: string, n: number, headers: Record<string, string> = {}) {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    try {
      await limiter.checkKeyRateLimit(key, { ip, headers });
      ok++;
    } catch (err) {
      assert.equal((err as { code: string }).code, 'RATE_LIMITED');
    }
  }
  return ok;
}

test('no rule (null, empty, blank): passes without a store call', async () => {
  const { limiter, store } = setup();
  for (const text of [null, '', '   ']) assert.equal(await passes(limiter, apiKey('key_A', text), '192.0.2.1', 50), 50);
  assert.equal(store.calls.hit, 0);
});

test('3/1m: three per client IP of the key, then RATE_LIMITED with retryAfter seconds until the window ends', async () => {
  const { limiter, clock, registry } = setup();
  const key = apiKey('key_A', '3/1m');
  clock.now = T0 + 20_000;
  assert.equal(await passes(limiter, key, '192.0.2.1', 3), 3);
  await assert.rejects(async () => limiter.checkKeyRateLimit(key, { ip: '192.0.2.1', headers: {} }), (err: unknown) => {
    const e = err as { code: string; statusCode: number; retryAfter: number };
    assert.deepEqual([e.code, e.statusCode, e.retryAfter], ['RATE_LIMITED', 429, 40]);
    return true;
  });
  assert.equal(await passes(limiter, key, '192.0.2.2', 5), 3, 'another IP of the same key');
  assert.equal(await passes(limiter, apiKey('key_B', '3/1m'), '192.0.2.1', 5), 3, 'the same IP on another key');
  assert.equal(await passes(limiter, key, '2001:db8::1', 2), 2);
  assert.equal(await passes(limiter, key, '2001:db8::2', 2), 1, 'one IPv6 /64');
  const metric = await registry.getSingleMetric('palisade_rate_limited_total')!.get();
  assert.equal(metric.values.find((v) => v.labels.reason === 'api_key')?.value, 1 + 2 + 2 + 1);
});

test('key=apiKey counts the key as a whole; key=account every key of the account; key=device each browser', async () => {
  const { limiter } = setup();
  const whole = apiKey('key_W', '4/1m(key=apiKey)');
  assert.equal(await passes(limiter, whole, '192.0.2.1', 2) + await passes(limiter, whole, '192.0.2.2', 5), 4);
  const a1 = apiKey('key_A1', '3/1h(key=account)', 'acc9');
  const a2 = apiKey('key_A2', '3/1h(key=account)', 'acc9');
  const other = apiKey('key_O', '3/1h(key=account)', 'acc10');
  assert.equal(await passes(limiter, a1, '192.0.2.1', 2) + await passes(limiter, a2, '192.0.2.2', 5), 3);
  assert.equal(await passes(limiter, other, '192.0.2.1', 5), 3);
  const dev = apiKey('key_D', '1/1m(key=device)');
  assert.equal(await passes(limiter, dev, '192.0.2.1', 3, { 'user-agent': 'A' }), 1);
  assert.equal(await passes(limiter, dev, '192.0.2.1', 3, { 'user-agent': 'B' }), 1);
});

test('block holds a key past the window', async () => {
  const { limiter, clock } = setup();
  const key = apiKey('key_B', '1/1s(block=30s)');
  assert.equal(await passes(limiter, key, '192.0.2.1', 2), 1);
  clock.now = T0 + 10_000;
  await assert.rejects(async () => limiter.checkKeyRateLimit(key, { ip: '192.0.2.1', headers: {} }), { code: 'RATE_LIMITED', retryAfter: 20 });
  clock.now = T0 + 30_000;
  assert.equal(await passes(limiter, key, '192.0.2.1', 1), 1);
});

test('the rule is parsed once per key id and text; a changed text takes effect; the cache is bounded', async () => {
  const { limiter } = setup({ maxCachedRules: 2 });
  assert.equal(await passes(limiter, apiKey('key_C', '2/1m'), '192.0.2.1', 4), 2);
  assert.equal(limiter.cachedRules, 1);
  assert.equal(await passes(limiter, apiKey('key_C', '5/1h'), '192.0.2.1', 9), 5, 'new text, new rule (and window)');
  assert.equal(limiter.cachedRules, 1);
  await passes(limiter, apiKey('key_D', '1/1m'), '192.0.2.1', 1);
  await passes(limiter, apiKey('key_E', '1/1m'), '192.0.2.1', 1);
  assert.equal(limiter.cachedRules, 2);
});

test('an invalid stored rule is logged once and not applied', async () => {
  const { limiter, records, store } = setup();
  for (const text of ['lots', '5/1m(key=nobody)', '10000000/1m', '1/0s']) {
    const key = apiKey(`key_${text.length}`, text);
    assert.equal(await passes(limiter, key, '192.0.2.1', 3), 3, text);
  }
  const errors = records.filter((r) => r.msg === 'the rate limit stored with this API key is not valid; not applied');
  assert.equal(errors.length, 4);
  assert.equal(errors[0]!.apiKey, 'key_4');
  assert.equal(store.calls.hit, 0);
});

test('store failures fail open', async () => {
  const { limiter, store } = setup();
  store.failWith = 'STORE_UNAVAILABLE';
  assert.equal(await passes(limiter, apiKey('key_F', '1/1m'), '192.0.2.1', 3), 3);
});
