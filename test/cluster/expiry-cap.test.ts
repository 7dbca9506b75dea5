// CACHE_DURATION_USED_CHALLENGES bounds how long a used challenge is remembered, so no challenge
// may be issued to expire later than that bound minus CLAIM_CLOCK_SKEW, whatever its key's policy
// asks (a claim that ended before its challenge expired would let the payload be replayed).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createTestKey, startService, type Service } from '../helpers/service.js';

let svc: Service;
before(async () => {
  svc = await startService({ env: { WORKERS: '1', CACHE_DURATION_USED_CHALLENGES: '10m', CLAIM_CLOCK_SKEW: '1m' } });
});
after(async () => { await svc.stop(); });

test('a policy asking for 24 h gets challenges that expire within CACHE_DURATION_USED_CHALLENGES minus the skew', async () => {
  const key = await createTestKey(svc, { challengePolicy: { expiresInMs: 24 * 3_600_000 } });
  const now = Math.floor(Date.now() / 1000);
  const res = await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`);
  assert.equal(res.status, 200);
  const { parameters } = (await res.json()) as { parameters: { expiresAt: number } };
  const lifetime = parameters.expiresAt - now;
  assert.ok(lifetime >= 9 * 60 - 2 && lifetime <= 9 * 60 + 2, `expires in ${lifetime} s, expected 540 s`);
});

test('a policy within the bound keeps its own expiry', async () => {
  const key = await createTestKey(svc, { challengePolicy: { expiresInMs: 2 * 60_000 } });
  const now = Math.floor(Date.now() / 1000);
  const { parameters } = (await (await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`)).json()) as { parameters: { expiresAt: number } };
  const lifetime = parameters.expiresAt - now;
  assert.ok(lifetime >= 118 && lifetime <= 122, `expires in ${lifetime} s, expected 120 s`);
});
