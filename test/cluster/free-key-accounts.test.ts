// Free keys through the real clustered service: each key from POST /api_key/generate sits in an
// account of its own, apart from the operator's keys. Before, every generated key and every CLI key
// made without --account shared the default account, so a stranger with a free key could use up
// the plan of every other free key, read the account's totals in /usage, and spend a payload
// issued to an operator's key through /challenge/verify with {"apiKey": …}.
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli } from '../helpers/cli.js';
import { RawClient } from '../helpers/http-client.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { startService, type Service } from '../helpers/service.js';

interface Key { readonly id: string; readonly secret: string; readonly accountId: string }

let svc: Service;
before(async () => {
  svc = await startService({ env: { X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32' } });
});
after(async () => {
  await svc?.stop();
});

const cli = async (...args: string[]) => {
  const run = await runCli([...args, '--json'], { DATA_DIR: svc.dataDir });
  assert.equal(run.code, 0, run.err);
  return JSON.parse(run.out) as Record<string, unknown>;
};

/** A free key through POST /api_key/generate, the machine-to-machine challenge solved here. */
async function generate(hostname: string): Promise<Key> {
  const body = JSON.stringify({ hostname });
  const first = await fetch(`${svc.url}/api_key/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(first.status, 401);
  const c = /challenge=([0-9a-f]{64}), maxnumber=(\d+), salt=([^,]+), signature=([0-9a-f]{64})/.exec(first.headers.get('www-authenticate')!)!;
  const [challenge, maxnumber, salt, signature] = [c[1]!, Number(c[2]), c[3]!, c[4]!];
  let n = 0;
  while (n <= maxnumber && hash('sha256', salt + n) !== challenge) n++;
  const res = await fetch(`${svc.url}/api_key/generate`, {
    method: 'POST', body,
    headers: {
      'content-type': 'application/json',
      authorization: `Altcha algorithm=SHA-256, number=${n}, challenge=${challenge}, salt=${salt}, signature=${signature}`,
    },
  });
  assert.equal(res.status, 200);
  const made = await res.json() as { apiKey: string; secret: string };
  return { id: made.apiKey, secret: made.secret, accountId: await accountOf(made.apiKey) };
}

async function accountOf(id: string): Promise<string> {
  const keys = await cli('keys', 'list') as unknown as { id: string; accountId: string }[];
  return keys.find((k) => k.id === id)!.accountId;
}

/** `n` challenges of `key` at once, each from its own address: the statuses, counted. */
async function challenges(key: string, origin: string, n: number, from: number): Promise<Record<number, number>> {
  const client = new RawClient(svc.port, 16);
  const results = await Promise.all(Array.from({ length: n }, (_, i) => client.request('GET', `/v1/challenge?apiKey=${key}`, undefined, {
    origin, 'x-forwarded-for': `2001:db8:${from.toString(16)}:${i.toString(16)}::1`,
  }))).finally(() => client.close());
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

async function usageOf(key: Key, expectedOwn: number): Promise<{ requests: { account: number; apiKey: number } }> {
  for (let i = 0; ; i++) {
    const res = await fetch(`${svc.url}/usage`, { headers: { authorization: `Bearer ${key.secret}` } });
    assert.equal(res.status, 200);
    const usage = await res.json() as { requests: { account: number; apiKey: number } };
    if (usage.requests.apiKey >= expectedOwn || i === 50) return usage;
    await sleep(100);
  }
}

test('generated keys and operator keys never share an account: plans, /usage totals and cross-key verification stay within each', async () => {
  assert.deepEqual(await cli('plans', 'set', 'free', '--limit', '20'), { name: 'free', requestLimit: 20 });
  const stranger = await generate('stranger.example');
  const victim = await generate('victim.example');
  const started = Date.now();

  // The stranger uses up its own plan from rotating addresses.
  assert.deepEqual(await challenges(stranger.id, 'https://stranger.example', 30, 1), { 200: 20, 429: 10 });

  // An operator key made without --account joins the default account, which holds no generated key.
  const operator = await cli('keys', 'create', '--hostname', 'shop.example', '--policy', '{"counterMin":1,"counterMax":50}');
  const operatorKey: Key = { id: operator.apiKey as string, secret: operator.secret as string, accountId: operator.accountId as string };
  assert.equal(new Set([stranger.accountId, victim.accountId, operatorKey.accountId]).size, 3);
  const accounts = await cli('accounts', 'list') as unknown as { id: string; isDefault: boolean; generated: boolean }[];
  const flags = (id: string) => { const a = accounts.find((x) => x.id === id)!; return [a.isDefault, a.generated]; };
  assert.deepEqual([flags(operatorKey.accountId), flags(stranger.accountId), flags(victim.accountId)], [[true, false], [false, true], [false, true]]);

  // The stranger cannot verify, and so spend, a payload issued to the operator's key.
  const ch = await fetch(`${svc.url}/v1/challenge?apiKey=${operatorKey.id}`, { headers: { origin: 'https://shop.example' } });
  assert.equal(ch.status, 200);
  const { payload } = await solveV2(await ch.text());
  const verify = (secret: string, body: unknown) => fetch(`${svc.url}/challenge/verify`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` }, body: JSON.stringify(body),
  });
  const stolen = await verify(stranger.secret, { payload, apiKey: operatorKey.id });
  assert.equal(stolen.status, 401);
  assert.deepEqual(await stolen.json(), { error: 'API_KEY_INVALID', statusCode: 401 });
  const own = await verify(operatorKey.secret, { payload });
  assert.equal(own.status, 200);
  assert.deepEqual(await own.json(), { verified: true });

  // The victim's plan is its own: all 20 pass, however long after the stranger's traffic. (The
  // shared account's usage count, cached up to 10 s per worker, holds the stranger's 20 once the
  // first 8 requests, on as many connections, have made each worker read it again.)
  await sleep(Math.max(0, started + 11_000 - Date.now()));
  assert.deepEqual(await challenges(victim.id, 'https://victim.example', 8, 2), { 200: 8 });
  await sleep(500);
  assert.deepEqual(await challenges(victim.id, 'https://victim.example', 12, 3), { 200: 12 });

  // /usage with one generated key's secret shows its own account's totals only.
  assert.deepEqual((await usageOf(stranger, 20)).requests, { account: 20, apiKey: 20 });
  assert.deepEqual((await usageOf(victim, 20)).requests, { account: 20, apiKey: 20 });
  assert.deepEqual((await usageOf(operatorKey, 2)).requests, { account: 2, apiKey: 2 });
});
