// The assembled abuse protection (src/abuse/index.ts): the pre-route hook, challenge and verify
// gates, failed verifications, the score, adaptive difficulty through scalePolicy, and metrics in
// the worker's registry next to the lead's counters.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAbuseProtection, FAILURE_POLICY, type AbuseConfig, type BeforeRouteRequest } from '../../src/abuse/index.js';
import type { Reply } from '../../src/http/types.js';
import { createMetrics } from '../../src/metrics.js';
import { parseRateRule } from '../../src/parse.js';
import { resolvePolicy, scalePolicy } from '../../src/pow/policy.js';
import { captureLogger, MemoryStore } from '../helpers/memory-store.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const CONFIG: AbuseConfig = {
  FLOOD_RATE_LIMIT: parseRateRule('100/1m'), FLOOD_RATE_LIMIT_KEY: 'ip', THREATS_ENABLED: true,
  THREATS_PROBE_LIMIT: parseRateRule('2/5m(expire=48h)'), THREATS_MALICIOUS_LIMIT: parseRateRule('10/5m(expire=48h)'),
  THREATS_BOT_LIMIT: null, THREATS_PROXY_LIMIT: null, THREATS_TOR_LIMIT: null, PENALTY_TTL: 30 * 60_000,
  HEADER_ENTROPY_MAX_ENTRIES: 100, ANONYMIZE_IP_ADDRESS: true, secrets: { HASHING_SALT: 'a-hashing-salt-of-sufficient-length' },
};

function setup(config: Partial<AbuseConfig> = {}) {
  const clock = { now: T0 };
  const now = () => clock.now;
  const store = new MemoryStore({ now });
  const { logger, records } = captureLogger();
  const metrics = createMetrics({ defaultMetrics: false });
  const abuse = createAbuseProtection({ ...CONFIG, ...config }, { store, logger, registry: metrics.registry }, { now });
  return { clock, store, records, metrics, abuse };
}

function req(path: string, ip = '192.0.2.1', headers: Record<string, string> = {}, rawQuery = ''): BeforeRouteRequest {
  return { ip, path, rawQuery, headers, query: new URLSearchParams(rawQuery) };
}

async function before(abuse: ReturnType<typeof setup>['abuse'], r: BeforeRouteRequest, exempt = false): Promise<Reply | undefined> {
  return await abuse.beforeRoute!(r, exempt);
}

test('nothing configured: no pre-route hook at all', () => {
  const { abuse } = setup({ FLOOD_RATE_LIMIT: null, THREATS_ENABLED: false });
  assert.equal(abuse.beforeRoute, undefined);
  const floodOnly = setup({ THREATS_ENABLED: false }).abuse;
  assert.equal(floodOnly.beforeRoute, floodOnly.flood.check, 'flood only: the guard itself');
});

test('beforeRoute: probe paths are counted and passed on (the router answers 404); ordinary paths are not', async () => {
  const { abuse, store } = setup();
  assert.equal(await before(abuse, req('/v1/challenge')), undefined);
  assert.equal(store.calls.addPenalty, 0);
  assert.equal(await before(abuse, req('/.env')), undefined);
  assert.equal(await before(abuse, req('/wp-login.php')), undefined);
  assert.equal(await before(abuse, req('/v1/challenge', '192.0.2.1', {}, 'f=../../etc/passwd')), undefined);
  await new Promise((r) => setImmediate(r));
  assert.equal(await abuse.threats.isMarked('192.0.2.1', 'probe'), true);
  assert.equal(await abuse.penaltyFor('192.0.2.1'), 3 + 2 + 8, '3 probes (1 each), 1 escalated malicious event (2), the probe mark (8)');
});

test('beforeRoute: smuggling-shaped framing is answered 400 and counted as malicious', async () => {
  const { abuse, metrics } = setup();
  const r = await before(abuse, req('/v1/verify', '192.0.2.3', { 'content-length': '5', 'transfer-encoding': 'chunked' }));
  assert.deepEqual(r, { status: 400, body: '{"error":"BAD_REQUEST","statusCode":400}' });
  await new Promise((resolve) => setImmediate(resolve));
  const m = await metrics.registry.getSingleMetric('palisade_malicious_events_total')!.get();
  assert.equal(m.values.find((v) => v.labels.reason === 'smuggling')?.value, 1);
  assert.equal(await abuse.penaltyFor('192.0.2.3'), 2);
});

test('beforeRoute: the flood limit answers 429 after 100; exempt monitoring callers are not counted', async () => {
  const { abuse, metrics } = setup();
  let admitted = 0;
  for (let i = 0; i < 150; i++) if ((await before(abuse, req('/v1/challenge', '192.0.2.4'))) === undefined) admitted++;
  assert.equal(admitted, 100);
  assert.equal((await before(abuse, req('/v1/challenge', '192.0.2.4')))?.status, 429);
  assert.equal(await before(abuse, req('/.metrics', '192.0.2.4'), true), undefined);
  // The lead's palisade_rate_limited_total is reused, not duplicated.
  assert.equal(metrics.rateLimited, metrics.registry.getSingleMetric('palisade_rate_limited_total'));
  const m = await metrics.rateLimited.get();
  assert.equal(m.values.find((v) => v.labels.reason === 'flood')?.value, 51);
});

test('challengePenalty and assertNotBlocked: 403 IP_BLOCKED for a malicious mark, another IP unaffected', async () => {
  const { abuse, metrics } = setup();
  for (let i = 0; i < 11; i++) await abuse.recordMalicious('192.0.2.66', 'replayed');
  await assert.rejects(async () => abuse.challengePenalty({ ip: '192.0.2.66', headers: {} }), { code: 'IP_BLOCKED', statusCode: 403 });
  await assert.rejects(async () => abuse.assertNotBlocked('192.0.2.66'), { code: 'IP_BLOCKED' });
  assert.equal(await abuse.challengePenalty({ ip: '192.0.2.67', headers: {} }), 0);
  await abuse.assertNotBlocked('192.0.2.67');
  const m = await metrics.registry.getSingleMetric('palisade_blocked_total')!.get();
  assert.equal(m.values.find((v) => v.labels.reason === 'malicious')?.value, 2);
});

test('verificationFailed: failures and points by reason; signatures and replays are malicious', async () => {
  const { abuse } = setup();
  await abuse.verificationFailed('192.0.2.10', 'INVALID_SOLUTION');
  assert.deepEqual([await abuse.penaltyFor('192.0.2.10'), await abuse.penalties.failedAttempts('192.0.2.10')], [1, 1]);
  await abuse.verificationFailed('192.0.2.10', 'CHALLENGE_EXPIRED');
  await abuse.verificationFailed('192.0.2.10', 'constructor');
  await abuse.verificationFailed('192.0.2.10', '__proto__');
  assert.deepEqual([await abuse.penaltyFor('192.0.2.10'), await abuse.penalties.failedAttempts('192.0.2.10')], [1, 1]);
  await abuse.verificationFailed('192.0.2.10', 'PAYLOAD_ALREADY_USED');
  await abuse.verificationFailed('192.0.2.10', 'INVALID_SIGNATURE', 'server_payload');
  // 1 + (2 + 2 malicious) + (2 + 2 malicious) = 9 points, 3 failures.
  assert.deepEqual([await abuse.penaltyFor('192.0.2.10'), await abuse.penalties.failedAttempts('192.0.2.10')], [9, 3]);
  const m = await abuse.metrics.registry.getSingleMetric('palisade_malicious_events_total')!.get();
  assert.deepEqual(
    ['replayed', 'tampered', 'invalid_signature'].map((r) => m.values.find((v) => v.labels.reason === r)?.value ?? 0),
    [1, 1, 0],
  );
  assert.equal(FAILURE_POLICY.INVALID_SIGNATURE!.malicious, 'invalid_signature');
});

test('assess: score 0 and no reasons for a clean client; rises with penalty and failures', async () => {
  const { abuse } = setup();
  assert.deepEqual(await abuse.assess({ req: { ip: '192.0.2.20' }, penalty: 0 }), { score: 0, reasons: [] });
  await abuse.verificationFailed('192.0.2.20', 'INVALID_SOLUTION');
  await abuse.verificationFailed('192.0.2.20', 'INVALID_SOLUTION');
  const penalty = await abuse.penaltyFor('192.0.2.20');
  assert.deepEqual(await abuse.assess({ req: { ip: '192.0.2.20' }, penalty }), { score: 1.28, reasons: ['penalty', 'failed_attempts'] });
});

test('adaptive difficulty: a penalised client gets a harder policy, back to normal after PENALTY_TTL', async () => {
  const { abuse, clock } = setup({ PENALTY_TTL: 60_000 });
  const policy = resolvePolicy(null, { maxMemoryBytes: 128 * 1024 * 1024 });
  const probabilistic = resolvePolicy({ algorithm: 'PBKDF2/SHA-256', mode: 'probabilistic' }, { maxMemoryBytes: 128 * 1024 * 1024 });
  const clean = await abuse.challengePenalty({ ip: '192.0.2.30', headers: {} });
  assert.equal(scalePolicy(policy, clean), policy, 'a clean client is not slowed');
  await abuse.penalize('192.0.2.30', 3, 'manual');
  const penalty = await abuse.challengePenalty({ ip: '192.0.2.30', headers: {} });
  assert.equal(penalty, 3);
  const harder = scalePolicy(policy, penalty);
  assert.deepEqual([harder.counterMin, harder.counterMax], [policy.counterMin * 4, policy.counterMax * 4]);
  assert.equal(scalePolicy(probabilistic, penalty).cost, probabilistic.cost * 4);
  // Capped at maxCost / cost (16x) whatever the penalty.
  await abuse.penalize('192.0.2.30', 1000, 'manual');
  assert.equal(scalePolicy(policy, await abuse.penaltyFor('192.0.2.30')).counterMax, policy.counterMax * 16);
  clock.now += 60_000;
  assert.equal(await abuse.challengePenalty({ ip: '192.0.2.30', headers: {} }), 0);
  assert.equal(scalePolicy(policy, await abuse.penaltyFor('192.0.2.30')), policy);
});

test('challengePenalty notes header combinations: past HEADER_ENTROPY_MAX_ENTRIES each new one costs a point', async () => {
  const { abuse } = setup({ HEADER_ENTROPY_MAX_ENTRIES: 2 });
  const p = [];
  for (let i = 0; i < 5; i++) p.push(await abuse.challengePenalty({ ip: '192.0.2.40', headers: { 'user-agent': `ua${i}` } }));
  assert.deepEqual(p, [0, 0, 1, 2, 3]);
});

test('THREATS_ENABLED=0: probes and smuggling shapes pass untouched, nothing blocks; penalties still work', async () => {
  const { abuse, store } = setup({ THREATS_ENABLED: false, FLOOD_RATE_LIMIT: null });
  assert.equal(abuse.beforeRoute, undefined);
  for (let i = 0; i < 20; i++) await abuse.recordMalicious('192.0.2.50', 'replayed');
  await abuse.assertNotBlocked('192.0.2.50');
  assert.equal(store.calls.hit, 0);
  await abuse.verificationFailed('192.0.2.50', 'INVALID_SOLUTION');
  assert.equal(await abuse.penaltyFor('192.0.2.50'), 1);
});

test('the IP-intelligence plug is reachable from the assembled object', async () => {
  const { abuse } = setup({ THREATS_BOT_LIMIT: parseRateRule('1/1h(expire=1h)') });
  assert.equal(await abuse.reportThreat('192.0.2.60', 'bot'), 'counted');
  assert.equal(await abuse.reportThreat('192.0.2.60', 'bot'), 'marked');
  assert.equal(await abuse.penaltyFor('192.0.2.60'), 4);
  assert.equal(await abuse.reportThreat('192.0.2.60', 'tor'), 'ignored');
});

test('with the shared-memory store the verify gates answer on the calling thread, with the same values', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { openSharedMemoryStore } = await import('../../src/store/shared-memory-store.js');
  const dir = mkdtempSync(join(tmpdir(), 'palisade-abuse-sync-'));
  const store = openSharedMemoryStore(join(dir, 'state'), { capacity: 4096 });
  try {
    const { logger } = captureLogger();
    const metrics = createMetrics({ defaultMetrics: false });
    const abuse = createAbuseProtection(CONFIG, { store, logger, registry: metrics.registry });
    const clean = '192.0.2.10';
    const bad = '192.0.2.11';
    // A clean client: no Promise anywhere.
    assert.equal(abuse.assertNotBlocked(clean), undefined);
    assert.equal(abuse.penaltyFor(clean), 0);
    assert.deepEqual(abuse.assess({ req: { ip: clean }, penalty: 0 }), { score: 0, reasons: [] });
    // Two failed verifications (1 point and 1 failure each): the same figures as through the Promise API.
    await abuse.verificationFailed(clean, 'INVALID_SOLUTION');
    await abuse.verificationFailed(clean, 'INVALID_SOLUTION');
    assert.equal(abuse.penaltyFor(clean), await abuse.penalties.score(clean));
    assert.equal(abuse.penaltyFor(clean), 2);
    const assessed = abuse.assess({ req: { ip: clean }, penalty: 2 });
    assert.ok(!(assessed instanceof Promise));
    assert.deepEqual(assessed.reasons, ['penalty', 'failed_attempts']);
    assert.equal(assessed.score, 1.28); // x = 2/4 + 2/2 = 1.5; 3x/(x+2) = 1.2857…, two decimals down
    assert.equal(await abuse.penalties.failedAttempts(clean), 2);
    // A malicious mark: IP_BLOCKED thrown at once, and the mark's raise in the penalty.
    for (let i = 0; i < 11; i++) await abuse.recordMalicious(bad, 'replayed');
    assert.throws(() => abuse.assertNotBlocked(bad), { code: 'IP_BLOCKED', statusCode: 403 });
    assert.equal(abuse.penaltyFor(bad), (await abuse.penalties.score(bad)) + 16);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
