// Plan limits through the real clustered service (2 workers), with the shared-memory store and
// with Redis: 150 challenges at once, each from its own address, against a key whose plan allows
// 100 a month. Exactly 100 pass and 50 get 429 PLAN_LIMIT_EXCEEDED; the refused ones count
// nothing in usage. Before the counter moved into the state store, the check read a database count
// cached for 10 s plus what each worker had counted itself, so both workers let requests through
// until each alone reached the limit: 150 of 150 passed here.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setPlan } from '../../src/db/plans.js';
import { RawClient } from '../helpers/http-client.js';
import { createTestKey, startService, withServiceDb, type Service } from '../helpers/service.js';
import { REDIS_URL, requireService } from '../helpers/services.js';

const redis = await requireService('redis');

for (const [name, env, skip] of [
  ['shared memory', {}, false],
  ['Redis', { REDIS_URL }, !redis],
] as [string, Record<string, string>, boolean][]) {
  describe(`plan limit with ${name}`, { skip }, () => {
    let svc: Service | undefined;
    after(async () => { await svc?.stop(); });

    test('150 concurrent challenges from rotating addresses under a plan of 100: exactly 100 pass, then 429 PLAN_LIMIT_EXCEEDED', async () => {
      svc = await startService({ env: { ...env, X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32' } });
      await withServiceDb(svc, (sql) => setPlan(sql, 'hundred', 100));
      const key = await createTestKey(svc, { plan: 'hundred', challengePolicy: { counterMin: 1, counterMax: 50 } });
      const client = new RawClient(svc.port, 64);
      try {
        const challenge = (i: number) => client.request('GET', `/v1/challenge?apiKey=${key.id}`, undefined, {
          'x-forwarded-for': `2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`,
        });
        const results = await Promise.all(Array.from({ length: 150 }, (_, i) => challenge(i)));
        const statuses = new Map<number, number>();
        for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        assert.deepEqual([...statuses].sort(), [[200, 100], [429, 50]]);
        for (const r of results.filter((x) => x.status === 429)) {
          assert.deepEqual(JSON.parse(r.body), { error: 'PLAN_LIMIT_EXCEEDED', statusCode: 429 });
        }
        const later = await challenge(150);
        assert.equal(later.status, 429);

        // Usage counts exactly the 100 served (refusals spend nothing), and /usage still answers.
        let usage: { requests: { account: number; apiKey: number }; plan: unknown } | undefined;
        for (let i = 0; i < 50; i++) {
          const res = await fetch(`${svc.url}/usage`, { headers: { authorization: `Bearer ${key.secret}` } });
          assert.equal(res.status, 200);
          usage = await res.json() as typeof usage;
          if (usage!.requests.apiKey === 100) break;
          await sleep(100);
        }
        assert.deepEqual([usage!.requests, usage!.plan], [{ account: 100, apiKey: 100 }, { name: 'hundred', requestLimit: 100 }]);
      } finally {
        client.close();
      }
    });
  });
}
