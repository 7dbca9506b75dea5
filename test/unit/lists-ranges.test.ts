// Threat-list parsing and the range index: CIDR edges for IPv4 and IPv6 (first and last address
// listed, one below and one above not), /0 refused, bad lines skipped and counted, IPv4-mapped IPv6
// in lists and in lookups, overlapping and adjacent ranges merged.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { countListLines, parseIpRanges } from '../../src/lists/ip-ranges.js';
import { addressKey, buildRangeArrays, newAddressKey, RangeSet } from '../../src/lists/range-set.js';

function setOf(text: string): RangeSet {
  return new RangeSet(buildRangeArrays(parseIpRanges(text)));
}

function has(set: RangeSet, ip: string): boolean {
  const k = addressKey(ip, newAddressKey());
  if (k.family === 0) return false;
  return k.family === 4 ? set.hasV4(k.v4) : set.hasV6(k.words);
}

describe('threat list parsing', () => {
  test('comments, blank lines, bad lines and /0', () => {
    const text = [
      '# FireHOL-style header', '', '  203.0.113.0/24  ', '198.51.100.7 # trailing comment', '\t',
      'not-an-ip', '1.2.3.256', '10.0.0.0/33', '0.0.0.0/0', '::/0', '::ffff:0.0.0.0/96', '2001:db8::/32', '01.2.3.4', '1.2.3.4/',
    ].join('\n');
    const parsed = parseIpRanges(text);
    assert.equal(parsed.entries, 3);
    assert.equal(parsed.bad, 8);
    assert.equal(countListLines(text), 11);
    const set = setOf(text);
    assert.equal(has(set, '8.8.8.8'), false, '/0 must not list everything');
    assert.equal(has(set, '2001:4860::1'), false, '::/0 must not list everything');
  });

  test('IPv4 CIDR edges', () => {
    const set = setOf('203.0.113.0/24\n198.51.100.7\n10.1.2.3/16\n');
    assert.equal(has(set, '203.0.113.0'), true);
    assert.equal(has(set, '203.0.113.255'), true);
    assert.equal(has(set, '203.0.112.255'), false);
    assert.equal(has(set, '203.0.114.0'), false);
    assert.equal(has(set, '198.51.100.7'), true);
    assert.equal(has(set, '198.51.100.6'), false);
    assert.equal(has(set, '198.51.100.8'), false);
    // Host bits set: the network is listed.
    assert.equal(has(set, '10.1.0.0'), true);
    assert.equal(has(set, '10.1.255.255'), true);
    assert.equal(has(set, '10.2.0.0'), false);
    assert.equal(has(set, '0.0.0.0'), false);
    assert.equal(has(set, '255.255.255.255'), false);
  });

  test('IPv6 CIDR edges and single addresses', () => {
    const set = setOf('2001:db8:1::/48\n2001:db8:ffff::1\nfe80::/10\n');
    assert.equal(has(set, '2001:db8:1::'), true);
    assert.equal(has(set, '2001:db8:1:ffff:ffff:ffff:ffff:ffff'), true);
    assert.equal(has(set, '2001:db8:0:ffff:ffff:ffff:ffff:ffff'), false);
    assert.equal(has(set, '2001:db8:2::'), false);
    assert.equal(has(set, '2001:db8:ffff::1'), true);
    assert.equal(has(set, '2001:db8:ffff::2'), false);
    assert.equal(has(set, '2001:db8:ffff::0'), false);
    assert.equal(has(set, 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), true);
    assert.equal(has(set, 'fec0::'), false);
    assert.equal(has(set, '[2001:db8:1::5]'), true);
  });

  test('IPv4-mapped IPv6 in a list and in a lookup', () => {
    const set = setOf('::ffff:192.0.2.0/120\n198.51.100.0/24\n');
    assert.equal(has(set, '192.0.2.77'), true);
    assert.equal(has(set, '192.0.3.0'), false);
    assert.equal(has(set, '::ffff:198.51.100.9'), true);
    assert.equal(has(set, '::ffff:c633:6409'), true);
    assert.equal(has(set, '::ffff:198.51.101.0'), false);
  });

  test('overlapping and adjacent ranges merge; lookups agree with a linear scan', () => {
    const set = setOf('10.0.0.0/24\n10.0.1.0/24\n10.0.0.128/25\n10.0.0.5\n2001:db8::/64\n2001:db8:0:1::/64\n2001:db8::5\n');
    assert.equal(set.size, 2);
    assert.equal(has(set, '10.0.1.255'), true);
    assert.equal(has(set, '2001:db8:0:1:ffff:ffff:ffff:ffff'), true);
    assert.equal(has(set, '2001:db8:0:2::'), false);
    // Random ranges against a brute-force check.
    const lines: string[] = [];
    const ranges: [number, number][] = [];
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0);
    for (let i = 0; i < 2000; i++) {
      const bits = 8 + (rnd() % 25);
      const size = 2 ** (32 - bits);
      const start = Math.floor(rnd() / size) * size;
      ranges.push([start, start + size - 1]);
      lines.push(`${start >>> 24}.${(start >>> 16) & 255}.${(start >>> 8) & 255}.${start & 255}/${bits}`);
    }
    const big = setOf(lines.join('\n'));
    for (let i = 0; i < 5000; i++) {
      const ip = rnd();
      const expected = ranges.some(([a, b]) => ip >= a && ip <= b);
      assert.equal(big.hasV4(ip), expected, `ip ${ip}`);
    }
  });
});
