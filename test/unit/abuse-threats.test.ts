// Threat detection (src/abuse/threats.ts): probe and malicious counters, marks for `expire`, the
// "IP marked" log line, blocking, escalation, the IP-intelligence plug, THREATS_ENABLED=0.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { createAbuseMetrics } from '../../src/abuse/metrics.js';
import { createPenalties } from '../../src/abuse/penalty.js';
import { createThreats, type ThreatOptions, type ThreatRules } from '../../src/abuse/threats.js';
import { parseRateRule } from '../../src/parse.js';
import { captureLogger, MemoryStore } from '../helpers/memory-store.js';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const H48 = 48 * 3_600_000;
const DEFAULT_RULES: ThreatRules = {
  probe: parseRateRule('2/5m(expire=48h)'), malicious: parseRateRule('10/5m(expire=48h)'), bot: null, proxy: null, tor: null,
};

function setup(rules: Partial<ThreatRules> = {}, enabled = true, options: ThreatOptions = {}) {
  const clock = { now: T0 };
  const now = () => clock.now;
  const store = new MemoryStore({ now });
  const registry = new Registry();
  const metrics = createAbuseMetrics(registry);
  const { logger, records } = captureLogger();
  const penalties = createPenalties({ store, logger, metrics }, { now });
  const threats = createThreats({ store, enabled, rules: { ...DEFAULT_RULES, ...rules }, penalties, logger, metrics }, { now, ...options });
  const marks = () => records.filter((r) => r.msg === 'IP marked');
  const count = async (name: string, label: string, value: string) =>
    (await registry.getSingleMetric(name)!.get()).values.find((v) => v.labels[label] === value)?.value ?? 0;
  return { clock, store, records, marks, count, penalties, threats };
}

test('probe: the third probe within 5 minutes marks the IP for 48 h; one log line with the anonymised IP', async () => {
  const { threats, clock, marks, count, penalties } = setup({}, true, { escalateProbes: false });
  assert.equal(await threats.recordProbe('203.0.113.77'), 'counted');
  assert.equal(await threats.recordProbe('203.0.113.77'), 'counted');
  assert.equal(await threats.isMarked('203.0.113.77', 'probe'), false);
  assert.equal(await threats.recordProbe('203.0.113.77'), 'marked');
  assert.equal(await threats.recordProbe('203.0.113.77'), 'limit');
  assert.equal(await threats.isMarked('203.0.113.77', 'probe'), true);
  assert.equal(marks().length, 1);
  assert.deepEqual(
    [marks()[0]!.kind, marks()[0]!.ip, marks()[0]!.until, marks()[0]!.level],
    ['probe', '203.0.113.0', new Date(T0 + H48).toISOString(), 40],
  );
  assert.equal(await count('palisade_ip_marked_total', 'kind', 'probe'), 1);
  assert.equal(await count('palisade_threat_events_total', 'kind', 'probe'), 4);
  assert.equal(await penalties.score('203.0.113.77'), 4, 'one point per probe');
  assert.deepEqual(await threats.standing('203.0.113.77'), { blocked: false, markPenalty: 8 });
  assert.equal(await threats.isBlocked('203.0.113.77'), false, 'a probe mark alone does not block');
  assert.equal(await threats.isMarked('203.0.113.78', 'probe'), false, 'another IP is unaffected');
  clock.now = T0 + H48 - 1;
  assert.equal(await threats.isMarked('203.0.113.77', 'probe'), true);
  clock.now = T0 + H48;
  assert.equal(await threats.isMarked('203.0.113.77', 'probe'), false, 'the mark expires after `expire`');
  assert.deepEqual(await threats.standing('203.0.113.77'), { blocked: false, markPenalty: 0 });
});

test('malicious: the eleventh event blocks the IP; reasons are counted; events extend the mark', async () => {
  const { threats, clock, marks, count } = setup();
  for (let i = 0; i < 10; i++) assert.equal(await threats.recordMalicious('2001:db8:aa:1::5', 'replayed'), 'counted');
  assert.equal(await threats.isBlocked('2001:db8:aa:1::5'), false);
  assert.equal(await threats.recordMalicious('2001:db8:aa:1::5', 'invalid_signature'), 'marked');
  assert.equal(await threats.isBlocked('2001:db8:aa:1::5'), true);
  assert.equal(await threats.isBlocked('2001:db8:aa:1:ffff::1'), true, 'the whole /64');
  assert.equal(await threats.isBlocked('2001:db8:aa:2::5'), false);
  assert.deepEqual(await threats.standing('2001:db8:aa:1::5'), { blocked: true, markPenalty: 16 });
  assert.equal(marks()[0]!.ip, '2001:db8:aa::');
  assert.equal(await count('palisade_malicious_events_total', 'reason', 'replayed'), 10);
  assert.equal(await count('palisade_malicious_events_total', 'reason', 'invalid_signature'), 1);
  // A later event (the counter key is held for 48 h) renews the mark to 48 h after it.
  clock.now = T0 + 10 * 3_600_000;
  assert.equal(await threats.recordMalicious('2001:db8:aa:1::5', 'tampered'), 'limit');
  clock.now = T0 + H48 + 1;
  assert.equal(await threats.isBlocked('2001:db8:aa:1::5'), true);
  clock.now = T0 + 10 * 3_600_000 + H48;
  assert.equal(await threats.isBlocked('2001:db8:aa:1::5'), false);
  assert.equal(marks().length, 1, 'one log line per new mark');
});

test('escalation: probing on past the probe limit counts as malicious and ends in a block', async () => {
  const { threats, count } = setup();
  let n = 0;
  while (!(await threats.isBlocked('198.51.100.9')) && n < 100) {
    await threats.recordProbe('198.51.100.9');
    n++;
  }
  // 2 probes within the limit, then 11 malicious events (probes 3..13) pass the malicious limit.
  assert.equal(n, 13);
  assert.equal(await count('palisade_malicious_events_total', 'reason', 'probing'), 11);
  assert.deepEqual(await threats.standing('198.51.100.9'), { blocked: true, markPenalty: 24 });
});

test('a rule without expire marks until its window ends', async () => {
  const { threats, clock } = setup({ probe: parseRateRule('1/1m') }, true, { escalateProbes: false });
  clock.now = T0 + 20_000;
  await threats.recordProbe('192.0.2.1');
  assert.equal(await threats.recordProbe('192.0.2.1'), 'marked');
  clock.now = T0 + 59_999;
  assert.equal(await threats.isMarked('192.0.2.1', 'probe'), true);
  clock.now = T0 + 60_000;
  assert.equal(await threats.isMarked('192.0.2.1', 'probe'), false);
});

test('reportThreat: the IP-intelligence plug applies THREATS_BOT/PROXY/TOR rules; no rule, no effect', async () => {
  const { threats, store } = setup({ tor: parseRateRule('1/1h(expire=24h)'), proxy: parseRateRule('3/1h(expire=1h)') });
  assert.equal(await threats.reportThreat('192.0.2.50', 'bot'), 'ignored');
  assert.equal(await threats.isMarked('192.0.2.50', 'bot'), false);
  assert.equal(await threats.reportThreat('192.0.2.50', 'tor'), 'counted');
  assert.equal(await threats.reportThreat('192.0.2.50', 'tor'), 'marked');
  assert.equal(await threats.reportThreat('192.0.2.50', 'proxy'), 'counted');
  assert.deepEqual(await threats.standing('192.0.2.50'), { blocked: false, markPenalty: 4 });
  await assert.rejects(threats.reportThreat('192.0.2.50', 'malicious' as never), TypeError);
  // standing reads only the kinds that have a rule: probe, malicious, proxy, tor.
  const before = store.calls.penalty;
  await threats.standing('192.0.2.51');
  assert.equal(store.calls.penalty - before, 4);
});

test('THREATS_ENABLED=0: every call is a no-op that never touches the store', async () => {
  const { threats, store } = setup({ bot: parseRateRule('1/1m') }, false);
  assert.equal(threats.enabled, false);
  for (let i = 0; i < 20; i++) {
    assert.equal(await threats.recordProbe('192.0.2.1'), 'ignored');
    assert.equal(await threats.recordMalicious('192.0.2.1', 'smuggling'), 'ignored');
    assert.equal(await threats.reportThreat('192.0.2.1', 'bot'), 'ignored');
  }
  assert.equal(await threats.isBlocked('192.0.2.1'), false);
  assert.equal(await threats.isMarked('192.0.2.1', 'probe'), false);
  assert.deepEqual(await threats.standing('192.0.2.1'), { blocked: false, markPenalty: 0 });
  assert.deepEqual(store.calls, { claimOnce: 0, seenOnce: 0, hit: 0, peek: 0, addPenalty: 0, penalty: 0, countUpTo: 0 });
});

test('no malicious rule: nothing blocks, nothing is counted', async () => {
  const { threats, store } = setup({ malicious: null });
  assert.equal(await threats.recordMalicious('192.0.2.1', 'replayed'), 'ignored');
  assert.equal(await threats.isBlocked('192.0.2.1'), false);
  assert.equal(store.calls.hit + store.calls.penalty, 0);
});

test('store failures: events are dropped, marks read as absent, nothing rejects; bugs are logged', async () => {
  const { threats, store, records } = setup();
  store.failWith = 'STORE_UNAVAILABLE';
  assert.equal(await threats.recordProbe('192.0.2.1'), 'ignored');
  assert.equal(await threats.recordMalicious('192.0.2.1', 'smuggling'), 'ignored');
  assert.equal(await threats.isBlocked('192.0.2.1'), false);
  assert.deepEqual(await threats.standing('192.0.2.1'), { blocked: false, markPenalty: 0 });
  store.failWith = null;
  store.hit = () => Promise.reject(new TypeError('bug'));
  assert.equal(await threats.recordProbe('192.0.2.1'), 'ignored');
  assert.equal(records.filter((r) => r.msg === 'threat recording failed').length, 1);
});

test('concurrent events: exactly one of them makes the mark', async () => {
  const { threats, marks } = setup({ malicious: parseRateRule('1/1m(expire=1h)') });
  const outcomes = await Promise.all(Array.from({ length: 20 }, () => threats.recordMalicious('192.0.2.99', 'replayed')));
  assert.equal(outcomes.filter((o) => o === 'marked').length, 1);
  assert.equal(outcomes.filter((o) => o === 'counted').length, 1);
  assert.equal(marks().length, 1);
});

test('a threat rule the stores cannot hold is refused at start-up', () => {
  assert.throws(() => setup({ probe: { ...parseRateRule('10/1m'), count: 99_999_999 } }), RangeError);
});
