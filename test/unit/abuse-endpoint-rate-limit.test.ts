// AUDIO_CHALLENGE_RATE_LIMIT through the abuse protection: counted per client under its own scope,
// 429 RATE_LIMITED with Retry-After through the hold, the metric, nothing when unset, and a store
// that fails lets the request through (fail open, as the other abuse checks).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAbuseProtection, type AbuseConfig } from '../../src/abuse/index.js';
import { PalisadeError } from '../../src/errors.js';
import { createMetrics } from '../../src/metrics.js';
import { parseRateRule } from '../../src/parse.js';
import { captureLogger, MemoryStore } from '../helpers/memory-store.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const CONFIG: AbuseConfig = {
  FLOOD_RATE_LIMIT: parseRateRule('3/1m'), FLOOD_RATE_LIMIT_KEY: 'ip', THREATS_ENABLED: false,
  THREATS_PROBE_LIMIT: null, THREATS_MALICIOUS_LIMIT: null, THREATS_BOT_LIMIT: null, THREATS_PROXY_LIMIT: null, THREATS_TOR_LIMIT: null,
  PENALTY_TTL: 30 * 60_000, HEADER_ENTROPY_MAX_ENTRIES: 100, ANONYMIZE_IP_ADDRESS: true, secrets: { HASHING_SALT: 'a-hashing-salt-of-sufficient-length' },
  AUDIO_CHALLENGE_RATE_LIMIT: parseRateRule('10/5m(key=ip&block=10m)'),
};
const req = (ip: string) => ({ ip, headers: {}, query: new URLSearchParams('apiKey=key_a&token=t') });

test('10/5m(block=10m): the eleventh request of an IP is 429 with Retry-After for the hold; other IPs and the flood window untouched', async () => {
  const clock = { now: T0 };
  const store = new MemoryStore({ now: () => clock.now });
  const metrics = createMetrics({ defaultMetrics: false });
  const abuse = createAbuseProtection(CONFIG, { store, logger: captureLogger().logger, registry: metrics.registry }, { now: () => clock.now });
  for (let i = 0; i < 10; i++) await abuse.checkAudioRateLimit(req('192.0.2.1'));
  await assert.rejects(abuse.checkAudioRateLimit(req('192.0.2.1')), (e: unknown) =>
    e instanceof PalisadeError && e.code === 'RATE_LIMITED' && e.statusCode === 429 && e.retryAfter === 600);
  await abuse.checkAudioRateLimit(req('192.0.2.2'));
  // Past the window but inside the hold: still refused.
  clock.now += 6 * 60_000;
  await assert.rejects(abuse.checkAudioRateLimit(req('192.0.2.1')), { code: 'RATE_LIMITED' });
  clock.now += 5 * 60_000;
  await abuse.checkAudioRateLimit(req('192.0.2.1'));
  assert.match(await metrics.registry.metrics(), /palisade_rate_limited_total\{reason="audio_challenge"\} 2/);
  // Its own scope: the flood limit (3/1m) of the same IP has counted nothing.
  assert.equal(await abuse.beforeRoute!({ ip: '192.0.2.1', path: '/v1/challenge', rawQuery: '', headers: {}, query: new URLSearchParams() }, false), undefined);
});

test('unset: every request passes; a failing store lets the request through and warns', async () => {
  const open = createAbuseProtection({ ...CONFIG, AUDIO_CHALLENGE_RATE_LIMIT: null }, { store: new MemoryStore(), logger: captureLogger().logger });
  for (let i = 0; i < 50; i++) await open.checkAudioRateLimit(req('192.0.2.1'));

  const store = new MemoryStore();
  store.hit = () => Promise.reject(new PalisadeError('STORE_UNAVAILABLE'));
  const { logger, records } = captureLogger();
  const failing = createAbuseProtection(CONFIG, { store, logger });
  await failing.checkAudioRateLimit(req('192.0.2.1'));
  assert.ok(records.some((r) => String(r.msg).includes('fail-open') && r.check === 'audio_challenge_rate_limit'), JSON.stringify(records));
});
