import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ipMatches, parseBoolean, parseCidrList, parseCron, parseDuration, parseRateRule, parseSize,
} from '../../src/parse.js';

test('durations: units, bare numbers in the given unit, garbage refused', () => {
  assert.equal(parseDuration('4h'), 14_400_000);
  assert.equal(parseDuration('30m'), 1_800_000);
  assert.equal(parseDuration('10000'), 10_000);
  assert.equal(parseDuration('3s'), 3000);
  assert.equal(parseDuration('3', 's'), 3000);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('14d'), 1_209_600_000);
  assert.throws(() => parseDuration('4 hours'), /not a duration/);
  assert.throws(() => parseDuration('-1s'), /not a duration/);
  assert.throws(() => parseDuration(''), /not a duration/);
});

test('sizes: binary multiples', () => {
  assert.equal(parseSize('5MB'), 5 * 1024 * 1024);
  assert.equal(parseSize('128MB'), 134_217_728);
  assert.equal(parseSize('20MB'), 20_971_520);
  assert.equal(parseSize('512'), 512);
  assert.equal(parseSize('64kb'), 65_536);
  assert.throws(() => parseSize('5 lots'), /not a size/);
});

test('booleans: 1/0 and words', () => {
  assert.equal(parseBoolean('1'), true);
  assert.equal(parseBoolean('0'), false);
  assert.equal(parseBoolean('true'), true);
  assert.throws(() => parseBoolean('2'), /not a boolean/);
});

test('rate rules: count, window, options', () => {
  assert.deepEqual({ ...parseRateRule('100/1m') }, {
    source: '100/1m', count: 100, windowMs: 60_000, key: 'ip', blockMs: 0, expireMs: 0,
  });
  const audio = parseRateRule('10/5m(key=ip&block=10m)');
  assert.equal(audio.count, 10);
  assert.equal(audio.windowMs, 300_000);
  assert.equal(audio.blockMs, 600_000);
  const threat = parseRateRule('2/5m(expire=48h)');
  assert.equal(threat.expireMs, 172_800_000);
  assert.equal(parseRateRule('5/m').windowMs, 60_000);
  assert.equal(parseRateRule('5/10(key=apiKey)').windowMs, 10_000);
  assert.equal(parseRateRule('5/10(key=apiKey)').key, 'apiKey');
  assert.throws(() => parseRateRule('0/1m'), /out of range/);
  assert.equal(parseRateRule('8388606/1m').count, 8_388_606);
  assert.throws(() => parseRateRule('8388607/1m'), /out of range/);
  assert.throws(() => parseRateRule('10/1m(key=cookie)'), /key must be one of/);
  assert.throws(() => parseRateRule('10/1m(color=red)'), /unknown option/);
  assert.throws(() => parseRateRule('ten per minute'), /not a rate rule/);
});

test('CIDR lists: IPv4, IPv6, mapped addresses, bad entries', () => {
  const list = parseCidrList('10.0.0.0/8, 127.0.0.1/32, ::1/128, fd00::/8, 192.168.1.7');
  assert.equal(ipMatches(list, '10.1.2.3'), true);
  assert.equal(ipMatches(list, '::ffff:10.1.2.3'), true);
  assert.equal(ipMatches(list, '11.1.2.3'), false);
  assert.equal(ipMatches(list, '::1'), true);
  assert.equal(ipMatches(list, 'fd12::5'), true);
  assert.equal(ipMatches(list, 'fe80::1'), false);
  assert.equal(ipMatches(list, '192.168.1.7'), true);
  assert.equal(ipMatches(list, '192.168.1.8'), false);
  assert.equal(ipMatches(list, 'garbage'), false);
  assert.throws(() => parseCidrList('10.0.0.0/33'), /out of range/);
  assert.throws(() => parseCidrList('example.com'), /not an IP/);
  assert.equal(parseCidrList('').empty, true);
});

test('cron strings: five fields, ranges checked', () => {
  assert.equal(parseCron('0 */12 * * *'), '0 */12 * * *');
  assert.equal(parseCron('0  0 * * 1-5'), '0 0 * * 1-5');
  assert.throws(() => parseCron('0 0 * *'), /5 fields/);
  assert.throws(() => parseCron('61 0 * * *'), /out of range/);
  assert.throws(() => parseCron('a b c d e'), /bad minute/);
});
