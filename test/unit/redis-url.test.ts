// REDIS_URL's forms as the state store reads them (src/store/redis-url.ts), and the cluster slot
// the store groups batched keys by (src/store/redis-client.ts; checked against CLUSTER KEYSLOT of a
// real cluster in integration/redis-cluster).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keySlot } from '../../src/store/redis-client.js';
import { defaultClaimReplicas, parseRedisUrl } from '../../src/store/redis-url.js';

test('one server: the URL as it is, for ioredis', () => {
  assert.deepEqual(parseRedisUrl(' rediss://u:p@host:6380/2 '), { kind: 'server', url: 'rediss://u:p@host:6380/2' });
});

test('a cluster: seed nodes with default ports, IPv6 in brackets, decoded credentials, TLS by scheme', () => {
  assert.deepEqual(parseRedisUrl('redis+cluster://a:7000,b,[::1]:7002'), {
    kind: 'cluster', nodes: [{ host: 'a', port: 7000 }, { host: 'b', port: 6379 }, { host: '::1', port: 7002 }], tls: false,
  });
  assert.deepEqual(parseRedisUrl('rediss+cluster://admin:p%40ss%3Aw@a:7000'), {
    kind: 'cluster', nodes: [{ host: 'a', port: 7000 }], tls: true, username: 'admin', password: 'p@ss:w',
  });
  assert.deepEqual(parseRedisUrl('redis+cluster://:only-pw@a:7000'), { kind: 'cluster', nodes: [{ host: 'a', port: 7000 }], tls: false, password: 'only-pw' });
});

test('a sentinel master: sentinels (default port 26379), master name, database', () => {
  assert.deepEqual(parseRedisUrl('redis+sentinel://s1,s2:26380/mymaster'), {
    kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26380 }], masterName: 'mymaster', db: 0, tls: false,
  });
  assert.deepEqual(parseRedisUrl('rediss+sentinel://u:p@s1:26379/cache-1/4'), {
    kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }], masterName: 'cache-1', db: 4, tls: true, username: 'u', password: 'p',
  });
});

test('bad forms are errors naming the part', () => {
  const message = (url: string) => (parseRedisUrl(url) as Error).message;
  assert.equal(message('redis+sentinel://s1/my master'), 'REDIS_URL: redis+sentinel:// needs the master name after the hosts (redis+sentinel://host:26379,host:26379/mymaster)');
  assert.equal(message('redis+sentinel://s1/m/0/x'), 'REDIS_URL: after the hosts only /master-name and an optional /database number');
  assert.equal(message('redis+cluster://a:0'), 'REDIS_URL: port 0 is out of range');
  assert.equal(message('redis+cluster://a b:1'), 'REDIS_URL: "a b:1" is not host:port (IPv6 addresses go in brackets: [::1]:6379)');
  assert.equal(message(`redis+cluster://${Array.from({ length: 65 }, (_, i) => `h${i}:7000`).join(',')}`), 'REDIS_URL: at most 64 hosts');
  assert.equal(message('unix:///tmp/redis.sock').startsWith('REDIS_URL must start with'), true);
});

test('REDIS_CLAIM_REPLICAS auto: 1 where a failover promotes a replica, 0 for one server', () => {
  assert.equal(defaultClaimReplicas('redis+cluster://a:7000'), 1);
  assert.equal(defaultClaimReplicas('redis+sentinel://s1/mymaster'), 1);
  assert.equal(defaultClaimReplicas('redis://a:6379'), 0);
});

test('keySlot: CRC16 modulo 16384 (the values of the Redis Cluster specification), over the hash tag when there is one', () => {
  assert.equal(keySlot('123456789'), 0x31c3 % 16384); // the spec's CRC16 check value
  assert.equal(keySlot('foo'), 12182);
  assert.equal(keySlot('{user1000}.following'), keySlot('user1000'));
  assert.equal(keySlot('palisade:c:{abc}'), keySlot('palisade:r60000:{abc}'));
  assert.notEqual(keySlot('foo{}{bar}'), keySlot('bar'), 'an empty tag is no tag: the whole key is hashed');
  assert.equal(keySlot('foo{{bar}}zap'), keySlot('{bar'));
  assert.equal(keySlot('héllo'), 11061, 'UTF-8 bytes');
  assert.equal(keySlot('foo{}{bar}'), 8363, 'CLUSTER KEYSLOT of Redis 7.0');
});
