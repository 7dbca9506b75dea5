// S4's other target, "≥ 0.3 × L while the pool keeps up": issuance while every challenge comes out of
// a stocked pool. With the default CHALLENGE_POOL_SIZE (32) a full-speed run empties the pool within
// milliseconds, so each Palisade configuration runs again here with a pool deep enough for a burst:
// its pools fill (the service's metrics say when), then fixed numbers of requests (autocannon's
// `amount`) go out as fast as the generator sends them, and L gets a burst of the same size after
// each; a burst's rate is its median 50 ms sample (bench/lib/load.ts), which leaves out connecting and
// the tail. Each configuration is compared with the L bursts of its own minutes: on the shared
// machine L's bursts ran twice as fast in one configuration's minutes as in the other's. The
// bursts stay well above the pool's low-water mark, so no derivation runs during them, and the
// metrics count the takes that found a pool empty: none may.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConfigName, Scenario } from '../scenarios/scenario.js';
import { paths, type DriverContext } from './drivers.js';
import { BENCH_ORIGIN, type KeyTemplate } from './keys.js';
import { runLoad, type LoadResult } from './load.js';
import { metricValue } from './metrics-text.js';
import { median, ratio } from './stats.js';
import { startPalisade, type Target } from './targets.js';
import type { StockedPoolPlan } from './types.js';

export interface PoolCounters {
  readonly ready: number;
  readonly fromStock: number;
  readonly waited: number;
  readonly refused: number;
}

export interface StockedRun extends LoadResult {
  /** The pool's counters before and after the burst. */
  readonly before: PoolCounters;
  readonly after: PoolCounters;
}

export interface StockedResult {
  readonly size: number;
  readonly workers: number;
  /** Requests per measured burst; bursts per configuration (L had one after each). */
  readonly amount: number;
  readonly rounds: number;
  /** Every L burst of the invocation, in order (each configuration's `lRps` is the median of its own). */
  readonly L: { readonly runs: readonly LoadResult[]; readonly rps: number };
  readonly configs: Readonly<Partial<Record<ConfigName, {
    readonly runs: readonly StockedRun[];
    readonly rps: number;
    /** The median of the L bursts run between this configuration's bursts. */
    readonly lRps: number;
    /** rps ÷ lRps. */
    readonly vsL: number | null;
    /** Takes during the measured bursts that found a pool empty (waited or refused): 0 when the pool kept up. */
    readonly missed: number;
  }>>>;
}

export interface StockedContext extends DriverContext {
  readonly template: KeyTemplate;
  readonly workers: number;
  readonly runs: number;
}

const HEADERS = { origin: BENCH_ORIGIN };

export async function measureStockedPool(
  s: Scenario, plan: StockedPoolPlan, L: Target, derivationRate: number, ctx: StockedContext,
): Promise<StockedResult> {
  const total = plan.size * ctx.workers;
  const amount = Math.round(total * plan.burstShare);
  const warmup = Math.round(total * plan.warmupShare);
  const lPath = paths(s, L, ctx.keys).challenge;
  // In this thread, not in autocannon worker threads: a new worker thread per burst would measure
  // its own JIT warming up, while this thread's autocannon stays warm from burst to burst.
  const burst = (url: string, path: string, n: number) => runLoad({
    url, request: { method: 'GET', path, headers: HEADERS }, durationS: 0, amount: n, connections: ctx.connections, workers: 0,
  });
  const configs: Partial<Record<ConfigName, { runs: StockedRun[]; rps: number; lRps: number; vsL: number | null; missed: number }>> = {};
  const lRuns: LoadResult[] = [];
  for (const config of s.configs) {
    ctx.log(`  stocked pool: starting palisade:${config} with CHALLENGE_POOL_SIZE=${plan.size}`);
    const target = await startPalisade(ctx.template, config, ctx.workers, { ...s.env, CHALLENGE_POOL_SIZE: String(plan.size) });
    try {
      const url = target.server.url;
      const path = paths(s, target, ctx.keys).challenge;
      const started = performance.now();
      await fill(url, path, total, derivationRate, ctx);
      ctx.log(`  stocked pool: ${total} challenges ready in ${((performance.now() - started) / 1000).toFixed(1)} s; warm-up burst of ${warmup}`);
      await burst(url, path, warmup);
      if (lRuns.length === 0) await burst(L.server.url, lPath, amount); // the generator's warm-up on L
      const runs: StockedRun[] = [];
      const ownL: LoadResult[] = [];
      for (let round = 0; round < ctx.runs; round++) {
        const before = await poolCounters(url);
        const r = await burst(url, path, amount);
        const after = await poolCounters(url);
        runs.push({ ...r, before, after });
        ctx.log(`  stocked pool round ${round + 1} palisade:${config}: ${r.sampledRps} req/s (${r.rps} over the whole burst of ${amount}), ` +
          `${after.ready} still ready, ${missedTakes(before, after)} takes found a pool empty${r.non2xx > 0 ? ` [${r.non2xx} non-2xx]` : ''}`);
        const l = await burst(L.server.url, lPath, amount);
        lRuns.push(l);
        ownL.push(l);
        ctx.log(`  stocked pool round ${round + 1} L: ${l.sampledRps} req/s (${l.rps} over the whole burst)`);
      }
      const rps = median(runs.map((r) => r.sampledRps!));
      const lRps = median(ownL.map((r) => r.sampledRps!));
      configs[config] = { runs, rps, lRps, vsL: ratio(rps, lRps), missed: runs.reduce((n, r) => n + missedTakes(r.before, r.after), 0) };
    } finally {
      await target.server.stop();
    }
  }
  return { size: plan.size, workers: ctx.workers, amount, rounds: ctx.runs, L: { runs: lRuns, rps: median(lRuns.map((r) => r.sampledRps!)) }, configs };
}

function missedTakes(before: PoolCounters, after: PoolCounters): number {
  return after.waited - before.waited + after.refused - before.refused;
}

/**
 * Starts a pool in every worker (requests on many connections; the first ones wait for a
 * derivation) and waits until all of them hold `total` challenges. Bounded by three times what
 * the derivation rate measured alone needs, plus a minute.
 */
async function fill(url: string, path: string, total: number, derivationRate: number, ctx: StockedContext): Promise<void> {
  const deadline = performance.now() + (3 * total / Math.max(1, derivationRate) + 60) * 1000;
  // Requests on every connection reach every worker (the first ones wait for a derivation).
  const start = () => runLoad({
    url, request: { method: 'GET', path, headers: HEADERS }, durationS: 0, amount: 2 * ctx.connections, connections: ctx.connections, workers: 0,
  });
  await start();
  let last = 0;
  let lastProgress = performance.now();
  for (;;) {
    const { ready } = await poolCounters(url);
    if (ready >= total) return;
    const now = performance.now();
    if (now > deadline) throw new Error(`stocked pool: ${ready} of ${total} challenges ready when the time was up`);
    if (ready > last) {
      last = ready;
      lastProgress = now;
    } else if (now - lastProgress > 5_000) {
      await start(); // a worker whose pool never started
      lastProgress = performance.now();
    }
    await sleep(250);
  }
}

export async function poolCounters(url: string): Promise<PoolCounters> {
  const res = await fetch(`${url}/.metrics`);
  if (res.status !== 200) throw new Error(`GET /.metrics answered ${res.status}`);
  const text = await res.text();
  const value = (sample: string): number => {
    const v = metricValue(text, sample);
    if (v === null) throw new Error(`GET /.metrics has no ${sample}`);
    return v;
  };
  return {
    ready: value('palisade_challenge_pool_ready'),
    fromStock: value('palisade_challenge_pool_takes_total{result="ready"}'),
    waited: value('palisade_challenge_pool_takes_total{result="waited"}'),
    refused: value('palisade_challenge_pool_takes_total{result="refused"}'),
  };
}
