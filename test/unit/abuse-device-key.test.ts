// The header-entropy device key (src/abuse/device-key.ts): a known answer computed with node:crypto,
// which headers count and which do not, the IPv6 /64, and the daily salt rotation.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { createDeviceKeys, DEVICE_HEADERS, utcDate } from '../../src/abuse/device-key.js';

const SALT = 'a-hashing-salt-of-sufficient-length';
const NOON = Date.UTC(2025, 5, 30, 12, 0, 0);
const BROWSER = {
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/128.0 Safari/537.36', 'accept-language': 'en-GB,en;q=0.9',
  'accept-encoding': 'gzip, deflate, br, zstd', 'sec-ch-ua': '"Chromium";v="128"', 'sec-ch-ua-mobile': '?0',
  'sec-ch-ua-platform': '"Linux"', dnt: '1', 'sec-gpc': '1',
};

test('known answer: HMAC-SHA-256(HMAC-SHA-256(salt, "device-key:" + UTC date), ip key + headers)', () => {
  const keys = createDeviceKeys(SALT, { now: () => NOON });
  const dayKey = createHmac('sha256', SALT).update('device-key:2025-06-30').digest();
  const material = ['ip:192.0.2.10', ...DEVICE_HEADERS.map((h) => BROWSER[h])].join('\n');
  const expected = createHmac('sha256', dayKey).update(material).digest('hex');
  assert.equal(keys.key('192.0.2.10', BROWSER), expected);
  assert.match(expected, /^[0-9a-f]{64}$/);
  assert.deepEqual([...DEVICE_HEADERS], [
    'user-agent', 'accept-language', 'accept-encoding', 'sec-ch-ua', 'sec-ch-ua-mobile', 'sec-ch-ua-platform', 'dnt', 'sec-gpc',
  ]);
});

test('every stable header changes the key; per-request and proxy headers do not', () => {
  const keys = createDeviceKeys(SALT, { now: () => NOON });
  const base = keys.key('192.0.2.10', BROWSER);
  for (const name of DEVICE_HEADERS) {
    assert.notEqual(keys.key('192.0.2.10', { ...BROWSER, [name]: `${BROWSER[name]}x` }), base, name);
    const without: Record<string, string> = { ...BROWSER };
    delete without[name];
    assert.notEqual(keys.key('192.0.2.10', without), base, `${name} missing`);
  }
  for (const name of ['accept', 'cookie', 'referer', 'origin', 'x-forwarded-for', 'x-real-ip', 'authorization', 'sec-fetch-site', 'content-type']) {
    assert.equal(keys.key('192.0.2.10', { ...BROWSER, [name]: 'anything' }), base, name);
  }
  // Moving a value to another header is another device (values are kept in their positions).
  assert.notEqual(keys.key('192.0.2.10', { 'user-agent': 'a' }), keys.key('192.0.2.10', { 'accept-language': 'a' }));
});

test('the IP is part of the key, aggregated to the IPv6 /64', () => {
  const keys = createDeviceKeys(SALT, { now: () => NOON });
  assert.notEqual(keys.key('192.0.2.10', BROWSER), keys.key('192.0.2.11', BROWSER));
  assert.equal(keys.key('2001:db8:5:6::1', BROWSER), keys.key('2001:db8:5:6:aaaa::9', BROWSER));
  assert.notEqual(keys.key('2001:db8:5:6::1', BROWSER), keys.key('2001:db8:5:7::1', BROWSER));
});

test('the salt rotates at 00:00 UTC: same key all day, another the next day; another salt another key', () => {
  let now = Date.UTC(2025, 5, 30, 0, 0, 0);
  const keys = createDeviceKeys(SALT, { now: () => now });
  const first = keys.key('192.0.2.10', BROWSER);
  now = Date.UTC(2025, 5, 30, 23, 59, 59, 999);
  assert.equal(keys.key('192.0.2.10', BROWSER), first);
  now = Date.UTC(2025, 6, 1, 0, 0, 0);
  const next = keys.key('192.0.2.10', BROWSER);
  assert.notEqual(next, first);
  assert.equal(createDeviceKeys(SALT, { now: () => now }).key('192.0.2.10', BROWSER), next, 'every worker agrees');
  assert.notEqual(createDeviceKeys(`${SALT}!`, { now: () => now }).key('192.0.2.10', BROWSER), next);
  assert.equal(utcDate(0), '1970-01-01');
});

test('hostile input: oversized values are cut at 1 KiB, odd characters hash, a short salt is refused', () => {
  const keys = createDeviceKeys(SALT, { now: () => NOON });
  const long = keys.key('192.0.2.10', { 'user-agent': 'x'.repeat(16_000) });
  assert.equal(long, keys.key('192.0.2.10', { 'user-agent': `${'x'.repeat(1024)}yyy` }));
  assert.match(keys.key('192.0.2.10', { 'user-agent': '\u0000\uD800\uFFFF' }), /^[0-9a-f]{64}$/);
  assert.match(keys.key('', {}), /^[0-9a-f]{64}$/);
  assert.throws(() => createDeviceKeys('short'), RangeError);
});
