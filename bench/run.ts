// The benchmark runner (issue 7): `npm run bench [-- options]`. See bench/README.md.
//
//   --quick               3 s runs, 1 s warm-up (development; the numbers are rough)
//   --only S1,S2,memory   these scenarios only (S0, S2c, S3n, memory and sustained are never in the default set)
//   --memory              add the 10-minute memory scenario to the run
//   --duration S          seconds per run (default 10, --quick 3)
//   --runs N              full-speed and 50%-rate runs per target (default 3, at least 3 for a report)
//   --connections N       default 100
//   --load-workers N      autocannon worker threads (default half the cores, at least 1)
//   --workers N           service and baseline worker processes (default: the cores)
//   --memory-duration S   length of the memory scenario (default 600, --quick 60)
//   --sustained           add the sustained-verification scenario (2,000 verifications/s, then a rotation flood)
//   --sustained-duration S  length of its sustained run (default 600, --quick 60)
//   --no-readme           do not rewrite the tables in README.md and bench/README.md
//   --report              run nothing: rewrite those tables from the newest results files
//   --require-wrk         fail when wrk is missing (implied by CI=true)
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKeyTemplate, type KeyTemplate } from './lib/keys.js';
import { runLoad, runWrk, wrkVersion } from './lib/load.js';
import { loadAverage, machineInfo, describeMachine } from './lib/machine.js';
import { runMemory } from './lib/memory.js';
import { failedNodes, runNodes, S3N_TITLE } from './lib/nodes.js';
import { runSustained } from './lib/sustained.js';
import { stopAll } from './lib/processes.js';
import {
  latestResults, renderSection, renderSummary, updateReadme, writeResults, type GeneratorCheck, type RunOptions,
} from './lib/report.js';
import { failedScenario, runScenario, type RunContext } from './lib/scenario-runner.js';
import { ratio } from './lib/stats.js';
import { startL } from './lib/targets.js';
import { SCENARIOS } from './scenarios/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = join(ROOT, 'bench', 'results');
const README = join(ROOT, 'README.md');
const BENCH_README = join(ROOT, 'bench', 'README.md');

interface Plan extends Omit<RunOptions, 'generator'> {
  readonly only: readonly string[];
  readonly memoryDurationS: number;
  readonly sustainedDurationS: number;
  readonly readme: boolean;
  readonly reportOnly: boolean;
  readonly requireWrk: boolean;
}

function plan(argv: string[]): Plan {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      memory: { type: 'boolean', default: false },
      duration: { type: 'string' },
      runs: { type: 'string' },
      connections: { type: 'string' },
      'load-workers': { type: 'string' },
      workers: { type: 'string' },
      'memory-duration': { type: 'string' },
      sustained: { type: 'boolean', default: false },
      'sustained-duration': { type: 'string' },
      'no-readme': { type: 'boolean', default: false },
      report: { type: 'boolean', default: false },
      'require-wrk': { type: 'boolean', default: false },
    },
  });
  const int = (name: string, raw: string | undefined, def: number, min: number) => {
    if (raw === undefined) return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const cores = availableParallelism();
  const known = [...SCENARIOS.map((s) => s.id), 'S3n', 'memory', 'sustained'];
  let only = v.only === undefined
    ? SCENARIOS.filter((s) => !s.optIn).map((s) => s.id)
    : v.only.split(',').map((x) => x.trim()).filter((x) => x !== '');
  for (const id of only) if (!known.includes(id)) throw new Error(`unknown scenario "${id}" (known: ${known.join(', ')})`);
  if (v.memory && !only.includes('memory')) only = [...only, 'memory'];
  if (v.sustained && !only.includes('sustained')) only = [...only, 'sustained'];
  const quick = v.quick ?? false;
  return {
    quick,
    only,
    durationS: int('duration', v.duration, quick ? 3 : 10, 1),
    warmupS: quick ? 1 : 2,
    runs: int('runs', v.runs, 3, 1),
    connections: int('connections', v.connections, 100, 1),
    loadWorkers: int('load-workers', v['load-workers'], Math.max(1, Math.floor(cores / 2)), 0),
    workers: int('workers', v.workers, cores, 1),
    memoryDurationS: int('memory-duration', v['memory-duration'], quick ? 60 : 600, 10),
    sustainedDurationS: int('sustained-duration', v['sustained-duration'], quick ? 60 : 600, 10),
    readme: !(v['no-readme'] ?? false),
    reportOnly: v.report ?? false,
    requireWrk: (v['require-wrk'] ?? false) || process.env.CI === 'true',
  };
}

const WRK_MISSING = 'wrk is not installed, so the load generator was not checked: install it with `apt-get install -y wrk` ' +
  '(Debian/Ubuntu) or `brew install wrk`.';

async function generatorCheck(p: Plan, version: string | null, log: (m: string) => void): Promise<GeneratorCheck | null> {
  if (version === null) {
    log(`  ${WRK_MISSING}`);
    return { autocannonRps: null, wrk: null, ratio: null, note: WRK_MISSING };
  }
  const l = await startL(p.workers);
  try {
    const request = { method: 'GET' as const, path: '/' };
    await runLoad({ url: l.server.url, request, durationS: p.warmupS, connections: p.connections, workers: p.loadWorkers });
    const ac = await runLoad({ url: l.server.url, request, durationS: p.durationS, connections: p.connections, workers: p.loadWorkers });
    // wrk's best: one thread per core (its own default is 2).
    const threads = availableParallelism();
    const wrk = await runWrk(`${l.server.url}/`, { threads, connections: p.connections, durationS: p.durationS, version });
    const r = ratio(wrk.rps, ac.rps);
    log(`  L: autocannon ${ac.rps} req/s, ${version} ${wrk.rps} req/s (wrk ÷ autocannon ${r})`);
    const note = r !== null && r > 1.2
      ? 'autocannon, not L, limits L\'s figure here, so ÷ L is optimistic for targets near L\'s speed; the GET scenarios also give ÷ L under wrk.'
      : 'autocannon reaches what wrk reaches on L: the generator is not the limit.';
    return { autocannonRps: ac.rps, wrk, ratio: r, note };
  } finally {
    await l.server.stop();
  }
}

function autocannonVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'autocannon', 'package.json'), 'utf8')) as { version: string }).version;
}

/** The summary table in README.md and every table in bench/README.md, from the newest results. */
function writeReports(log: (m: string) => void): void {
  const latest = latestResults(RESULTS_DIR);
  for (const [path, section] of [[README, renderSummary(latest)], [BENCH_README, renderSection(latest)]] as const) {
    const name = path === README ? 'README.md' : 'bench/README.md';
    log(updateReadme(path, section) ? `${name}: benchmark tables updated` : `${name} has no bench markers: tables not written`);
  }
}

async function main(): Promise<number> {
  // Output piped into `head` must not kill the run halfway (EPIPE) and leave servers behind.
  process.stdout.on('error', () => {});
  const p = plan(process.argv.slice(2));
  const log = (m: string) => console.log(m);
  if (p.reportOnly) {
    writeReports(log);
    return 0;
  }
  const machine = machineInfo();
  const scenarios = SCENARIOS.filter((s) => p.only.includes(s.id));
  log(`palisade bench: ${describeMachine(machine)}, load average ${loadAverage().join(' ')}`);
  log(`  scenarios ${p.only.join(', ')}; ${p.runs} × ${p.durationS} s per target, ${p.connections} connections, ` +
    `${p.loadWorkers} autocannon worker thread(s), ${p.workers} server workers${p.quick ? ' (--quick)' : ''}`);
  if (p.runs < 3) log('  fewer than 3 runs: medians are not meaningful');

  let template: KeyTemplate | null = null;
  const onSignal = () => {
    void stopAll().finally(() => { template?.remove(); process.exit(130); });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const wrk = await wrkVersion();
    if (wrk === null && p.requireWrk) throw new Error(WRK_MISSING);
    template = await createKeyTemplate(randomBytes(24).toString('base64url'));
    const ctx: RunContext = {
      wrk, durationS: p.durationS, warmupS: p.warmupS, runs: p.runs, workers: p.workers, template,
      connections: p.connections, loadWorkers: p.loadWorkers, keys: template.keys, secrets: template.secrets, log,
    };
    const options: RunOptions = {
      generator: `autocannon ${autocannonVersion()}`, quick: p.quick, durationS: p.durationS, warmupS: p.warmupS, runs: p.runs, connections: p.connections,
      loadWorkers: p.loadWorkers, workers: p.workers,
    };
    let check: GeneratorCheck | null = null;
    if (scenarios.length > 0) {
      log('generator check (L: autocannon vs wrk)');
      check = await generatorCheck(p, wrk, log);
    }
    for (const s of scenarios) {
      log(`${s.id}: ${s.title}`);
      // One scenario failing (a target crashing, say) is reported and the others still run.
      const result = await runScenario(s, ctx).catch((err: unknown) => {
        log(`  ${s.id} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
        return failedScenario(s, `failed: ${err instanceof Error ? err.message : String(err)}`);
      });
      const path = writeResults(RESULTS_DIR, s.id, { kind: 'scenario', date: new Date().toISOString(), machine, options, generatorCheck: check, result });
      log(`  → ${path}`);
      for (const c of result.checks) log(`  ${c.met ? 'met    ' : 'NOT MET'} ${c.label} ${c.target}: ${c.measured ?? '—'}${c.wrk != null ? ` (wrk: ${c.wrk})` : ''}`);
    }
    if (p.only.includes('S3n')) {
      log(`S3n: ${S3N_TITLE}`);
      // A node crashing ends the scenario, not the invocation (as for the others above).
      const result = await runNodes(ctx, { ratePerNode: 1000 }).catch((err: unknown) => {
        log(`  S3n failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
        return failedNodes(`failed: ${err instanceof Error ? err.message : String(err)}`);
      });
      const path = writeResults(RESULTS_DIR, 'S3n', { kind: 'nodes', date: new Date().toISOString(), machine, options, result });
      log(`  → ${path}`);
    }
    if (p.only.includes('memory')) {
      log(`memory: mixed S1/S2 at 50% for ${p.memoryDurationS} s`);
      const result = await runMemory(ctx, {
        durationS: p.memoryDurationS, calibrateS: p.quick ? 3 : 5, sampleEveryS: 10, maxSteadyMb: 120, maxGrowth: 0.05,
      });
      const path = writeResults(RESULTS_DIR, 'memory', { kind: 'memory', date: new Date().toISOString(), machine, options, result });
      log(`  → ${path}`);
      for (const c of result.checks) log(`  ${c.met ? 'met    ' : 'NOT MET'} ${c.label} ${c.target}: ${c.measured ?? '—'}`);
    }
    if (p.only.includes('sustained')) {
      log(`sustained: 2,000 verifications/s for ${p.sustainedDurationS} s on the default store, then a rotation flood`);
      const result = await runSustained(ctx, {
        rate: 2000, durationS: p.sustainedDurationS, sampleEveryS: 10, floodS: p.quick ? 10 : 60, cleanRate: 500, floodCapacity: 65_536,
      });
      const path = writeResults(RESULTS_DIR, 'sustained', { kind: 'sustained', date: new Date().toISOString(), machine, options, result });
      log(`  → ${path}`);
      for (const c of result.checks) log(`  ${c.met ? 'met    ' : 'NOT MET'} ${c.label} ${c.target}: ${c.measured ?? '—'}`);
    }
    if (p.readme) writeReports(log);
    return 0;
  } finally {
    await stopAll();
    template?.remove();
  }
}

main().then((code) => { process.exitCode = code; }, (err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : err);
  process.exitCode = 1;
});

