// One scenario, start to end: start every target (each Palisade configuration on a fresh data
// directory, then the baselines), check each answers as the scenario needs, warm each up, then
// `runs` rounds at full speed and `runs` rounds at 50% of each target's median (each round: autocannon
// -R, then the paced open-loop generator), the order of the targets rotating from round to round so
// that a noisy moment hits them in turn. Medians, ratios and issue 7's targets are computed from this
// one invocation.
import { availableParallelism } from 'node:os';
import type { Check, ConfigName, Scenario } from '../scenarios/scenario.js';
import { checkChallenge, checkClassifier, checkVerify, createDriver, type Driver, type DriverContext } from './drivers.js';
import { measureDerivationRate, type DerivationRate } from './derive-rate.js';
import type { KeyTemplate } from './keys.js';
import { runWrk, type Latency, type LoadResult, type WrkResult } from './load.js';
import { loadAverage } from './machine.js';
import { median, ratio, round } from './stats.js';
import { measureStockedPool, type StockedResult } from './stocked-pool.js';
import { startB, startL, startP, startPalisade, type Target } from './targets.js';

export interface RunContext extends DriverContext {
  readonly durationS: number;
  readonly warmupS: number;
  readonly runs: number;
  /** Service and baseline worker processes. */
  readonly workers: number;
  readonly template: KeyTemplate;
  /** wrk's version when installed: GET scenarios then also run each target under wrk every round. */
  readonly wrk: string | null;
}

export interface TargetResult {
  readonly id: string;
  readonly kind: Target['kind'];
  readonly config: ConfigName | null;
  readonly runs: readonly LoadResult[];
  /** autocannon -R at latencyRate (bursts at the top of each second: see bench/lib/paced.ts). */
  readonly latencyRuns: readonly LoadResult[];
  /** The paced open-loop generator at latencyRate. */
  readonly pacedRuns: readonly LoadResult[];
  /** Median req/s of the full-speed runs. */
  readonly rps: number;
  /** GET scenarios with wrk installed: a wrk run per round, its median and the ratio to L's. */
  readonly wrkRuns: readonly WrkResult[];
  readonly wrkRps: number | null;
  readonly wrkVsL: number | null;
  /** The fixed rate of the latency runs (50% of rps). */
  readonly latencyRate: number;
  /** Medians over the autocannon -R runs, ms. */
  readonly latency: Latency;
  /** Medians over the paced runs, ms: what the p99 targets are checked against. */
  readonly paced: Latency;
  /** Runs with errors, timeouts or non-2xx answers (the numbers are then suspect). */
  readonly troubled: number;
  /** Median over the full-speed runs of the server's CPU per answer, µs (primary and workers; absent from older results). */
  readonly cpuUsPerAnswer?: number | null;
  readonly vsL: number | null;
  readonly vsP: number | null;
  /** ÷ B, the naive-Bayes baseline (S6; absent from results written before it). */
  readonly vsB?: number | null;
}

export interface CheckResult {
  readonly label: string;
  readonly measured: number | null;
  /** GET scenarios' ratio targets: the same ratio under wrk (shown beside; `met` is autocannon's). */
  readonly wrk?: number | null;
  readonly target: string;
  readonly met: boolean;
}

export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  readonly skipped: string | null;
  readonly loadBefore: readonly number[];
  readonly loadAfter: readonly number[];
  readonly targets: readonly TargetResult[];
  /** S4: the derivation alone, per round, and issuance ÷ derivation per configuration. */
  readonly derivation: {
    readonly runs: readonly DerivationRate[];
    readonly rate: number;
    /** Issuance (autocannon req/s) ÷ derivation rate, per configuration. */
    readonly ratios: Record<string, number | null>;
    /** The same with wrk's req/s (less generator on the cores). */
    readonly wrkRatios: Record<string, number | null>;
  } | null;
  /** S4: issuance from a stocked pool, in bursts, beside L's. */
  readonly stockedPool: StockedResult | null;
  /** S1: production ÷ production without the flood limit (issue 6). */
  readonly floodRatio: number | null;
  /** S1: production ÷ production without IP intelligence (absent from results written before it). */
  readonly intelRatio?: number | null;
  /** S2c: production-fields ÷ production, the classifying key's policy ÷ the default's (payloads without fields). */
  readonly fieldsRatio?: number | null;
  /** S2c: production-fields's server CPU per answer ÷ production's (above 1: the policy costs CPU). */
  readonly fieldsCpuRatio?: number | null;
  readonly checks: readonly CheckResult[];
}

/** The result of a scenario that did not run (or did not finish), with the reason. */
export function failedScenario(s: Scenario, reason: string, loadBefore: readonly number[] = loadAverage()): ScenarioResult {
  return { id: s.id, title: s.title, skipped: reason, loadBefore, loadAfter: loadAverage(), targets: [], derivation: null, stockedPool: null, floodRatio: null, checks: [] };
}

export async function runScenario(s: Scenario, ctx: RunContext): Promise<ScenarioResult> {
  const loadBefore = loadAverage();
  const skipped = (reason: string): ScenarioResult => {
    ctx.log(`  ${s.id} skipped: ${reason}`);
    return failedScenario(s, reason, loadBefore);
  };
  const unavailable = await s.unavailable?.();
  if (unavailable) return skipped(unavailable);

  const targets: Target[] = [];
  let services: Awaited<ReturnType<NonNullable<Scenario['services']>>> | null = null;
  try {
    services = (await s.services?.()) ?? null;
    for (const config of s.configs) {
      ctx.log(`  starting palisade:${config}`);
      targets.push(await startPalisade(ctx.template, config, ctx.workers, { ...s.env, ...services?.env }));
    }
    if (s.baselines.includes('L')) targets.push(await startL(ctx.workers));
    if (s.baselines.includes('P')) targets.push(await startP(ctx.workers));
    if (s.baselines.includes('B')) targets.push(await startB(ctx.workers, ctx.secrets[s.key]));

    for (const t of targets) {
      if (t.kind === 'L') continue;
      const reason = (s.endpoint === 'verify' ? await checkVerify(s, t, ctx.keys)
        : s.endpoint === 'classifier' ? await checkClassifier(s, t, ctx.secrets) : await checkChallenge(s, t, ctx.keys))
        ?? (t.kind === 'palisade' ? await s.checkTarget?.(t.server.url) : null);
      if (reason) return skipped(`${t.id}: ${reason}`);
    }
    const serviceTrouble = services?.check?.() ?? null;
    if (serviceTrouble) return skipped(serviceTrouble);

    const firstPalisade = targets.find((t) => t.kind === 'palisade');
    const drivers = new Map<string, Driver>(targets.map((t) => [t.id, createDriver(s, t, ctx, firstPalisade)]));
    const runs = new Map<string, LoadResult[]>(targets.map((t) => [t.id, []]));
    const latencyRuns = new Map<string, LoadResult[]>(targets.map((t) => [t.id, []]));
    const pacedRuns = new Map<string, LoadResult[]>(targets.map((t) => [t.id, []]));
    const wrkRuns = new Map<string, WrkResult[]>(targets.map((t) => [t.id, []]));
    const derivations: DerivationRate[] = [];

    for (const t of targets) {
      ctx.log(`  warm-up ${t.id}`);
      await drivers.get(t.id)!.run(ctx.warmupS, FULL);
    }
    for (let round = 0; round < ctx.runs; round++) {
      for (const t of rotate(targets, round)) {
        const driver = drivers.get(t.id)!;
        const r = await driver.run(ctx.durationS, FULL);
        runs.get(t.id)!.push(r);
        ctx.log(`  round ${round + 1} ${t.id}: ${r.rps} req/s${r.serverCpuUsPerAnswer == null ? '' : `, ${r.serverCpuUsPerAnswer} µs of server CPU per answer`}${trouble(r)}`);
        if (ctx.wrk !== null && driver.wrk !== null) {
          const w = await runWrk(driver.wrk.url, {
            threads: availableParallelism(), connections: ctx.connections, durationS: ctx.durationS, version: ctx.wrk, headers: driver.wrk.headers,
          }, driver.wrk.method === 'POST' ? { body: driver.wrk.body ?? '' } : undefined);
          wrkRuns.get(t.id)!.push(w);
          ctx.log(`  round ${round + 1} ${t.id} (wrk): ${w.rps} req/s${w.non2xx > 0 ? ` [${w.non2xx} non-2xx]` : ''}`);
        }
      }
      if (s.derivation) {
        const d = await measureDerivationRate(ctx.durationS, s.derivation.algorithm, s.derivation.cost);
        derivations.push(d);
        ctx.log(`  round ${round + 1} derivation alone: ${d.rate}/s on ${d.threads} threads`);
      }
    }
    const rates = new Map(targets.map((t) => [t.id, Math.max(1, Math.round(median(runs.get(t.id)!.map((r) => r.rps)) / 2))]));
    for (let round = 0; round < ctx.runs; round++) {
      for (const t of rotate(targets, round)) {
        const rate = rates.get(t.id)!;
        for (const kind of ['autocannon', 'paced'] as const) {
          const r = await drivers.get(t.id)!.run(ctx.durationS, { kind, rate });
          (kind === 'paced' ? pacedRuns : latencyRuns).get(t.id)!.push(r);
          ctx.log(`  latency ${round + 1} ${t.id} at ${rate} req/s (${kind}): p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms${trouble(r)}`);
        }
      }
    }
    const L = targets.find((t) => t.kind === 'L');
    const stocked = s.stockedPool && L && derivations.length > 0
      ? await measureStockedPool(s, s.stockedPool, L, median(derivations.map((d) => d.rate)), ctx)
      : null;
    return summarize(s, targets, { runs, latencyRuns, pacedRuns, wrkRuns }, rates, derivations, stocked, loadBefore);
  } finally {
    for (const t of targets) await t.server.stop();
    await services?.close();
  }
}

const FULL = { kind: 'full' } as const;

interface Measured {
  readonly runs: Map<string, LoadResult[]>;
  readonly latencyRuns: Map<string, LoadResult[]>;
  readonly pacedRuns: Map<string, LoadResult[]>;
  readonly wrkRuns: Map<string, WrkResult[]>;
}

function medianOrNull(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : Math.round(median(known));
}

function medianLatency(runs: readonly LoadResult[]): Latency {
  return {
    p50: median(runs.map((r) => r.latency.p50)), p90: median(runs.map((r) => r.latency.p90)),
    p99: median(runs.map((r) => r.latency.p99)), max: median(runs.map((r) => r.latency.max)),
    mean: round(median(runs.map((r) => r.latency.mean)), 2),
  };
}

function summarize(
  s: Scenario, targets: Target[], m: Measured, rates: Map<string, number>, derivations: DerivationRate[],
  stocked: StockedResult | null, loadBefore: readonly number[],
): ScenarioResult {
  const { runs } = m;
  const rps = (id: string) => (runs.has(id) ? median(runs.get(id)!.map((r) => r.rps)) : null);
  const L = rps('L');
  const P = rps('P');
  const B = rps('B');
  const wrkRps = (id: string) => {
    const w = m.wrkRuns.get(id) ?? [];
    return w.length === 0 ? null : median(w.map((r) => r.rps));
  };
  const wrkL = wrkRps('L');
  const results: TargetResult[] = targets.map((t) => {
    const lat = m.latencyRuns.get(t.id)!;
    const paced = m.pacedRuns.get(t.id)!;
    const own = rps(t.id)!;
    return {
      id: t.id, kind: t.kind, config: t.config, runs: runs.get(t.id)!, latencyRuns: lat, pacedRuns: paced,
      rps: round(own), wrkRuns: m.wrkRuns.get(t.id)!, wrkRps: wrkRps(t.id), wrkVsL: t.kind === 'L' ? null : ratio(wrkRps(t.id), wrkL),
      latencyRate: rates.get(t.id)!, latency: medianLatency(lat), paced: medianLatency(paced),
      troubled: [...runs.get(t.id)!, ...lat, ...paced].filter((r) => trouble(r) !== '').length,
      cpuUsPerAnswer: medianOrNull(runs.get(t.id)!.map((r) => r.serverCpuUsPerAnswer ?? null)),
      vsL: t.kind === 'L' ? null : ratio(own, L),
      vsP: t.kind !== 'palisade' ? null : ratio(own, P),
      vsB: t.kind !== 'palisade' ? null : ratio(own, B),
    };
  });
  const byConfig = (c: ConfigName) => results.find((r) => r.config === c);
  const derivationRate = derivations.length > 0 ? median(derivations.map((d) => d.rate)) : null;
  const derivation = derivationRate === null ? null : {
    runs: derivations, rate: derivationRate,
    ratios: Object.fromEntries(results.filter((r) => r.kind === 'palisade').map((r) => [r.config!, ratio(r.rps, derivationRate)])),
    wrkRatios: Object.fromEntries(results.filter((r) => r.kind === 'palisade').map((r) => [r.config!, ratio(r.wrkRps, derivationRate)])),
  };
  const prod = byConfig('production');
  const noflood = byConfig('production-noflood');
  const nointel = byConfig('production-nointel');
  const fields = byConfig('production-fields');
  return {
    id: s.id, title: s.title, skipped: null, loadBefore, loadAfter: loadAverage(), targets: results, derivation, stockedPool: stocked,
    floodRatio: prod && noflood ? ratio(prod.rps, noflood.rps) : null,
    intelRatio: prod && nointel ? ratio(prod.rps, nointel.rps) : null,
    fieldsRatio: prod && fields ? ratio(fields.rps, prod.rps) : null,
    fieldsCpuRatio: prod && fields ? ratio(fields.cpuUsPerAnswer, prod.cpuUsPerAnswer) : null,
    checks: s.checks.map((c) => evaluate(c, byConfig(c.config), { L, P, B, derivation: derivationRate, byConfig }, derivation?.ratios[c.config] ?? null,
      derivation?.wrkRatios[c.config] ?? null, stocked)),
  };
}

/** The medians a ratio target is decided on: the shown ratios are rounded to two places, `met` is not. */
interface Denominators {
  readonly L: number | null;
  readonly P: number | null;
  readonly B?: number | null;
  readonly derivation: number | null;
  /** Another configuration's result (vsConfig). */
  readonly byConfig?: (c: ConfigName) => TargetResult | undefined;
}

/** a ÷ b ≥ min, unrounded (0.29986 shows as 0.3 and is not ≥ 0.3). */
export function atLeast(a: number | null | undefined, b: number | null, min: number): boolean {
  return a != null && b != null && b > 0 && a / b >= min;
}

/** The shown ratio, with four places (cut, not rounded) where two would round a miss onto the target. */
export function shown(rounded: number | null, a: number | null | undefined, b: number | null, min: number, met: boolean): number | null {
  if (rounded === null || met || rounded < min || a == null || b == null || b <= 0) return rounded;
  return Math.floor((a / b) * 1e4) / 1e4;
}

export function evaluate(
  c: Check, r: TargetResult | undefined, of: Denominators, derivationRatio: number | null, wrkDerivationRatio: number | null,
  stocked: StockedResult | null,
): CheckResult {
  switch (c.kind) {
    case 'vsL':
    case 'vsP': {
      const rounded = (c.kind === 'vsL' ? r?.vsL : r?.vsP) ?? null;
      const base = c.kind === 'vsL' ? of.L : of.P;
      const met = rounded !== null && atLeast(r?.rps, base, c.min);
      const measured = shown(rounded, r?.rps, base, c.min, met);
      const result = { label: `${c.config} ÷ ${c.kind === 'vsL' ? 'L' : 'P'}`, measured, target: `≥ ${c.min}`, met };
      return c.kind === 'vsL' && r?.wrkVsL != null ? { ...result, wrk: r.wrkVsL } : result;
    }
    case 'vsB': {
      const base = of.B ?? null;
      const rounded = r?.vsB ?? null;
      const met = rounded !== null && atLeast(r?.rps, base, c.min);
      return { label: `${c.config} ÷ B`, measured: shown(rounded, r?.rps, base, c.min, met), target: `≥ ${c.min}`, met };
    }
    case 'rps': {
      const measured = r?.rps ?? null;
      return { label: `${c.config} req/s (${c.why})`, measured, target: `≥ ${c.min}`, met: measured !== null && measured >= c.min };
    }
    case 'vsConfig': {
      const base = of.byConfig?.(c.of)?.rps ?? null;
      const rounded = ratio(r?.rps ?? null, base);
      const met = rounded !== null && atLeast(r?.rps, base, c.min);
      return { label: `${c.config} ÷ ${c.of}`, measured: shown(rounded, r?.rps, base, c.min, met), target: `≥ ${c.min}`, met };
    }
    case 'p99': {
      const measured = r?.paced.p99 ?? null;
      return { label: `${c.config} p99 at 50% of max, paced (ms)`, measured, target: `≤ ${c.maxMs}`, met: measured !== null && measured <= c.maxMs };
    }
    case 'derivation': {
      const met = derivationRatio !== null && atLeast(r?.rps, of.derivation, c.min);
      const measured = shown(derivationRatio, r?.rps, of.derivation, c.min, met);
      const result = { label: `${c.config} issuance ÷ derivation alone`, measured, target: `≥ ${c.min}`, met };
      return wrkDerivationRatio === null ? result : { ...result, wrk: wrkDerivationRatio };
    }
    case 'stocked': {
      // Met only when no take of the measured bursts found a pool empty: otherwise the pool did not keep up.
      // Against the L bursts of the configuration's own minutes.
      const own = stocked?.configs[c.config];
      const met = own !== undefined && own.missed === 0 && own.vsL !== null && atLeast(own.rps, own.lRps, c.min);
      const measured = own === undefined ? null : shown(own.vsL, own.rps, own.lRps, c.min, met);
      const label = `${c.config} ÷ L while the pool keeps up (stocked pool, bursts${own && own.missed > 0 ? `; ${own.missed} takes found it empty` : ''})`;
      return { label, measured, target: `≥ ${c.min}`, met };
    }
  }
}

/** `items` from index `by` on, then the ones before: round `by`'s order of the targets. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

function trouble(r: LoadResult): string {
  const parts: string[] = [];
  if (r.errors > 0) parts.push(`${r.errors} errors`);
  if (r.timeouts > 0) parts.push(`${r.timeouts} timeouts`);
  if (r.non2xx > 0) parts.push(`${r.non2xx} non-2xx (${Object.keys(r.statusCodes).join(', ')})`);
  if (r.fed && r.fed.claimed > r.fed.available) parts.push('feed used up: its last requests went to /.live');
  return parts.length === 0 ? '' : ` [${parts.join(', ')}]`;
}
