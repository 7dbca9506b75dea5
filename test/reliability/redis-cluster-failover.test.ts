// The service on a Redis Cluster through a failover (REDIS_URL=redis+cluster://): three masters with
// a replica each; payloads are submitted again and again while one master is SIGKILLed and its
// replica takes over. No payload is ever verified twice: before, during and after the failover each
// submission answers verified (once per payload), PAYLOAD_ALREADY_USED, or 503 STORE_UNAVAILABLE
// while the dead master's slots have no master; afterwards every payload is refused. And on Redis
// Sentinel (redis+sentinel://): a master and a replica watched by three sentinels, the master
// SIGKILLed, the store following the promoted replica with every used challenge still refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { keySlot } from '../../src/store/redis-client.js';
import { openRedisStore } from '../../src/store/redis-store.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { redisToolsAvailable, startTestCluster, startTestSentinels, type TestCluster, type TestSentinels } from '../helpers/redis-cluster.js';
import { createTestKey, startService, type Service } from '../helpers/service.js';
import { report } from './harness.js';

const skip = !redisToolsAvailable('the Redis failover tests');

let cluster: TestCluster | undefined;
let sentinels: TestSentinels | undefined;
let svc: Service | undefined;
after(async () => {
  await svc?.stop('SIGKILL');
  await cluster?.stop();
  await sentinels?.stop();
});

before(async () => {
  if (skip) return;
  cluster = await startTestCluster();
});

type Outcome = 'OK' | string;

async function verify(url: string, keyId: string, payload: string): Promise<Outcome> {
  const res = await fetch(`${url}/v1/verify?apiKey=${keyId}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payload }), signal: AbortSignal.timeout(15_000),
  });
  const json = (await res.json()) as { verified?: boolean; reason?: string; error?: string };
  return res.status === 200 && json.verified === true ? 'OK' : `${res.status}:${json.reason ?? json.error}`;
}

test('through a cluster failover no payload verifies twice: submissions answer once verified, already used, or 503', { skip }, async () => {
  svc = await startService({
    env: { REDIS_URL: cluster!.url, REDIS_COMMAND_TIMEOUT: '1000', REDIS_CONNECT_TIMEOUT: '2000', WORKERS: '2' },
  });
  const key = await createTestKey(svc);
  const payloads = await Promise.all(Array.from({ length: 90 }, async () => {
    const res = await fetch(`${svc!.url}/v1/challenge?apiKey=${key.id}`);
    assert.equal(res.status, 200);
    return (await solveV2(await res.text())).payload;
  }));
  const oks = new Map<string, number>();
  const outcomes = new Map<Outcome, number>();
  const submit = async (payload: string) => {
    const outcome = await verify(svc!.url, key.id, payload);
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    if (outcome === 'OK') oks.set(payload, (oks.get(payload) ?? 0) + 1);
  };
  // A third of the payloads verified before the failover.
  await Promise.all(payloads.slice(0, 30).map(submit));
  assert.equal(oks.size, 30);

  // Kill the master of the slot where most payload claims live, while every payload is submitted
  // over and over until the cluster is whole again, and a while after.
  const victim = cluster!.masterOf(keySlot('anything'));
  let stop = false;
  const rounds = (async () => {
    while (!stop) {
      await Promise.all(payloads.map(submit));
      await sleep(50);
    }
  })();
  await sleep(300);
  const killedAt = Date.now();
  await victim.kill();
  await cluster!.waitHealthy(30_000);
  const healedMs = Date.now() - killedAt;
  // The service finds the new master within a few seconds: a round with no 503 ends the rounds.
  const deadline = Date.now() + 20_000;
  let recoveredMs = -1;
  while (recoveredMs < 0 && Date.now() < deadline) {
    const round = await Promise.all(payloads.map((p) => verify(svc!.url, key.id, p)));
    for (const outcome of round) {
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    round.forEach((outcome, i) => { if (outcome === 'OK') oks.set(payloads[i]!, (oks.get(payloads[i]!) ?? 0) + 1); });
    if (!round.includes('503:STORE_UNAVAILABLE')) recoveredMs = Date.now() - killedAt;
    else await sleep(200);
  }
  stop = true;
  await rounds;

  // Afterwards every payload is refused, on every slot.
  const last = await Promise.all(payloads.map((p) => verify(svc!.url, key.id, p)));
  report('redis-cluster-failover', `cluster healed ${healedMs} ms after the kill, the service answered every slot again after ${recoveredMs} ms; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`);
  assert.ok(recoveredMs > 0, 'the service answers every slot again within 20 s of the cluster healing');
  assert.deepEqual([...new Set(last)], ['200:PAYLOAD_ALREADY_USED'], 'after the failover every payload is used');
  assert.deepEqual([...oks.values()].filter((n) => n > 1), [], 'no payload verified twice');
  assert.equal(oks.size, 90, 'every payload verified once (the rounds went on after the cluster healed)');
  const kinds = [...outcomes.keys()].sort();
  assert.deepEqual(kinds.filter((k) => !['OK', '200:PAYLOAD_ALREADY_USED', '503:STORE_UNAVAILABLE'].includes(k)), [], `outcomes: ${kinds.join(', ')}`);
  assert.ok((outcomes.get('503:STORE_UNAVAILABLE') ?? 0) > 0, 'submissions to the dead master\'s slots answered 503 while it had no successor');
  await svc.stop();
  svc = undefined;
});

test('on Redis Sentinel: claims follow the promoted replica after the master is killed, and used challenges stay used', { skip }, async () => {
  sentinels = await startTestSentinels();
  const store = await openRedisStore(sentinels.url, {
    keyPrefix: 'pal-sentinel:', commandTimeout: 1000, connectTimeout: 2000, claimReplicas: 1,
    logger: { info() {}, warn() {}, error() {} },
  });
  const later = Date.now() + 30 * 60_000;
  try {
    const ids = Array.from({ length: 50 }, (_, i) => `before-${i}`);
    assert.deepEqual(await Promise.all(ids.map((id) => store.claimOnce(id, later))), ids.map(() => true));
    // Acknowledged by the replica before answering: the replica has every claim.
    assert.equal(Number(sentinels.replica.command('EXISTS', ...ids.map((id) => `pal-sentinel:c:${id}`))), 50);
    const killedAt = Date.now();
    await sentinels.master.kill();
    // Claims while the master is dead answer 503 (never true); once the sentinels promote the replica
    // the store reconnects to it.
    let promoted = false;
    const during = new Map<string, number>();
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline) {
      const outcome = await store.claimOnce(`during-${during.size}-${Date.now()}`, later).then((r) => String(r), (e: Error & { code?: string }) => e.code ?? e.message);
      during.set(outcome, (during.get(outcome) ?? 0) + 1);
      promoted = sentinels.currentMasterPort() === sentinels.replica.port;
      if (promoted && outcome === 'true') break;
      await sleep(100);
    }
    report('redis-sentinel-failover', `failed over in ${Date.now() - killedAt} ms; claims meanwhile ${JSON.stringify(Object.fromEntries(during))}`);
    assert.equal(promoted, true, 'the sentinels promoted the replica');
    assert.deepEqual([...during.keys()].filter((k) => k !== 'true' && k !== 'STORE_UNAVAILABLE'), []);
    assert.deepEqual(await Promise.all(ids.map((id) => store.claimOnce(id, later))), ids.map(() => false), 'claims made before the failover still refuse their payloads');
  } finally {
    await store.close();
  }
});
