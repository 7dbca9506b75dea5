// The ip, location and device rules of a classification (src/classifier/network-rules.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeDevice, analyzeIp, analyzeLocation, type CountryLists } from '../../src/classifier/network-rules.js';
import type { IpSignals, UserAgentSignals } from '../../src/intel/intel.js';
import { timeZoneCountries } from '../../src/intel/time-zones.js';

const off = { value: false, source: null };
const on = { value: true, source: 'list' };
const signals = (over: Partial<IpSignals> = {}, flags: Partial<Record<keyof IpSignals['flags'], typeof on>> = {}): IpSignals => ({
  country: 'DE', region: null, city: null, latitude: null, longitude: null, asn: 3320, org: 'Telekom', locationSource: 'test',
  networkSource: 'test', highRiskCountry: false, headersTrusted: false,
  flags: { hosting: off, proxy: off, tor: off, malicious: off, mobile: off, ...flags }, ...over,
});
const none: ReadonlySet<string> = new Set();
const noLists: CountryLists = { expected: null, blocked: null };
const scores = (b: { rules: Readonly<Record<string, { score: number }>> }) => Object.fromEntries(Object.entries(b.rules).map(([k, v]) => [k, v.score]));

test('a clean IP scores 0 and lists every ip rule', () => {
  const b = analyzeIp(signals(), 0, none);
  assert.deepEqual(scores(b), { MALICIOUS_IP: 0, TOR: 0, PROXY: 0, HOSTING: 0, PENALTY: 0 });
  assert.equal(b.score, 0);
  assert.equal(b.asn, 3320);
  assert.equal(b.organization, 'Telekom');
});

test('threat flags and the penalty score by their rules; the penalty in proportion up to 16', () => {
  const b = analyzeIp(signals({}, { tor: on, hosting: on }), 8, none);
  assert.deepEqual(scores(b), { MALICIOUS_IP: 0, TOR: 2, PROXY: 0, HOSTING: 0.5, PENALTY: 1 });
  assert.equal(b.score, 3.5);
  assert.equal(analyzeIp(signals({}, { malicious: on, proxy: on }), 40, none).score, 3 + 1.5 + 2);
});

test('disabled rules are left out of the block and its score', () => {
  const b = analyzeIp(signals({}, { tor: on }), 0, new Set(['TOR']));
  assert.equal(b.rules.TOR, undefined);
  assert.equal(b.score, 0);
});

test('the time zone database maps zones, aliases and nothing for UTC', () => {
  assert.deepEqual(timeZoneCountries('Europe/Berlin'), ['DE']);
  assert.deepEqual(timeZoneCountries('Asia/Calcutta'), ['IN']);
  assert.deepEqual(timeZoneCountries('America/New_York'), ['US']);
  assert.equal(timeZoneCountries('Etc/UTC'), null);
  assert.equal(timeZoneCountries('Mars/Olympus'), null);
  assert.equal(timeZoneCountries('__proto__'), null);
});

test('location: a time zone of another country fires TIME_ZONE_MISMATCH; the same country does not', () => {
  assert.equal(analyzeLocation(signals(), 'Europe/Berlin', noLists, none)!.score, 0);
  const b = analyzeLocation(signals(), 'America/New_York', noLists, none)!;
  assert.deepEqual(scores(b), { BLOCKED_COUNTRY: 0, UNEXPECTED_COUNTRY: 0, HIGH_RISK_COUNTRY: 0, TIME_ZONE_MISMATCH: 0.75 });
  assert.equal(b.countryCode, 'DE');
  assert.equal(b.timeZone, 'America/New_York');
});

test('location: blocked and expected countries from the IP or from every country of the time zone', () => {
  const blocked: CountryLists = { expected: null, blocked: new Set(['RU']) };
  assert.equal(analyzeLocation(signals({ country: 'RU' }), null, blocked, none)!.rules.BLOCKED_COUNTRY!.score, 5);
  assert.equal(analyzeLocation(null, 'Europe/Moscow', blocked, none)!.rules.BLOCKED_COUNTRY!.score, 5);
  assert.equal(analyzeLocation(signals(), null, blocked, none)!.rules.BLOCKED_COUNTRY!.score, 0);
  const expected: CountryLists = { expected: new Set(['DE', 'AT']), blocked: null };
  assert.equal(analyzeLocation(signals({ country: 'FR' }), null, expected, none)!.rules.UNEXPECTED_COUNTRY!.score, 1);
  assert.equal(analyzeLocation(signals(), 'Europe/Vienna', expected, none)!.rules.UNEXPECTED_COUNTRY!.score, 0);
  assert.equal(analyzeLocation(null, 'Asia/Tokyo', expected, none)!.rules.UNEXPECTED_COUNTRY!.score, 1);
});

test('location: a high-risk country; null when nothing locates the sender; the zone names the country without an IP', () => {
  assert.equal(analyzeLocation(signals({ highRiskCountry: true }), null, noLists, none)!.rules.HIGH_RISK_COUNTRY!.score, 0.75);
  assert.equal(analyzeLocation(signals({ country: null }), 'Etc/UTC', noLists, none), null);
  assert.equal(analyzeLocation(null, null, noLists, none), null);
  assert.equal(analyzeLocation(null, 'Europe/Paris', noLists, none)!.countryCode, 'FR');
});

const ua = (over: Partial<UserAgentSignals>): UserAgentSignals => ({
  kind: 'browser', browser: 'chrome', device: 'desktop', commonness: 'unknown', share: null, rank: null, ...over,
});

test('device: bots, tools, a missing and an uncommon User-Agent', () => {
  assert.equal(analyzeDevice(ua({}), none).score, 0);
  assert.equal(analyzeDevice(ua({ commonness: 'common' }), none).score, 0);
  assert.equal(analyzeDevice(ua({ commonness: 'uncommon' }), none).rules.UNCOMMON_USER_AGENT!.score, 0.5);
  assert.equal(analyzeDevice(ua({ kind: 'bot', device: 'bot' }), none).rules.BOT_USER_AGENT!.score, 3);
  assert.equal(analyzeDevice(ua({ kind: 'other', browser: null }), none).rules.NON_BROWSER!.score, 1);
  const missing = analyzeDevice(ua({ kind: 'none', browser: null, device: 'unknown' }), none);
  assert.equal(missing.score, 1.5);
  assert.equal(missing.kind, 'none');
});
