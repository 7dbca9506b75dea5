// What the state store's expiry and eviction cost on the request path, on a simulated clock:
// - claims: `rate` claims per simulated second, each kept until a 20-minute challenge's expiry plus
//   the 60 s margin, for `minutes` simulated minutes, through a worker's store (it only unmaps ended
//   buckets) beside the primary's (it deletes ended buckets and prepares the next ones), each
//   sweeping every 5 simulated seconds as the service's timers do. Reports the slowest claims and
//   worker sweeps (the request path), the primary's sweeps, bytes per live claim at the end, and
//   the peak of the claims' files;
// - soft state: a 65,536-slot table filled with rate-limit windows from rotating addresses until
//   every new key evicts, then the cost of a hit that evicts beside one that finds its entry.
// The README's "Sizing the state store" quotes these figures.
//   npx tsc -p . && node dist/bench/micro/store-pressure.js [--rate N] [--minutes N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseRateRule } from '../../src/parse.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';

const MINUTE = 60_000;
const EXPIRY_MS = 20 * MINUTE + 60_000;
const SWEEP_EVERY_S = 5;

export interface ClaimPressure {
  readonly rate: number;
  readonly minutes: number;
  /** Per-claim time, µs: median, 99.99th percentile, max. */
  readonly claimUs: { readonly p50: number; readonly p9999: number; readonly max: number };
  /** Claims that took longer than 1 ms, and those of them after the first three simulated minutes (the ramp-up). */
  readonly over1ms: number;
  readonly over1msAfterRampUp: number;
  /** Per-sweep time in a worker (unmapping only), µs. */
  readonly sweepUs: { readonly p50: number; readonly max: number };
  /** Per-sweep time in the primary (deleting and preparing files), µs: off the request path. */
  readonly primarySweepUs: { readonly p50: number; readonly max: number };
  readonly bytesPerClaim: number;
  readonly peakBytes: number;
  readonly liveClaims: number;
}

export function claimPressure(rate: number, minutes: number, dir = tmpdir()): ClaimPressure {
  const root = mkdtempSync(join(dir, 'store-pressure-'));
  const options = { capacity: 1024, sweepEveryMs: 0, maxClaimBytes: 2 ** 40 };
  const primary = openSharedMemoryStore(join(root, 'state.shm'), options);
  const store = openSharedMemoryStore(join(root, 'state.shm'), { ...options, sweepFiles: false });
  const t0 = (Math.floor(Date.now() / MINUTE) + 1) * MINUTE;
  const claimTimes = new Float64Array(rate * minutes * 60);
  const sweepTimes: number[] = [];
  const primaryTimes: number[] = [];
  let n = 0;
  let peakBytes = 0;
  try {
    for (let s = 0; s < minutes * 60; s++) {
      const now = t0 + s * 1000;
      store.setClock(now);
      primary.setClock(now);
      for (let i = 0; i < rate; i++) {
        // Challenges solved now were issued over the last 30 s: their moments spread like that.
        const until = now - (i % 30) * 1000 + EXPIRY_MS;
        const start = performance.now();
        store.claimOnceSync(`c${s}-${i}`, until);
        claimTimes[n++] = performance.now() - start;
      }
      if (s % SWEEP_EVERY_S === 0) {
        const start = performance.now();
        store.sweep();
        sweepTimes.push(performance.now() - start);
        const p = performance.now();
        primary.sweep();
        primaryTimes.push(performance.now() - p);
        peakBytes = Math.max(peakBytes, store.claimMemory().bytes);
      }
    }
    const m = store.claimMemory();
    let over1ms = 0;
    let over1msAfterRampUp = 0;
    for (let k = 0; k < n; k++) {
      if (claimTimes[k]! <= 1) continue;
      over1ms++;
      if (k >= rate * 180) over1msAfterRampUp++;
    }
    const claims = Array.from(claimTimes).sort((a, b) => a - b);
    const sweeps = sweepTimes.sort((a, b) => a - b);
    const primarySweeps = primaryTimes.sort((a, b) => a - b);
    const us = (x: number) => Math.round(x * 1000 * 10) / 10;
    return {
      rate, minutes,
      claimUs: { p50: us(claims[claims.length >> 1]!), p9999: us(claims[Math.floor(claims.length * 0.9999)]!), max: us(claims.at(-1)!) },
      over1ms, over1msAfterRampUp,
      sweepUs: { p50: us(sweeps[sweeps.length >> 1]!), max: us(sweeps.at(-1)!) },
      primarySweepUs: { p50: us(primarySweeps[primarySweeps.length >> 1]!), max: us(primarySweeps.at(-1)!) },
      bytesPerClaim: Math.round((m.bytes / m.claims) * 10) / 10,
      peakBytes,
      liveClaims: m.claims,
    };
  } finally {
    void store.close();
    void primary.close();
    rmSync(root, { recursive: true, force: true });
  }
}

export interface SoftPressure {
  readonly capacity: number;
  readonly evicted: number;
  /** ns per hit: a new key that evicts; an existing key's entry found and counted. */
  readonly evictingHitNs: number;
  readonly foundHitNs: number;
}

export function softPressure(capacity = 65_536, dir = tmpdir()): SoftPressure {
  const root = mkdtempSync(join(dir, 'store-pressure-'));
  const store = openSharedMemoryStore(join(root, 'state.shm'), { capacity, sweepEveryMs: 0 });
  const rule = parseRateRule('100/1m');
  try {
    for (let i = 0; i < capacity * 4; i++) store.hitSync(`ip|2001:db8:${i >>> 16}:${i & 0xffff}::`, rule);
    const N = 500_000;
    let start = performance.now();
    for (let i = 0; i < N; i++) store.hitSync(`ip|2001:db9:${i >>> 16}:${i & 0xffff}::`, rule);
    const evictingHitNs = Math.round(((performance.now() - start) * 1e6) / N);
    start = performance.now();
    for (let i = 0; i < N; i++) store.hitSync('ip|198.51.100.7', rule);
    const foundHitNs = Math.round(((performance.now() - start) * 1e6) / N);
    const e = store.evictions();
    return { capacity, evicted: e.window + e.penalty + e.seen, evictingHitNs, foundHitNs };
  } finally {
    void store.close();
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('store-pressure.js')) {
  const { values } = parseArgs({ options: { rate: { type: 'string', multiple: true }, minutes: { type: 'string', default: '30' } } });
  const rates = (values.rate ?? ['2000', '20000']).map(Number);
  const minutes = Number(values.minutes);
  if (rates.some((r) => !Number.isInteger(r) || r < 1 || r > 200_000)) throw new Error('--rate must be an integer from 1 to 200,000');
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 24 * 60) throw new Error('--minutes must be an integer from 1 to 1,440');
  const dir = process.env.STORE_PRESSURE_DIR ?? tmpdir();
  for (const rate of rates) {
    const c = claimPressure(rate, minutes, dir);
    console.log(`claims at ${rate}/s for ${minutes} simulated min: claim p50 ${c.claimUs.p50} µs, p99.99 ${c.claimUs.p9999} µs, ` +
      `max ${c.claimUs.max} µs (${c.over1ms} over 1 ms, ${c.over1msAfterRampUp} of them after the first 3 min); worker sweep p50 ${c.sweepUs.p50} µs, max ${c.sweepUs.max} µs; primary sweep p50 ` +
      `${c.primarySweepUs.p50} µs, max ${c.primarySweepUs.max} µs; ${c.liveClaims} live claims, ` +
      `${c.bytesPerClaim} bytes each; peak ${(c.peakBytes / 1048576).toFixed(1)} MB`);
  }
  const s = softPressure();
  console.log(`soft table of ${s.capacity} slots under rotation: ${s.evicted} evictions; a hit that evicts ${s.evictingHitNs} ns, ` +
    `a hit that finds its entry ${s.foundHitNs} ns`);
}
