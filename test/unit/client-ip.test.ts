import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNKNOWN_CLIENT, parseForwardedAddress, publicTrustedRanges, resolveClientIp } from '../../src/http/client-ip.js';
import { anonymizeIp } from '../../src/ip.js';
import { ipMatches, parseCidrList } from '../../src/parse.js';
import { ipKey } from '../../src/store/limit-key.js';

const PROXY = '127.0.0.1';
const trusted = { trustedProxies: parseCidrList('127.0.0.1/32,10.0.0.0/8'), ipHeadersSecret: '' };
const viaProxy = (xff: string) => resolveClientIp(PROXY, { 'x-forwarded-for': xff }, trusted);

// Each of these once resolved to the proxy's own address (127.0.0.1), which the monitoring
// whitelist admits and whose flood bucket every client of the proxy shares.
const MALFORMED = ['unknown', '203.0.113.9%eth0', '0203.0.113.9', 'fe80::1%eth0', '[2001:db8::1', '[2001:db8::1]x',
  '[203.0.113.9]', '203.0.113.9:', '203.0.113.9:65536', '203.0.113.9:44a', '[2001:db8::1]:', 'host.example', '_hidden', ''];

test('a malformed right-most entry makes the client unknown, never the proxy', () => {
  for (const entry of MALFORMED) assert.equal(viaProxy(entry), UNKNOWN_CLIENT, JSON.stringify(entry));
});

test('a malformed entry reached past trusted hops makes the client unknown, not the last trusted hop', () => {
  assert.equal(viaProxy('unknown, 10.1.1.1'), UNKNOWN_CLIENT);
  assert.equal(viaProxy('203.0.113.9%eth0, 10.1.1.1:80'), UNKNOWN_CLIENT);
  // Entries left of the client are never read.
  assert.equal(viaProxy('unknown, 203.0.113.7'), '203.0.113.7');
});

test('the port forms proxies write resolve to the address', () => {
  assert.equal(viaProxy('203.0.113.9:4431'), '203.0.113.9');
  assert.equal(viaProxy('[2001:db8::1]'), '2001:db8::1');
  assert.equal(viaProxy('[2001:DB8::1]:4431'), '2001:db8::1');
  assert.equal(viaProxy('[::ffff:203.0.113.9]:80'), '203.0.113.9');
  assert.equal(viaProxy('::FFFF:203.0.113.9'), '203.0.113.9');
  assert.equal(viaProxy('198.51.100.1, 203.0.113.9:1, 10.1.1.1:65535'), '203.0.113.9');
  assert.equal(viaProxy('203.0.113.9 , , '), '203.0.113.9', 'empty list elements carry nothing');
});

test('parseForwardedAddress: bare addresses, ports and brackets', () => {
  assert.equal(parseForwardedAddress('203.0.113.9'), '203.0.113.9');
  assert.equal(parseForwardedAddress('2001:db8::1'), '2001:db8::1');
  assert.equal(parseForwardedAddress('203.0.113.9:0'), '203.0.113.9');
  assert.equal(parseForwardedAddress('[::1]:8080'), '::1');
  for (const entry of MALFORMED) assert.equal(parseForwardedAddress(entry), null, JSON.stringify(entry));
});

test('without a trusted proxy, or without the header, the socket address stands', () => {
  assert.equal(resolveClientIp('198.51.100.4', { 'x-forwarded-for': 'unknown' }, trusted), '198.51.100.4');
  assert.equal(resolveClientIp(PROXY, {}, trusted), PROXY);
});

test('IP headers behind IP_HEADERS_SECRET: an unreadable value is skipped', () => {
  const opts = { trustedProxies: parseCidrList(''), ipHeadersSecret: 'proxy-secret-123' };
  const h = { 'x-ip-headers-secret': 'proxy-secret-123' };
  assert.equal(resolveClientIp(PROXY, { ...h, 'cf-connecting-ip': 'fe80::1%eth0', 'x-real-ip': '203.0.113.5' }, opts), '203.0.113.5');
  assert.equal(resolveClientIp(PROXY, { ...h, 'x-real-ip': '0203.0.113.5' }, opts), PROXY);
});

test('the unknown client matches no CIDR, has a key of its own and survives anonymisation', () => {
  for (const cidrs of ['0.0.0.0/0', '::/0', '127.0.0.1/32']) assert.equal(ipMatches(parseCidrList(cidrs), UNKNOWN_CLIENT), false, cidrs);
  assert.equal(ipKey(UNKNOWN_CLIENT), 'ip:unknown');
  assert.notEqual(ipKey(UNKNOWN_CLIENT), ipKey(PROXY));
  assert.equal(anonymizeIp(UNKNOWN_CLIENT), UNKNOWN_CLIENT);
});

test('publicTrustedRanges names the entries that reach public addresses', () => {
  assert.deepEqual(publicTrustedRanges(parseCidrList('0.0.0.0/0, ::/0')), ['0.0.0.0/0', '::/0']);
  assert.deepEqual(publicTrustedRanges(parseCidrList('127.0.0.1/32,10.0.0.0/8,172.16.0.0/12,192.168.1.0/24,100.64.0.0/10')), []);
  assert.deepEqual(publicTrustedRanges(parseCidrList('::1,fd00::/8,fe80::/64,::ffff:10.0.0.0/104,169.254.0.0/16')), []);
  assert.deepEqual(publicTrustedRanges(parseCidrList('10.0.0.0/7, 203.0.113.0/24, 8.8.8.8, 172.0.0.0/8, 2001:db8::/32, fc00::/6')),
    ['10.0.0.0/7', '203.0.113.0/24', '8.8.8.8', '172.0.0.0/8', '2001:db8::/32', 'fc00::/6']);
  assert.deepEqual(publicTrustedRanges(parseCidrList('')), []);
});
