// Per-worker API key cache (CACHE_DURATION_API_KEYS). The hot paths ask it for every request.
//
// - A key is reloaded `ttlMs` after it was loaded: a revoked or changed key takes effect within
//   ttlMs while the database answers.
// - Unknown ids are remembered for `negativeTtlMs` (short, so a new key works almost at once), and
//   ids that are not shaped like key ids never reach the database.
// - Concurrent misses for one id share one query (single flight).
// - Stale-if-error: when the reload fails, the last known value is served for up to
//   `staleIfErrorMs` after it expired (retrying the database at most once a second meanwhile);
//   after that, lookups fail with DATABASE_UNAVAILABLE. So during a database outage a key revoked
//   just before it can keep working for at most ttlMs + staleIfErrorMs.
// - At most `maxEntries` ids are kept; the least recently loaded go first.
import { PalisadeError } from '../errors.js';
import { isKeyId, isSecret, type KeySecrets } from './secrets.js';
import type { ApiKey } from './types.js';

export interface KeyCacheOptions {
  /** CACHE_DURATION_API_KEYS. Default 10,000 ms. */
  readonly ttlMs?: number;
  /** How long "no such key" is remembered. Default 2,000 ms (never more than ttlMs). */
  readonly negativeTtlMs?: number;
  /** How long past expiry the last known value is served while the database fails. Default 300,000 ms. */
  readonly staleIfErrorMs?: number;
  /** Most ids (and secret hashes) kept. Default 100,000. */
  readonly maxEntries?: number;
  /** Clock (tests). Default Date.now. */
  readonly now?: () => number;
}

export const KEY_CACHE_DEFAULTS = Object.freeze({
  ttlMs: 10_000,
  negativeTtlMs: 2_000,
  staleIfErrorMs: 300_000,
  maxEntries: 100_000,
});

/** How the cache reaches the database (src/keys/api-keys.ts loadApiKey / findKeyIdBySecret). */
export interface KeyLoader {
  byId(id: string): Promise<ApiKey | null>;
  /** The id of the key whose secret hash is `secretHash`, or null. */
  idBySecretHash(secretHash: string): Promise<string | null>;
}

export interface KeyCache {
  /** The key, or null when there is none. Rejects with DATABASE_UNAVAILABLE when it cannot tell. */
  getKey(id: string): Promise<ApiKey | null>;
  /** getKey() without waiting: the key (or null) while this process's copy is fresh, else undefined. */
  peekKey(id: string): ApiKey | null | undefined;
  /** The key whose secret is `secret` (compared in constant time with the derived one), or null. */
  getKeyBySecret(secret: string): Promise<ApiKey | null>;
  /** Forget `id` in this process (after a local change). */
  invalidate(id: string): void;
  clear(): void;
  readonly size: number;
}

interface Entry<V> {
  value: V;
  /** Reload after this time. */
  expiresAt: number;
  /** Serve while the database fails until this time. */
  staleUntil: number;
}

export function createKeyCache(loader: KeyLoader, secrets: KeySecrets, options: KeyCacheOptions = {}): KeyCache {
  const o = { ...KEY_CACHE_DEFAULTS, ...options };
  const negativeTtl = Math.min(o.negativeTtlMs, o.ttlMs);
  const now = options.now ?? Date.now;
  const keys = createTtlMap<ApiKey | null>(loader.byId, (v) => (v === null ? negativeTtl : o.ttlMs), o.staleIfErrorMs, o.maxEntries, now);
  const hashes = createTtlMap<string | null>(loader.idBySecretHash, (v) => (v === null ? negativeTtl : o.ttlMs), o.staleIfErrorMs, o.maxEntries, now);

  return {
    getKey(id) {
      if (typeof id !== 'string' || !isKeyId(id)) return Promise.resolve(null);
      return keys.get(id);
    },
    peekKey(id) {
      if (typeof id !== 'string' || !isKeyId(id)) return null;
      return keys.peek(id);
    },
    async getKeyBySecret(secret) {
      if (typeof secret !== 'string' || !isSecret(secret)) return null;
      const id = await hashes.get(secrets.hash(secret));
      if (id === null) return null;
      const key = await keys.get(id);
      // The hash → id mapping may be older than a rotation: the derived secret decides.
      return key !== null && secrets.equal(key.secret, secret) ? key : null;
    },
    invalidate(id) {
      keys.delete(id);
    },
    clear() {
      keys.clear();
      hashes.clear();
    },
    get size() {
      return keys.size;
    },
  };
}

interface TtlMap<V> {
  get(id: string): Promise<V>;
  /** The value while fresh, else undefined (no load started). */
  peek(id: string): V | undefined;
  delete(id: string): void;
  clear(): void;
  readonly size: number;
}

/** A retry of a failing database waits this long between attempts per id. */
const ERROR_RETRY_MS = 1000;

function createTtlMap<V>(
  load: (id: string) => Promise<V>, ttlOf: (v: V) => number, staleIfErrorMs: number, maxEntries: number, now: () => number,
): TtlMap<V> {
  const entries = new Map<string, Entry<V>>();
  const loading = new Map<string, Promise<V>>();

  const store = (id: string, value: V, t: number): void => {
    const ttl = ttlOf(value);
    entries.delete(id);
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(id, { value, expiresAt: t + ttl, staleUntil: t + ttl + staleIfErrorMs });
  };

  const refresh = (id: string): Promise<V> => {
    let p = loading.get(id);
    if (p !== undefined) return p;
    p = (async () => {
      try {
        const value = await load(id);
        store(id, value, now());
        return value;
      } catch (err) {
        const t = now();
        const last = entries.get(id);
        if (last !== undefined && t < last.staleUntil) {
          last.expiresAt = Math.min(t + ERROR_RETRY_MS, last.staleUntil);
          return last.value;
        }
        throw new PalisadeError('DATABASE_UNAVAILABLE', (err as Error)?.message);
      } finally {
        loading.delete(id);
      }
    })();
    loading.set(id, p);
    return p;
  };

  return {
    get(id) {
      const e = entries.get(id);
      if (e !== undefined && now() < e.expiresAt) return Promise.resolve(e.value);
      return refresh(id);
    },
    peek(id) {
      const e = entries.get(id);
      return e !== undefined && now() < e.expiresAt ? e.value : undefined;
    },
    delete(id) {
      entries.delete(id);
    },
    clear() {
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
