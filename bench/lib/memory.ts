// The memory scenario (`npm run bench -- --memory`): Palisade in production configuration serves a
// mixed flow, each connection fetching a challenge and posting its solution (S1 and S2 alternating,
// each payload a first use), at 50% of the flow's measured maximum, for 10 minutes. Every 10 s the
// memory of each worker is read from /proc: VmRSS (what issue 7's targets name) and its private
// part, RssAnon. VmRSS also counts shared pages: the whole shared-memory state table (mapped with
// MAP_POPULATE, so resident in every worker from the start; one table per host) and Node's binary:
// bounded, not a leak; RssAnon is what a leak grows. Steady state is the mean over the last tenth of
// the run. Growth over the run is read off a Theil–Sen line through every sample after the first
// tenth (warm-up: JIT, pools, caches), from the end of the warm-up to the end of the run: a leak
// tilts it, V8 shrinking and regrowing its heap once does not. (The comparison of the last tenth's
// mean with the second tenth's is kept beside it: in the 2026-11-22 run one heap shrink inside the
// second tenth made it read +20% for a worker whose memory was flat or falling for the last 400 s.)
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { S2 } from '../scenarios/s2-verify.js';
import { checkVerify, paths } from './drivers.js';
import { BENCH_ORIGIN } from './keys.js';
import { runLoad, type LoadResult } from './load.js';
import { memoryUse, type MemoryUse } from './processes.js';
import type { CheckResult, RunContext } from './scenario-runner.js';
import { round, theilSen } from './stats.js';
import { startPalisade } from './targets.js';

const LIB = join(fileURLToPath(new URL('../../../', import.meta.url)), 'bench', 'lib');
const FLOW_CHALLENGE = join(LIB, 'flow-challenge.cjs');
const FLOW_VERIFY = join(LIB, 'flow-verify.cjs');

export interface MemoryOptions {
  readonly durationS: number;
  readonly calibrateS: number;
  readonly sampleEveryS: number;
  /** RSS per worker at steady state, MB (issue 7: 120). */
  readonly maxSteadyMb: number;
  /** Growth over the run (issue 7: 5%). */
  readonly maxGrowth: number;
}

export interface MemorySample {
  readonly t: number;
  readonly workers: Readonly<Record<string, MemoryUse | null>>;
}

export interface WorkerMemory {
  readonly pid: number;
  /** Means over the warm window (second tenth of the run) and the steady window (last tenth), MB. */
  readonly warm: MemoryUse;
  readonly steady: MemoryUse;
  /** steady ÷ warm − 1 of VmRSS and of the private part. */
  readonly growth: number | null;
  readonly anonGrowth: number | null;
  /**
   * Growth along the Theil–Sen line after warm-up (what the targets check), of VmRSS and of the
   * private part. Absent in results written before 2026-11-23.
   */
  readonly trend?: { readonly rss: number | null; readonly anon: number | null };
}

export interface MemoryResult {
  readonly durationS: number;
  readonly rate: number;
  readonly calibration: LoadResult;
  readonly load: LoadResult;
  readonly sampleEveryS: number;
  readonly samples: readonly MemorySample[];
  readonly workers: readonly WorkerMemory[];
  readonly checks: readonly CheckResult[];
}

export async function runMemory(ctx: RunContext, o: MemoryOptions): Promise<MemoryResult> {
  const target = await startPalisade(ctx.template, 'production', ctx.workers);
  try {
    const reason = await checkVerify(S2, target, ctx.keys);
    if (reason) throw new Error(`memory scenario: ${reason}`);
    const p = paths(S2, target, ctx.keys);
    const flow = (durationS: number, rate?: number) => mixedFlow(target.server.url, p, ctx, durationS, rate);
    ctx.log(`  calibrating the mixed flow for ${o.calibrateS} s`);
    const calibration = await flow(o.calibrateS);
    const rate = Math.max(1, Math.round(calibration.rps / 2));
    ctx.log(`  maximum ${calibration.rps} req/s; running at ${rate} req/s for ${o.durationS} s`);

    const pids = target.server.workerPids();
    const samples: MemorySample[] = [];
    const started = performance.now();
    const sample = () => {
      const workers: Record<string, MemoryUse | null> = {};
      for (const pid of pids) workers[pid] = memoryUse(pid);
      samples.push({ t: Math.round((performance.now() - started) / 1000), workers });
      ctx.log(`    t=${samples.at(-1)!.t}s ${pids.map((pid) => `${pid}: RSS ${workers[pid]?.rss} MB (private ${workers[pid]?.anon})`).join(', ')}`);
    };
    sample();
    const timer = setInterval(sample, o.sampleEveryS * 1000);
    let load: LoadResult;
    try {
      load = await flow(o.durationS, rate);
    } finally {
      clearInterval(timer);
    }
    sample();

    const workers = summarizeMemory(samples, pids, o.durationS, o.sampleEveryS);
    return { durationS: o.durationS, rate, calibration, load, sampleEveryS: o.sampleEveryS, samples, workers, checks: memoryChecks(workers, o) };
  } finally {
    await target.server.stop();
  }
}

/** Each worker's warm and steady means and its growth over the run, from the samples. */
export function summarizeMemory(
  samples: readonly MemorySample[], pids: readonly number[], durationS: number, sampleEveryS: number,
): WorkerMemory[] {
  // Windows at least one sample wide, so short (development) runs still have both.
  const span = Math.max(durationS / 10, sampleEveryS);
  return pids.map((pid) => {
    const warm = mean(samples, pid, span, 2 * span);
    const steady = mean(samples, pid, durationS - span, Infinity);
    const after = samples.filter((s) => s.t >= span && s.workers[pid] != null);
    const end = after.at(-1)?.t ?? span;
    const trend = (f: (m: MemoryUse) => number) => trendGrowth(after.map((s) => [s.t, f(s.workers[pid]!)] as const), span, end);
    return {
      pid, warm, steady, growth: change(warm.rss, steady.rss), anonGrowth: change(warm.anon, steady.anon),
      trend: { rss: trend((m) => m.rss), anon: trend((m) => m.anon) },
    };
  });
}

/**
 * Relative growth from `from` to `to` along the Theil–Sen line through the points: the line's value
 * at `to` ÷ its value at `from` − 1. null without a line or with a non-positive start.
 */
export function trendGrowth(points: readonly (readonly [number, number])[], from: number, to: number): number | null {
  const line = theilSen(points);
  if (line === null) return null;
  const start = line.intercept + line.slope * from;
  return start > 0 ? round((line.slope * (to - from)) / start, 4) : null;
}

export function memoryChecks(workers: readonly WorkerMemory[], o: Pick<MemoryOptions, 'maxSteadyMb' | 'maxGrowth'>): CheckResult[] {
  const worst = (f: (w: WorkerMemory) => number | null | undefined) => Math.max(...workers.map((w) => f(w) ?? Infinity));
  const check = (label: string, measured: number, max: number): CheckResult =>
    ({ label, measured: Number.isFinite(measured) ? measured : null, target: `≤ ${max}`, met: measured <= max });
  return [
    check('RSS per worker at steady state (MB)', worst((w) => w.steady.rss), o.maxSteadyMb),
    check('RSS growth over the run (trend after warm-up)', worst((w) => w.trend?.rss), o.maxGrowth),
    check('private memory (RssAnon) growth over the run (trend after warm-up)', worst((w) => w.trend?.anon), o.maxGrowth),
  ];
}

function mean(samples: readonly MemorySample[], pid: number, from: number, to: number): MemoryUse {
  const xs = samples.filter((s) => s.t >= from && s.t <= to).map((s) => s.workers[pid]).filter((x): x is MemoryUse => x != null);
  const avg = (f: (m: MemoryUse) => number | null) => {
    const v = xs.map(f).filter((x): x is number => x !== null);
    return v.length === 0 ? NaN : round(v.reduce((a, b) => a + b, 0) / v.length, 1);
  };
  return { rss: avg((m) => m.rss), anon: avg((m) => m.anon), shared: avg((m) => m.shared), pss: avg((m) => m.pss) };
}

function change(from: number, to: number): number | null {
  return from > 0 && Number.isFinite(to) ? round(to / from - 1, 4) : null;
}

export function mixedFlow(
  url: string, p: { challenge: string; verify: string }, ctx: RunContext, durationS: number, rate?: number,
): Promise<LoadResult> {
  const headers = { origin: BENCH_ORIGIN };
  return runLoad({
    url, durationS, connections: ctx.connections, workers: ctx.loadWorkers, ...(rate === undefined ? {} : { rate }),
    request: [
      { method: 'GET', path: p.challenge, headers, onResponse: FLOW_CHALLENGE },
      { method: 'POST', path: p.verify, headers: { ...headers, 'content-type': 'application/json' }, setupRequest: FLOW_VERIFY },
    ],
  });
}
