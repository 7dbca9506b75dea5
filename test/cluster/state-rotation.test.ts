// Address rotation through HTTP: 100,000 probe requests, each from its own IPv6 /64 (X-Forwarded-For
// from a trusted proxy), against a service whose soft-state table has only 65,536 slots. Before the
// claims were stored apart, about 30,000 such requests filled the table and every verification of
// every site answered 503 STORE_FULL. Now the table evicts, and a clean client verifies throughout.
// With Redis the soft state stops growing at 80 % of maxmemory, leaving the rest to claims.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawClient } from '../helpers/http-client.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { startThrowawayRedis } from '../helpers/redis-server.js';
import { createTestKey, startService } from '../helpers/service.js';

test('100,000 requests from distinct /64s on a 65,536-slot table: every verification of a clean client succeeds', async () => {
  await rotation({ STATE_STORE_CAPACITY: '65536' }, 50_000);
});

test('the same through Redis with a 24 MB maxmemory: soft state sheds, every verification of a clean client succeeds', async () => {
  const redis = await startThrowawayRedis(['--maxmemory', '24mb', '--maxmemory-policy', 'noeviction']);
  try {
    await rotation({ REDIS_URL: redis.url }, 10_000);
  } finally {
    await redis.kill();
  }
});

async function rotation(storeEnv: Record<string, string>, minEvictions: number): Promise<void> {
  const svc = await startService({
    env: {
      ...storeEnv, X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32', THREATS_ENABLED: '1',
      // Every rotated source sends one request, so each creates its own window; the clean client
      // sends 120 requests within the minute and stays under the limit.
      FLOOD_RATE_LIMIT: '1000/1m',
    },
  });
  const client = new RawClient(svc.port, 32);
  try {
    const key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
    const clean = { 'x-forwarded-for': '198.51.100.7' };
    let verified = 0;
    const failures: string[] = [];
    const verifyOnce = async () => {
      const ch = await client.request('GET', `/v1/challenge?apiKey=${key.id}`, undefined, clean);
      if (ch.status !== 200) return void failures.push(`challenge ${ch.status} ${ch.body}`);
      const { payload } = await solveV2(ch.body);
      const res = await client.request('POST', `/v1/verify?apiKey=${key.id}`, JSON.stringify({ payload }), clean);
      if (res.status === 200 && (JSON.parse(res.body) as { verified: boolean }).verified) verified++;
      else failures.push(`verify ${res.status} ${res.body}`);
    };

    const TOTAL = 100_000;
    const BATCH = 2000;
    const statuses = new Map<number, number>();
    for (let sent = 0; sent < TOTAL; sent += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, j) => {
        const i = sent + j;
        const ip = `2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::9`;
        return client.request('GET', '/.env', undefined, { 'x-forwarded-for': ip });
      });
      const [results] = await Promise.all([Promise.all(batch), verifyOnce()]);
      for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
    for (let i = 0; i < 10; i++) await verifyOnce();

    const metrics = await (await fetch(`${svc.url}/.metrics`)).text();
    const evicted = [...metrics.matchAll(/^palisade_state_evictions_total\{kind="(\w+)"\} (\d+)$/gm)]
      .reduce((n, m) => n + Number(m[2]), 0);
    const full = Number(/^palisade_store_errors_total\{code="STORE_FULL"\} (\d+)$/m.exec(metrics)?.[1] ?? '0');
    console.log(`[rotation] HTTP: ${TOTAL} probes from distinct /64s: ${JSON.stringify(Object.fromEntries(statuses))}; ` +
      `clean client ${verified} verified, ${failures.length} failed; ${evicted} soft entries evicted, STORE_FULL ${full}`);
    assert.deepEqual(failures, []);
    assert.equal(verified, TOTAL / BATCH + 10);
    assert.equal(statuses.get(404), TOTAL, 'every probe answered');
    assert.ok(evicted > minEvictions, `${evicted} evictions`);
    assert.equal(full, 0);
  } finally {
    client.close();
    await svc.stop();
  }
}
