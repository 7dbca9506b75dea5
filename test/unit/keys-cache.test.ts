// The per-worker key cache: TTL, negative caching, single flight, stale-if-error and its bound.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKeyCache, type KeyLoader } from '../../src/keys/key-cache.js';
import { createKeySecrets, deriveApiKeySecretKey } from '../../src/keys/secrets.js';
import type { ApiKey } from '../../src/keys/types.js';

const secrets = createKeySecrets(deriveApiKeySecretKey('cache-test-palisade-secret-01234'), 'cache-test-salt-0123');
const ID = 'key_AAAAAAAAAAAAAAAAAAAAAAAA';
const ID2 = 'key_BBBBBBBBBBBBBBBBBBBBBBBB';

function makeKey(id: string, enabled = true, nonce = 'n1'): ApiKey {
  return {
    id, accountId: 'acc_1', name: '', hostnames: [], planId: 'unlimited', challengePolicy: null, rateLimit: null,
    enabled, secret: secrets.derive(id, nonce), requestLimit: null,
  };
}

function fakeLoader(store: Map<string, ApiKey>) {
  const calls = { byId: 0, byHash: 0 };
  let failing = false;
  let gate: Promise<void> | null = null;
  const loader: KeyLoader = {
    async byId(id) {
      calls.byId++;
      if (gate) await gate;
      if (failing) throw new Error('database down');
      return store.get(id) ?? null;
    },
    async idBySecretHash(hash) {
      calls.byHash++;
      if (failing) throw new Error('database down');
      for (const k of store.values()) if (secrets.hash(k.secret) === hash) return k.id;
      return null;
    },
  };
  return { loader, calls, fail: (v: boolean) => { failing = v; }, hold: (p: Promise<void> | null) => { gate = p; } };
}

test('a key is served from the cache for ttlMs, then reloaded: a revocation takes effect within the TTL', async () => {
  const store = new Map([[ID, makeKey(ID)]]);
  const f = fakeLoader(store);
  let now = 0;
  const cache = createKeyCache(f.loader, secrets, { ttlMs: 1000, now: () => now });
  assert.equal((await cache.getKey(ID))?.enabled, true);
  store.set(ID, makeKey(ID, false));
  now = 999;
  assert.equal((await cache.getKey(ID))?.enabled, true);
  assert.equal(f.calls.byId, 1);
  now = 1000;
  assert.equal((await cache.getKey(ID))?.enabled, false);
  assert.equal(f.calls.byId, 2);
});

test('unknown ids are cached briefly; malformed ids never reach the loader', async () => {
  const store = new Map<string, ApiKey>();
  const f = fakeLoader(store);
  let now = 0;
  const cache = createKeyCache(f.loader, secrets, { ttlMs: 10_000, negativeTtlMs: 500, now: () => now });
  assert.equal(await cache.getKey(ID), null);
  store.set(ID, makeKey(ID));
  now = 499;
  assert.equal(await cache.getKey(ID), null);
  now = 500;
  assert.equal((await cache.getKey(ID))?.id, ID);
  for (const bad of ['', 'nope', `${ID}x`, ID.toUpperCase(), null as unknown as string, 42 as unknown as string]) {
    assert.equal(await cache.getKey(bad), null);
  }
  assert.equal(f.calls.byId, 2);
});

test('concurrent misses share one load (single flight)', async () => {
  const f = fakeLoader(new Map([[ID, makeKey(ID)]]));
  let release!: () => void;
  f.hold(new Promise<void>((r) => { release = r; }));
  const cache = createKeyCache(f.loader, secrets);
  const all = Promise.all(Array.from({ length: 50 }, () => cache.getKey(ID)));
  release();
  const keys = await all;
  assert.ok(keys.every((k) => k?.id === ID));
  assert.equal(f.calls.byId, 1);
});

test('stale-if-error: the last value is served up to staleIfErrorMs past expiry, then DATABASE_UNAVAILABLE', async () => {
  const f = fakeLoader(new Map([[ID, makeKey(ID)]]));
  let now = 0;
  const cache = createKeyCache(f.loader, secrets, { ttlMs: 1000, staleIfErrorMs: 5000, now: () => now });
  await cache.getKey(ID);
  f.fail(true);
  now = 1000;
  assert.equal((await cache.getKey(ID))?.id, ID);
  const calls = f.calls.byId;
  now = 1500;
  assert.equal((await cache.getKey(ID))?.id, ID);
  assert.equal(f.calls.byId, calls, 'retries the database at most once a second');
  now = 5999;
  assert.equal((await cache.getKey(ID))?.id, ID);
  now = 6000;
  await assert.rejects(cache.getKey(ID), { code: 'DATABASE_UNAVAILABLE' });
  // A key never seen cannot be vouched for.
  await assert.rejects(cache.getKey(ID2), { code: 'DATABASE_UNAVAILABLE' });
  f.fail(false);
  assert.equal((await cache.getKey(ID))?.id, ID);
});

test('lookup by secret: hash → id, then the derived secret is compared; a rotated secret stops working', async () => {
  const store = new Map([[ID, makeKey(ID, true, 'n1')]]);
  const f = fakeLoader(store);
  let now = 0;
  const cache = createKeyCache(f.loader, secrets, { ttlMs: 1000, now: () => now });
  const old = store.get(ID)!.secret;
  assert.equal((await cache.getKeyBySecret(old))?.id, ID);
  assert.equal(await cache.getKeyBySecret(secrets.derive(ID, 'other')), null);
  assert.equal(await cache.getKeyBySecret('sec_short'), null);
  assert.equal(await cache.getKeyBySecret(ID), null);
  store.set(ID, makeKey(ID, true, 'n2'));
  now = 1000;
  assert.equal(await cache.getKeyBySecret(old), null);
  assert.equal((await cache.getKeyBySecret(store.get(ID)!.secret))?.id, ID);
});

test('the cache keeps at most maxEntries ids; invalidate and clear forget', async () => {
  const store = new Map<string, ApiKey>();
  const ids = Array.from({ length: 5 }, (_, i) => `key_${String(i).repeat(24)}`);
  for (const id of ids) store.set(id, makeKey(id));
  const f = fakeLoader(store);
  const cache = createKeyCache(f.loader, secrets, { maxEntries: 3 });
  for (const id of ids) await cache.getKey(id);
  assert.equal(cache.size, 3);
  await cache.getKey(ids[4]!);
  assert.equal(f.calls.byId, 5);
  await cache.getKey(ids[0]!);
  assert.equal(f.calls.byId, 6, 'the oldest was evicted');
  cache.invalidate(ids[0]!);
  await cache.getKey(ids[0]!);
  assert.equal(f.calls.byId, 7);
  cache.clear();
  assert.equal(cache.size, 0);
});
