// Per-worker pools of derived challenges for expensive deterministic policies (DESIGN.md section 4):
// the derivation (PBKDF2 with many rounds, scrypt, Argon2id) runs ahead, off the event loop, and
// issuing is a pop plus one HMAC (signChallenge adds expiry, data and the signature at issue time,
// so a ready challenge never goes stale; the key signature covers only the key). A pool is keyed by
// the derivation parameters alone, so keys sharing a policy share its pool. When a pool is empty a
// request waits for the next derivation, bounded in time and in number.
import { PalisadeError } from '../errors.js';
import { deriveChallenge, type DerivedChallenge } from './challenge.js';
import { isExpensive } from './derive.js';
import type { ChallengePolicy } from './policy.js';
import type { PowSecrets } from './secrets.js';

export interface ChallengePoolOptions {
  /** Ready challenges kept per policy. Default 32. */
  readonly size?: number;
  /** Refilling starts when fewer than this are ready, and goes on up to `size`. Default 8. */
  readonly lowWater?: number;
  /** How long a request waits on an empty pool before CHALLENGE_POOL_TIMEOUT (503). Default 5000 ms. */
  readonly waitTimeoutMs?: number;
  /** Derivations in flight at once in this worker, all pools together. Default 2. */
  readonly concurrency?: number;
  /** Requests waiting on one pool; more fail at once with CHALLENGE_POOL_TIMEOUT. Default 256. */
  readonly maxWaiters?: number;
  /** Pools kept (one per distinct derivation policy); the least recently used idle one goes. Default 64. */
  readonly maxPools?: number;
}

export const CHALLENGE_POOL_DEFAULTS = Object.freeze({
  size: 32, lowWater: 8, waitTimeoutMs: 5_000, concurrency: 2, maxWaiters: 256, maxPools: 64,
});

export interface ChallengePoolStats {
  /** Ready challenges, all pools together. */
  readonly ready: number;
  /** Takes answered at once from a ready challenge. */
  readonly fromStock: number;
  /** Takes that found the pool empty and waited for a derivation (answered or timed out). */
  readonly waited: number;
  /** Takes refused at once with CHALLENGE_POOL_TIMEOUT: too many already waiting. */
  readonly refused: number;
}

/** Pool options for CHALLENGE_POOL_SIZE: refilling starts when fewer than a quarter are ready (32 → 8). */
export function poolSizeOptions(size: number): Pick<ChallengePoolOptions, 'size' | 'lowWater'> {
  return { size, lowWater: Math.max(1, Math.ceil(size / 4)) };
}

export interface ChallengePool {
  /** A derived challenge for `policy`: popped when one is ready, else the next one made (bounded wait). */
  take(policy: ChallengePolicy): Promise<DerivedChallenge>;
  /** Starts filling the pool of `policy` without taking from it (e.g. the default policy at start-up). */
  warm(policy: ChallengePolicy): void;
  /** Ready challenges for `policy` now (tests). */
  ready(policy: ChallengePolicy): number;
  /** Ready challenges in every pool, and how takes were answered since start (metrics). */
  stats(): ChallengePoolStats;
  /** Stops refilling, fails waiting requests with NOT_READY, drops every ready challenge. */
  close(): void;
}

/** Deterministic v2 policies whose one derivation at issue time leaves the event loop (derive.ts decides). */
export function isPooled(policy: ChallengePolicy): boolean {
  return policy.version === 2 && policy.mode === 'deterministic' && isExpensive(policy);
}

interface Waiter {
  readonly resolve: (c: DerivedChallenge) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

interface PolicyPool {
  readonly policy: ChallengePolicy;
  readonly ready: DerivedChallenge[];
  readonly waiters: Waiter[];
  inFlight: number;
  refilling: boolean;
  /** Set when a derivation failed: no refilling until the next take(). */
  paused: boolean;
  dropped: boolean;
}

export interface ChallengePoolRequired {
  readonly secrets: PowSecrets;
  /** The derivation; default deriveChallenge (tests inject slow or failing ones). */
  readonly derive?: (policy: ChallengePolicy, secrets: PowSecrets) => Promise<DerivedChallenge>;
}

export function createChallengePool(required: ChallengePoolRequired, options: ChallengePoolOptions = {}): ChallengePool {
  const o = { ...CHALLENGE_POOL_DEFAULTS, ...options };
  if (!(o.size >= 1 && o.lowWater >= 1 && o.lowWater <= o.size && o.concurrency >= 1 && o.maxPools >= 1)) {
    throw new Error('challenge pool: need size ≥ lowWater ≥ 1, concurrency ≥ 1, maxPools ≥ 1');
  }
  const derive = required.derive ?? deriveChallenge;
  const pools = new Map<string, PolicyPool>();
  const keys = new WeakMap<ChallengePolicy, string>();
  let inFlight = 0;
  let closed = false;
  let fromStock = 0;
  let waited = 0;
  let refused = 0;

  function keyOf(policy: ChallengePolicy): string {
    let key = keys.get(policy);
    if (key === undefined) {
      key = `${policy.algorithm}|${policy.cost}|${policy.memoryCost}|${policy.parallelism}|${policy.keyLength}|` +
        `${policy.counterMin}|${policy.counterMax}`;
      keys.set(policy, key);
    }
    return key;
  }

  function poolFor(policy: ChallengePolicy): PolicyPool {
    const key = keyOf(policy);
    let pool = pools.get(key);
    if (pool) {
      pools.delete(key); // re-insert: Map order is least recently used first
    } else {
      if (pools.size >= o.maxPools) evictOne();
      pool = { policy, ready: [], waiters: [], inFlight: 0, refilling: false, paused: false, dropped: false };
    }
    pools.set(key, pool);
    return pool;
  }

  function evictOne(): void {
    for (const [key, pool] of pools) {
      if (pool.waiters.length === 0) {
        pool.dropped = true;
        pools.delete(key);
        return;
      }
    }
  }

  function pump(): void {
    for (const pool of pools.values()) {
      while (inFlight < o.concurrency && wants(pool)) start(pool);
      if (inFlight >= o.concurrency) return;
    }
  }

  function wants(pool: PolicyPool): boolean {
    if (pool.waiters.length > pool.inFlight) return true;
    if (pool.paused) return false;
    if (pool.ready.length < o.lowWater) pool.refilling = true;
    if (pool.refilling && pool.ready.length + pool.inFlight >= o.size) pool.refilling = false;
    return pool.refilling;
  }

  function start(pool: PolicyPool): void {
    inFlight++;
    pool.inFlight++;
    derive(pool.policy, required.secrets).then(
      (challenge) => {
        inFlight--;
        pool.inFlight--;
        if (closed || pool.dropped) return;
        const waiter = pool.waiters.shift();
        if (waiter) {
          clearTimeout(waiter.timer);
          waiter.resolve(challenge);
        } else {
          pool.ready.push(challenge);
        }
        pump();
      },
      (err: unknown) => {
        inFlight--;
        pool.inFlight--;
        // An unexpected failure (the policy was validated): fail who waits and stop refilling until asked again.
        pool.refilling = false;
        pool.paused = true;
        for (const waiter of pool.waiters.splice(0)) {
          clearTimeout(waiter.timer);
          waiter.reject(err instanceof Error ? err : new Error(String(err)));
        }
        if (!closed) pump();
      },
    );
  }

  return {
    take(policy) {
      if (closed) return Promise.reject(new PalisadeError('NOT_READY', 'challenge pool closed'));
      const pool = poolFor(policy);
      pool.paused = false;
      const ready = pool.ready.pop();
      if (ready) {
        fromStock++;
        pump();
        return Promise.resolve(ready);
      }
      if (pool.waiters.length >= o.maxWaiters) {
        refused++;
        return Promise.reject(new PalisadeError('CHALLENGE_POOL_TIMEOUT', 'too many requests waiting for a challenge'));
      }
      waited++;
      return new Promise<DerivedChallenge>((resolve, reject) => {
        const waiter: Waiter = {
          resolve,
          reject,
          timer: setTimeout(() => {
            const at = pool.waiters.indexOf(waiter);
            if (at >= 0) pool.waiters.splice(at, 1);
            reject(new PalisadeError('CHALLENGE_POOL_TIMEOUT'));
          }, o.waitTimeoutMs),
        };
        pool.waiters.push(waiter);
        pump();
      });
    },
    warm(policy) {
      if (closed) return;
      poolFor(policy).paused = false;
      pump();
    },
    ready(policy) {
      return pools.get(keyOf(policy))?.ready.length ?? 0;
    },
    stats() {
      let ready = 0;
      for (const pool of pools.values()) ready += pool.ready.length;
      return { ready, fromStock, waited, refused };
    },
    close() {
      closed = true;
      for (const pool of pools.values()) {
        pool.dropped = true;
        pool.ready.length = 0;
        for (const waiter of pool.waiters.splice(0)) {
          clearTimeout(waiter.timer);
          waiter.reject(new PalisadeError('NOT_READY', 'challenge pool closed'));
        }
      }
      pools.clear();
    },
  };
}
