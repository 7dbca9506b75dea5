// The state store on a real Redis Cluster (REDIS_URL=redis+cluster://): three masters with a replica
// each, started on loopback ports by test/helpers/redis-cluster.ts. The conformance suite runs on it;
// keys are hash-tagged and a turn's batch goes out one slot per command; a claim is answered only
// once the master's replica has it (REDIS_CLAIM_REPLICAS, WAIT), and answers 503 with the challenge
// spent when the replica does not acknowledge it; every master's eviction policy is checked; snapshots read
// every master. The failover tests are test/reliability/redis-cluster-failover.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { parseRateRule } from '../../src/parse.js';
import { keySlot } from '../../src/store/redis-client.js';
import { restoreRedisSnapshot, writeRedisSnapshot } from '../../src/store/redis-snapshot.js';
import { openRedisStore } from '../../src/store/redis-store.js';
import type { StoreLogger } from '../../src/store/state-store.js';
import { redisToolsAvailable, startTestCluster, type TestCluster } from '../helpers/redis-cluster.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../helpers/redis-server.js';
import { storeConformance } from '../helpers/store-conformance.js';

const skip = !redisToolsAvailable('the Redis Cluster tests');

let cluster: TestCluster;
let raw: Cluster;
const prefix = `pal-cl-${randomBytes(4).toString('hex')}:`;
const LATER = Date.now() + 30 * 60_000;
const logged: { level: string; msg: string; obj: object }[] = [];
const logger: StoreLogger = {
  info: (obj, msg) => logged.push({ level: 'info', obj, msg }),
  warn: (obj, msg) => logged.push({ level: 'warn', obj, msg }),
  error: (obj, msg) => logged.push({ level: 'error', obj, msg }),
};

before(async () => {
  if (skip) return;
  cluster = await startTestCluster();
  raw = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
});
after(async () => {
  raw?.disconnect();
  await cluster?.stop();
});

storeConformance('RedisStore on a Redis Cluster (claims acknowledged by a replica)',
  () => openRedisStore(cluster.url, { keyPrefix: `${prefix}conf:`, logger, claimReplicas: 1 }), { skip });

test('keySlot agrees with CLUSTER KEYSLOT, hash tags included', { skip }, async () => {
  const keys = ['foo', 'palisade:c:{abc}', 'palisade:r60000:{ip:1.2.3.4}', 'x{}{y}', '{{a}}', 'é{ü}', `${prefix}c#{${'A'.repeat(43)}}`];
  for (const key of keys) assert.equal(keySlot(key), Number(await raw.call('CLUSTER', 'KEYSLOT', key)), key);
});

test('ids are hash tags; one turn of claims over many slots goes out a slot per command and each claim is on its replica when answered', { skip }, async () => {
  const store = await openRedisStore(cluster.url, { keyPrefix: `${prefix}tags:`, logger, claimReplicas: 1 });
  try {
    const ids = Array.from({ length: 300 }, (_, i) => `id-${i}`);
    assert.deepEqual(await Promise.all(ids.map((id) => store.claimOnce(id, LATER))), ids.map(() => true));
    assert.deepEqual(await Promise.all(ids.map((id) => store.claimOnce(id, LATER))), ids.map(() => false));
    const slots = new Set(ids.map((id) => keySlot(`${prefix}tags:c:{${id}}`)));
    assert.ok(slots.size > 250, `the ids spread over ${slots.size} slots`);
    assert.equal(Number(await raw.call('PEXPIRETIME', `${prefix}tags:c:{id-7}`)), LATER);
    // The windows and penalty of one id share its slot; an id holding a brace is hashed as a whole.
    await store.hit('ip:10.0.0.1', parseRateRule('3/1m'));
    await store.hit('ip:10.0.0.1', parseRateRule('100/1h'));
    await store.addPenalty('ip:10.0.0.1', 2, 60_000);
    const slot = keySlot('{ip:10.0.0.1}');
    for (const key of [`${prefix}tags:r60000:{ip:10.0.0.1}`, `${prefix}tags:r3600000:{ip:10.0.0.1}`, `${prefix}tags:p:{ip:10.0.0.1}`]) {
      assert.equal(await raw.exists(key), 1, key);
      assert.equal(keySlot(key), slot);
    }
    assert.equal(await store.claimOnce('a{b}c', LATER), true);
    const hashed = (await Promise.all(raw.nodes('master').map((n) => n.keys(`${prefix}tags:c#{*`)))).flat();
    assert.equal(hashed.length, 1);
    // Acknowledged: every claimed key is on its master's replica the moment the claim answered.
    const fresh = Array.from({ length: 60 }, (_, i) => `ack-${i}`);
    assert.deepEqual(await Promise.all(fresh.map((id) => store.claimOnce(id, LATER))), fresh.map(() => true));
    for (const id of fresh) {
      const key = `${prefix}tags:c:{${id}}`;
      const master = cluster.masterOf(keySlot(key));
      const replicaPort = Number(/slave0:ip=[^,]+,port=(\d+)/.exec(master.command('INFO', 'replication'))?.[1]);
      const replica = new Redis({ port: replicaPort, host: '127.0.0.1' });
      try {
        await replica.call('READONLY');
        assert.equal(await replica.get(key), '1', `${key} on the replica ${replicaPort}`);
      } finally {
        replica.disconnect();
      }
    }
  } finally {
    await store.close();
  }
});

test('a claim its replica cannot acknowledge answers 503, its challenge spent; a master asked for more replicas than it has waits for its own', { skip }, async () => {
  logged.length = 0;
  const store = await openRedisStore(cluster.url, { keyPrefix: `${prefix}ack:`, logger, claimReplicas: 2, commandTimeout: 600 });
  try {
    const start = logged.filter((l) => l.level === 'warn' && /fewer replicas than REDIS_CLAIM_REPLICAS/.test(l.msg));
    assert.deepEqual(start.map((l) => (l.obj as { replicas: number }).replicas), [1, 1, 1], 'one line per master, at start');
    assert.equal(await store.claimOnce('two-asked', LATER), true, 'acknowledged by the one replica its master has');
    // A frozen replica stays listed (its connection is open) and acknowledges nothing.
    const key = `${prefix}ack:c:{unacked}`;
    const master = cluster.masterOf(keySlot(key));
    const replicaPort = Number(/slave0:ip=[^,]+,port=(\d+)/.exec(master.command('INFO', 'replication'))?.[1]);
    const replica = cluster.nodes.find((n) => n.port === replicaPort)!;
    replica.freeze();
    try {
      await assert.rejects(store.claimOnce('unacked', LATER), (err: Error & { code?: string }) => err.code === 'STORE_UNAVAILABLE');
      assert.equal(await raw.get(key), '1', 'stored on the master: spent');
      assert.equal(await store.claimOnce('unacked', LATER), false, 'a key already taken is refused, whatever the replicas say');
    } finally {
      replica.thaw();
    }
  } finally {
    await store.close();
  }
  await cluster.waitHealthy();
});

test('every master must be noeviction: one evicting master refuses the store', { skip }, async () => {
  const victim = cluster.masterOf(keySlot('anything'));
  victim.command('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
  try {
    await assert.rejects(openRedisStore(cluster.url, { keyPrefix: `${prefix}ev:`, logger }), /maxmemory-policy is "allkeys-lru"/);
  } finally {
    victim.command('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
  }
  const store = await openRedisStore(cluster.url, { keyPrefix: `${prefix}ev:`, logger });
  assert.equal(await store.appendOnly(), false, 'the test cluster runs without append-only files');
  await store.close();
});

test('a Redis snapshot of a cluster holds the keys of every master and restores them', { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pal-cl-snap-'));
  const snapPrefix = `${prefix}snap:`;
  const store = await openRedisStore(cluster.url, { keyPrefix: snapPrefix, logger });
  try {
    const ids = Array.from({ length: 40 }, (_, i) => `s-${i}`);
    assert.deepEqual(await Promise.all(ids.map((id) => store.claimOnce(id, LATER))), ids.map(() => true));
    const file = join(dir, 'cluster.redis.jsonl.gz');
    assert.deepEqual(await writeRedisSnapshot(cluster.url, file, Date.now(), snapPrefix), { keys: 40 });
    for (const id of ids) await raw.del(`${snapPrefix}c:{${id}}`);
    assert.deepEqual(await Promise.all(ids.map((id) => raw.exists(`${snapPrefix}c:{${id}}`))), ids.map(() => 0));
    const restored = await restoreRedisSnapshot(cluster.url, file);
    assert.deepEqual([restored.restored, restored.expired], [40, 0]);
    assert.deepEqual(await Promise.all(ids.map((id) => store.claimOnce(id, LATER))), ids.map(() => false), 'restored claims refuse their payloads');
    const expiry = Number(await raw.call('PEXPIRETIME', `${snapPrefix}c:{s-3}`));
    assert.ok(Math.abs(expiry - LATER) < 1000, `the claim's moment kept to the snapshot's reading of its TTL (${expiry - LATER} ms)`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('replicas that attach after start: a claim waits for the one that came (checking its key is there), and answers 503 spent when a second one cannot acknowledge', { skip }, async () => {
  const master = await startThrowawayRedis(['--maxmemory-policy', 'noeviction']);
  const replicas: ThrowawayRedis[] = [];
  const attach = async () => {
    const replica = await startThrowawayRedis(['--maxmemory-policy', 'noeviction', '--replicaof', '127.0.0.1', String(master.port)]);
    replicas.push(replica);
    const deadline = Date.now() + 10_000;
    while (!/master_link_status:up/.test(replica.command('INFO', 'replication'))) {
      if (Date.now() > deadline) throw new Error('the replica did not synchronise');
      await sleep(50);
    }
    return replica;
  };
  const one = await openRedisStore(master.url, { keyPrefix: 'late:', logger, claimReplicas: 1, commandTimeout: 600 });
  let two: Awaited<ReturnType<typeof openRedisStore>> | undefined;
  try {
    assert.equal(await one.claimOnce('alone', LATER), true, 'no replica: nothing to wait for');
    const first = await attach();
    // Read at start: no replica. ROLE after the claim lists one: the second pipeline checks the key and waits for it.
    assert.equal(await one.claimOnce('after-attach', LATER), true);
    assert.equal(first.command('GET', 'late:c:after-attach'), '1', 'on the replica when answered');
    two = await openRedisStore(master.url, { keyPrefix: 'late:', logger, claimReplicas: 2, commandTimeout: 600 });
    const second = await attach();
    second.freeze();
    await assert.rejects(two.claimOnce('two-wanted', LATER), (err: Error & { code?: string }) => err.code === 'STORE_UNAVAILABLE');
    second.thaw();
    assert.equal(master.command('GET', 'late:c:two-wanted'), '1', 'stored on the master: spent');
    assert.equal(await two.claimOnce('two-wanted', LATER), false);
  } finally {
    await one.close();
    await two?.close();
    for (const r of replicas) await r.stop();
    await master.stop();
  }
});
