// Hostnames of keys, free-key hostnames, and the origin of browser requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostMatches, normalizeDnsHostname, normalizeKeyHostname, parseOrigin, requestOrigin } from '../../src/keys/hostnames.js';

test('free-key hostnames must be real DNS names', () => {
  assert.equal(normalizeDnsHostname('Example.COM'), 'example.com');
  assert.equal(normalizeDnsHostname('a-b.c.example.co.uk'), 'a-b.c.example.co.uk');
  assert.equal(normalizeDnsHostname('xn--bcher-kva.example'), 'xn--bcher-kva.example');
  assert.equal(normalizeDnsHostname('bücher.example'), 'xn--bcher-kva.example');
  assert.equal(normalizeDnsHostname(`${'a'.repeat(63)}.com`), `${'a'.repeat(63)}.com`);
  for (const bad of [
    '', 'localhost', 'example', '*.example.com', 'exa*mple.com', '1.2.3.4', '::1', '[::1]', 'example.com.', '.example.com',
    'exa..mple.com', '-a.example.com', 'a-.example.com', 'ex_ample.com', 'example.123', 'example.c', `${'a'.repeat(64)}.com`,
    `${'a.'.repeat(126)}com`, 'example.com/path', 'user@example.com', 'example.com:80', 'exa mple.com', 'example.com\n',
  ]) {
    assert.equal(normalizeDnsHostname(bad), null, JSON.stringify(bad));
  }
  for (const bad of [null, undefined, 42, ['example.com'], { hostname: 'example.com' }]) assert.equal(normalizeDnsHostname(bad), null);
});

test('key hostname entries: names, single labels, wildcards over two labels or more, IP addresses', () => {
  assert.equal(normalizeKeyHostname(' Example.com '), 'example.com');
  assert.equal(normalizeKeyHostname('localhost'), 'localhost');
  assert.equal(normalizeKeyHostname('*.Example.com'), '*.example.com');
  assert.equal(normalizeKeyHostname('127.0.0.1'), '127.0.0.1');
  assert.equal(normalizeKeyHostname('[::1]'), '::1');
  for (const bad of ['', '*', '*.com', '*.*.example.com', 'a.*.example.com', 'exa mple.com', 'http://example.com', 'example.com:443']) {
    assert.equal(normalizeKeyHostname(bad), null, bad);
  }
});

test('matching: exact hosts; *.example.com matches sub-domains at any depth but not the apex', () => {
  const list = ['example.com', '*.example.org'];
  assert.ok(hostMatches(list, 'example.com'));
  assert.ok(!hostMatches(list, 'www.example.com'));
  assert.ok(hostMatches(list, 'www.example.org'));
  assert.ok(hostMatches(list, 'a.b.example.org'));
  assert.ok(!hostMatches(list, 'example.org'));
  assert.ok(!hostMatches(list, 'badexample.org'));
  assert.ok(!hostMatches(list, 'example.org.evil.com'));
  assert.ok(!hostMatches(list, 'example.com.evil.com'));
  assert.ok(!hostMatches([], 'example.com'));
});

test('origin from Origin, else Referer; default ports dropped; bad values give null', () => {
  assert.deepEqual(requestOrigin({ origin: 'https://Example.com' }), { origin: 'https://example.com', host: 'example.com' });
  assert.deepEqual(requestOrigin({ origin: 'https://example.com:443' }), { origin: 'https://example.com', host: 'example.com' });
  assert.deepEqual(requestOrigin({ origin: 'http://example.com:8080' }), { origin: 'http://example.com:8080', host: 'example.com' });
  assert.deepEqual(requestOrigin({ referer: 'https://a.example.com/path?q=1#x' }), { origin: 'https://a.example.com', host: 'a.example.com' });
  assert.deepEqual(requestOrigin({ origin: 'https://o.example', referer: 'https://r.example/' }), { origin: 'https://o.example', host: 'o.example' });
  assert.deepEqual(requestOrigin({ origin: 'null', referer: 'https://r.example/' }), { origin: 'https://r.example', host: 'r.example' });
  assert.deepEqual(requestOrigin({ origin: 'http://[::1]:3000' }), { origin: 'http://[::1]:3000', host: '::1' });
  assert.deepEqual(requestOrigin({ origin: 'https://example.com.' }), { origin: 'https://example.com', host: 'example.com' });
  assert.equal(requestOrigin({}), null);
  assert.equal(requestOrigin({ origin: '' }), null);
  for (const bad of [
    'example.com', 'ftp://example.com', 'https://', 'https://user:pw@example.com', 'https://example.com:99999',
    'https://exa mple.com', 'https://[::1', 'https://[zz]', 'https://example.com:', 'https://example.com:8a', 'javascript://x',
    'https://.example.com', 'https://a..b', `https://${'a'.repeat(3000)}.com`,
  ]) {
    assert.equal(parseOrigin(bad), null, bad);
  }
});
