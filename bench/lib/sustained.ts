// The sustained scenario (`npm run bench -- --only sustained`): can the default state store carry
// verification at ALTCHA Sentinel's reference rate indefinitely, and what does an address-rotation
// flood do to a clean client?
//
// 1. Sustained: Palisade in production configuration with the store's defaults (shared-memory
//    store, default soft-table capacity, STATE_STORE_MAX_MEMORY from the machine, 20-minute
//    challenges) serves the mixed flow (each connection fetches a challenge and posts its
//    solution) at 2 × `rate` requests/s, i.e. `rate` verifications/s, for `durationS`. Every 10 s
//    the runner reads the store's gauges from /.metrics (claims, their bytes, the soft table's load,
//    evictions, STORE_FULL) and the workers' memory. Claims live until expiry plus the skew margin,
//    so they level off after about 21 minutes: a run shorter than that reports bytes per claim
//    and the growth so far, and the level the claim count tends to is rate × 21 min.
// 2. Rotation flood: a fresh service with X_FORWARDED_FOR_TRUSTED=127.0.0.1/32 and a small soft
//    table (`floodCapacity` slots). The clean client runs the mixed flow at `cleanRate` for
//    `floodS`, once alone and once beside a generator sending GET /.env as fast as it can, each
//    request from its own IPv6 /64 (X-Forwarded-For). Reported: the clean client's p99 and
//    failures in both runs, and the evictions and STORE_FULL count of the flood run.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { S2 } from '../scenarios/s2-verify.js';
import { checkVerify, paths } from './drivers.js';
import { runLoad, type LoadResult } from './load.js';
import { mixedFlow } from './memory.js';
import { metricValue } from './metrics-text.js';
import { memoryUse } from './processes.js';
import type { CheckResult, RunContext } from './scenario-runner.js';
import { round } from './stats.js';
import { startPalisade, type Target } from './targets.js';

const FLOOD_ROTATE = join(fileURLToPath(new URL('../../../', import.meta.url)), 'bench', 'lib', 'flood-rotate.cjs');

export interface SustainedOptions {
  /** Verifications per second (the flow sends as many challenges besides). Default 2,000. */
  readonly rate: number;
  readonly durationS: number;
  readonly sampleEveryS: number;
  /** The flood phase: each of its two runs lasts this long. */
  readonly floodS: number;
  /** The clean client's verifications per second during the flood phase. */
  readonly cleanRate: number;
  /** Soft-table slots of the flood phase's service. */
  readonly floodCapacity: number;
}

export interface StoreSample {
  readonly t: number;
  readonly claims: number | null;
  readonly claimBytes: number | null;
  readonly maxClaimBytes: number | null;
  readonly load: number | null;
  readonly evictions: number;
  readonly storeFull: number;
  /** VmRSS of each worker, MB. */
  readonly rss: readonly (number | null)[];
}

export interface SustainedResult {
  readonly rate: number;
  readonly durationS: number;
  readonly load: LoadResult;
  readonly samples: readonly StoreSample[];
  /** Claim bytes ÷ claims at the last sample. */
  readonly bytesPerClaim: number | null;
  readonly flood: {
    readonly capacity: number;
    readonly cleanRate: number;
    readonly alone: LoadResult;
    readonly beside: LoadResult;
    readonly probes: LoadResult;
    /** Probes answered (404) and their rate. */
    readonly probeCount: number;
    readonly probeRate: number;
    readonly evictions: number;
    readonly storeFull: number;
  };
  readonly checks: readonly CheckResult[];
}

export async function runSustained(ctx: RunContext, o: SustainedOptions): Promise<SustainedResult> {
  const target = await startPalisade(ctx.template, 'production', ctx.workers);
  let sustained: { load: LoadResult; samples: StoreSample[] };
  try {
    sustained = await sustainedRun(ctx, target, o);
  } finally {
    await target.server.stop();
  }
  const flood = await floodRuns(ctx, o);
  const last = sustained.samples.at(-1);
  const bytesPerClaim = last?.claims && last.claimBytes !== null ? round(last.claimBytes / last.claims, 1) : null;
  const verifications = sustained.load.statusCodes['200'] ?? 0;
  const checks: CheckResult[] = [
    check('STORE_FULL answers during the sustained run', last?.storeFull ?? null, '= 0', (v) => v === 0),
    check('failed requests during the sustained run (non-2xx and errors)', sustained.load.non2xx + sustained.load.errors, '= 0', (v) => v === 0),
    check('bytes per live claim', bytesPerClaim, '≤ 32', (v) => v <= 32),
    check('clean client failures beside the rotation flood', flood.beside.non2xx + flood.beside.errors, '= 0', (v) => v === 0),
    check('STORE_FULL answers during the rotation flood', flood.storeFull, '= 0', (v) => v === 0),
  ];
  ctx.log(`  sustained: ${verifications} answers 200 in ${o.durationS} s, p99 ${sustained.load.latency.p99} ms, ${bytesPerClaim ?? '—'} bytes per claim`);
  return { rate: o.rate, durationS: o.durationS, load: sustained.load, samples: sustained.samples, bytesPerClaim, flood, checks };
}

async function sustainedRun(ctx: RunContext, target: Target, o: SustainedOptions): Promise<{ load: LoadResult; samples: StoreSample[] }> {
  const reason = await checkVerify(S2, target, ctx.keys);
  if (reason) throw new Error(`sustained scenario: ${reason}`);
  const p = paths(S2, target, ctx.keys);
  const samples: StoreSample[] = [];
  const started = performance.now();
  const sample = async () => {
    const s = await storeSample(target, Math.round((performance.now() - started) / 1000));
    samples.push(s);
    ctx.log(`    t=${s.t}s claims ${s.claims} (${s.claimBytes} bytes), soft load ${s.load}, evictions ${s.evictions}, STORE_FULL ${s.storeFull}, RSS ${s.rss.join('/')} MB`);
  };
  await sample();
  ctx.log(`  mixed flow at ${o.rate} verifications/s for ${o.durationS} s`);
  const timer = setInterval(() => void sample(), o.sampleEveryS * 1000);
  let load: LoadResult;
  try {
    load = await mixedFlow(target.server.url, p, ctx, o.durationS, o.rate * 2);
  } finally {
    clearInterval(timer);
  }
  await sample();
  return { load, samples };
}

async function floodRuns(ctx: RunContext, o: SustainedOptions): Promise<SustainedResult['flood']> {
  const target = await startPalisade(ctx.template, 'production', ctx.workers, {
    X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32', STATE_STORE_CAPACITY: String(o.floodCapacity),
  });
  try {
    const reason = await checkVerify(S2, target, ctx.keys);
    if (reason) throw new Error(`sustained scenario (flood): ${reason}`);
    const p = paths(S2, target, ctx.keys);
    const clean = () => mixedFlow(target.server.url, p, ctx, o.floodS, o.cleanRate * 2);
    ctx.log(`  clean client alone at ${o.cleanRate} verifications/s for ${o.floodS} s`);
    const alone = await clean();
    const before = await storeSample(target, 0);
    ctx.log(`  clean client beside a rotation flood (GET /.env, one IPv6 /64 per request, ${o.floodCapacity}-slot soft table)`);
    const [beside, probes] = await Promise.all([
      clean(),
      runLoad({
        url: target.server.url, durationS: o.floodS, connections: 20, workers: 0,
        request: { method: 'GET', path: '/.env', setupRequest: FLOOD_ROTATE },
      }),
    ]);
    const after = await storeSample(target, o.floodS);
    const probeCount = Object.values(probes.statusCodes).reduce((a, b) => a + b, 0);
    const flood = {
      capacity: o.floodCapacity, cleanRate: o.cleanRate, alone, beside, probes, probeCount,
      probeRate: round(probeCount / probes.durationS),
      evictions: after.evictions - before.evictions, storeFull: after.storeFull - before.storeFull,
    };
    ctx.log(`  clean p99 alone ${alone.latency.p99} ms, beside ${probeCount} probes ${beside.latency.p99} ms; ` +
      `${flood.evictions} evictions, STORE_FULL ${flood.storeFull}`);
    return flood;
  } finally {
    await target.server.stop();
  }
}

async function storeSample(target: Target, t: number): Promise<StoreSample> {
  const text = await (await fetch(`${target.server.url}/.metrics`)).text();
  const evictions = ['window', 'penalty', 'seen']
    .reduce((n, kind) => n + (metricValue(text, `palisade_state_evictions_total{kind="${kind}"}`) ?? 0), 0);
  return {
    t,
    claims: metricValue(text, 'palisade_state_claims'),
    claimBytes: metricValue(text, 'palisade_state_claims_bytes'),
    maxClaimBytes: metricValue(text, 'palisade_state_claims_max_bytes'),
    load: metricValue(text, 'palisade_state_store_load'),
    evictions,
    storeFull: metricValue(text, 'palisade_store_errors_total{code="STORE_FULL"}') ?? 0,
    rss: target.server.workerPids().map((pid) => memoryUse(pid)?.rss ?? null),
  };
}

function check(label: string, measured: number | null, target: string, ok: (v: number) => boolean): CheckResult {
  return { label, measured, target, met: measured !== null && ok(measured) };
}
