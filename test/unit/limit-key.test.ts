import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRateRule } from '../../src/parse.js';
import { ipKey, limitKey } from '../../src/store/limit-key.js';

const byIp = parseRateRule('10/1m');

test('IPv4 addresses key by the full address', () => {
  assert.equal(limitKey(byIp, { ip: '203.0.113.7' }), 'ip:203.0.113.7');
  assert.equal(limitKey(byIp, { ip: '203.0.113.8' }), 'ip:203.0.113.8');
});

test('IPv4-mapped IPv6 counts as the IPv4 address, in every textual form', () => {
  for (const ip of ['::ffff:203.0.113.7', '::FFFF:203.0.113.7', '0:0:0:0:0:ffff:203.0.113.7', '::ffff:cb00:7107', '[::ffff:203.0.113.7]']) {
    assert.equal(ipKey(ip), 'ip:203.0.113.7', ip);
  }
});

test('IPv6 addresses aggregate to their /64, whatever the textual form', () => {
  const forms = [
    '2001:db8::1', '2001:0db8:0:0::2', '2001:DB8:0000:0000:ffff:ffff:ffff:ffff', '2001:db8:0:0:1::',
    '2001:db8::1%eth0', '[2001:db8::5]', '2001:db8::1.2.3.4',
  ];
  for (const ip of forms) assert.equal(ipKey(ip), 'ip:2001:db8:0:0::/64', ip);
  assert.equal(ipKey('2001:db8:0:1::1'), 'ip:2001:db8:0:1::/64', 'the next /64 is another key');
  assert.equal(ipKey('::1'), 'ip:0:0:0:0::/64');
  assert.equal(ipKey('::'), 'ip:0:0:0:0::/64');
  assert.equal(ipKey('fe80::1%25lo'), 'ip:fe80:0:0:0::/64');
  assert.equal(ipKey('::1.2.3.4'), 'ip:0:0:0:0::/64', 'IPv4-compatible (deprecated) is not IPv4-mapped');
});

test('strings that are no IP address are used as they are', () => {
  assert.equal(ipKey(''), 'ip:');
  assert.equal(ipKey('unknown'), 'ip:unknown');
  assert.equal(ipKey('1:2:3'), 'ip:1:2:3');
  assert.equal(ipKey('2001:db8::1::2'), 'ip:2001:db8::1::2');
  assert.equal(ipKey('[::1'), 'ip:[::1');
});

test('apiKey, account and device keys; a missing component falls back to the ip', () => {
  const ctx = { ip: '198.51.100.1', apiKey: 'key_abc', account: 'acc_1', device: 'dev-9' };
  assert.equal(limitKey(parseRateRule('1/1m(key=apiKey)'), ctx), 'key:key_abc');
  assert.equal(limitKey(parseRateRule('1/1m(key=account)'), ctx), 'acct:acc_1');
  assert.equal(limitKey(parseRateRule('1/1m(key=device)'), ctx), 'dev:dev-9');
  assert.equal(limitKey(parseRateRule('1/1m(key=ip)'), ctx), 'ip:198.51.100.1');
  const bare = { ip: '2001:db8::7' };
  assert.equal(limitKey(parseRateRule('1/1m(key=apiKey)'), bare), 'ip:2001:db8:0:0::/64');
  assert.equal(limitKey(parseRateRule('1/1m(key=account)'), { ...bare, account: '' }), 'ip:2001:db8:0:0::/64');
  assert.equal(limitKey(parseRateRule('1/1m(key=device)'), { ...bare, device: undefined }), 'ip:2001:db8:0:0::/64');
});

test('kinds cannot impersonate each other', () => {
  // an API key that looks like an ip key still carries its own prefix
  assert.equal(limitKey(parseRateRule('1/1m(key=apiKey)'), { ip: '1.2.3.4', apiKey: 'ip:1.2.3.4' }), 'key:ip:1.2.3.4');
  assert.notEqual(limitKey(parseRateRule('1/1m(key=account)'), { ip: '1.2.3.4', account: 'x' }),
    limitKey(parseRateRule('1/1m(key=device)'), { ip: '1.2.3.4', device: 'x' }));
});
