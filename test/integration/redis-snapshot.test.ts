// SNAPSHOTS_REDIS_SCHEDULE's snapshot of the state in Redis: every key under the prefix with its
// value and expiry; flushed, restored, and found again with its type, value and expiry, while keys
// whose expiry passed meanwhile stay gone and keys of other prefixes are left out; through
// `npm run cli -- restore FILE` too. Without REDIS_URL the schedule is refused.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { snapshotProblems } from '../../src/db/snapshot-files.js';
import { restoreRedisSnapshot, writeRedisSnapshot } from '../../src/store/redis-snapshot.js';
import { runCli } from '../helpers/cli.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../helpers/redis-server.js';

const dir = mkdtempSync(join(tmpdir(), 'pal-redis-snap-'));
let redis: ThrowawayRedis;
let client: Redis;
before(async () => {
  redis = await startThrowawayRedis();
  client = new Redis(redis.url);
});
after(async () => {
  client.disconnect();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('snapshot, flush, restore: every key back with its value and expiry; expired ones and other prefixes not', async () => {
  await client.set('palisade:claim:a', '1', 'PX', 600_000);
  await client.set('palisade:claim:short', '1', 'PX', 200);
  await client.hset('palisade:win:x', { count: '7', start: '123' });
  await client.pexpire('palisade:win:x', 300_000);
  await client.zadd('palisade:pen:y', 3, 'm1', 5, 'm2');
  await client.set(Buffer.from([0x70, 0x61, 0x6c, 0x69, 0x73, 0x61, 0x64, 0x65, 0x3a, 0xff, 0x00]), Buffer.from([1, 2, 3]));
  await client.set('other:key', 'not ours');
  const file = join(dir, 'state.redis.jsonl.gz');
  const taken = await writeRedisSnapshot(redis.url, file);
  assert.equal(taken.keys, 5);
  await client.flushall();
  await new Promise((r) => setTimeout(r, 300));
  const r = await restoreRedisSnapshot(redis.url, file);
  assert.deepEqual([r.restored, r.expired], [4, 1]);
  assert.equal(await client.get('palisade:claim:a'), '1');
  const ttl = await client.pttl('palisade:claim:a');
  assert.ok(ttl > 590_000 && ttl <= 600_000, `expiry kept (${ttl} ms left)`);
  assert.equal(await client.exists('palisade:claim:short'), 0);
  assert.deepEqual(await client.hgetall('palisade:win:x'), { count: '7', start: '123' });
  assert.deepEqual(await client.zrange('palisade:pen:y', 0, -1, 'WITHSCORES'), ['m1', '3', 'm2', '5']);
  assert.equal(await client.pttl('palisade:pen:y'), -1);
  assert.deepEqual(await client.getBuffer(Buffer.from([0x70, 0x61, 0x6c, 0x69, 0x73, 0x61, 0x64, 0x65, 0x3a, 0xff, 0x00])), Buffer.from([1, 2, 3]));
  assert.equal(await client.exists('other:key'), 0);
  // A database snapshot or garbage is not a Redis snapshot.
  const foreign = join(dir, 'x.gz');
  writeFileSync(foreign, 'not gzip');
  await assert.rejects(restoreRedisSnapshot(redis.url, foreign));
});

test('npm run cli -- restore FILE puts a Redis snapshot back into REDIS_URL', async () => {
  await client.flushall();
  await client.set('palisade:claim:cli', '1', 'PX', 600_000);
  const file = join(dir, 'cli.redis.jsonl.gz');
  await writeRedisSnapshot(redis.url, file);
  await client.flushall();
  const data = mkdtempSync(join(dir, 'data-'));
  writeFileSync(join(data, 'secrets.json'), JSON.stringify({
    PALISADE_HMAC_SECRET: 'redis-snap-palisade-hmac-secret-0123456789', CODE_CHALLENGE_SECRET: 'redis-snap-code-challenge-secret-0123',
    JWT_SECRET: 'redis-snap-jwt-secret-0123456789-012345', HASHING_SALT: 'redis-snap-hashing-salt-0123456789', NODE_ID: '0123456789abcdef',
  }), { mode: 0o600 });
  const env = { DATA_DIR: data, LIBSQL_URL: `file:${join(data, 'p.db')}`, REDIS_URL: redis.url };
  const out = await runCli(['restore', file, '--json'], env);
  assert.equal(out.code, 0, out.err);
  assert.deepEqual(JSON.parse(out.out), { file, createdAt: JSON.parse(out.out).createdAt, keys: 1, expired: 0 });
  assert.equal(await client.get('palisade:claim:cli'), '1');
  const without = await runCli(['restore', file], { DATA_DIR: data, LIBSQL_URL: `file:${join(data, 'p.db')}` });
  assert.deepEqual([without.code, without.err.trim()], [1, 'error: a Redis snapshot restores into REDIS_URL, which is not set']);
});

test('SNAPSHOTS_REDIS_SCHEDULE without REDIS_URL is refused', () => {
  assert.deepEqual(snapshotProblems({ SNAPSHOTS_STORAGE_PROVIDER: 'local', SNAPSHOTS_DB_PREFIX: 'db', SNAPSHOTS_REDIS_SCHEDULE: '0 * * * *', REDIS_URL: null }),
    ['SNAPSHOTS_REDIS_SCHEDULE needs REDIS_URL: the shared-memory state store of a single node is a file in DATA_DIR (copy it with the node stopped)']);
  assert.deepEqual(snapshotProblems({ SNAPSHOTS_STORAGE_PROVIDER: 'local', SNAPSHOTS_DB_PREFIX: 'db', SNAPSHOTS_REDIS_SCHEDULE: '0 * * * *', REDIS_URL: 'redis://r' }), []);
});
