// S3n (opt-in: `npm run bench -- --only S3n`): Palisade nodes sharing one Redis, on one machine, in
// one invocation. Arms, each with the same total of connections and load-generator threads:
//   - one node with W workers (W = --workers, default the cores) taking every verification;
//   - two nodes with W/2 workers each, the connections alternating between them (one autocannon
//     with both URLs), so the total worker count is the same: what splitting a node costs;
//   - one node with W/2 workers: what adding a second node gives, on a machine whose cores the
//     second node must share (no linear scaling can show here).
// Then the two nodes at a fixed rate per node (the paced generator, one per node), the load the
// sizing model of docs/scaling.md assumes. Each run is S3's verify load (unique pre-solved payloads,
// production configuration); the order of the arms rotates from round to round.
//
// Redis is a throwaway redis-server started for the scenario (AOF on, appendfsync everysec, as
// docs/scaling.md asks of production), so that its counters hold the nodes' commands alone. Around
// each run, with the nodes idle, the runner takes a snapshot (bench/lib/redis-window.ts): Redis's
// INFO, each node's verification count (/.metrics) and server CPU, and what each process sent to
// Redis (bench/lib/redis-count.cjs, preloaded into the nodes).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startThrowawayRedis, type ThrowawayRedis } from '../../test/helpers/redis-server.js';
import { S3 } from '../scenarios/s3-verify-redis.js';
import { GET_HEADERS, POST_HEADERS } from './drivers.js';
import { runLoad, type LoadResult } from './load.js';
import { loadAverage } from './machine.js';
import { metricValue } from './metrics-text.js';
import { runPaced } from './paced.js';
import { prepareFeed, solvePayload, verifyBody } from './payloads.js';
import { serverCpuMs } from './processes.js';
import {
  parseInfo, perVerification, readClientCounts, redisWindow, type ClientCounts, type PerVerification, type RedisSnapshot, type RedisWindow,
} from './redis-window.js';
import { rotate, type CheckResult, type RunContext } from './scenario-runner.js';
import { median, ratio, round } from './stats.js';
import { startPalisade, type Target } from './targets.js';
import type { Feed } from './types.js';

const COUNT_MODULE = join(fileURLToPath(new URL('../../../', import.meta.url)), 'bench', 'lib', 'redis-count.cjs');
/** Longer than redis-count.cjs's write interval: the counts on disk are the last ones. */
const SETTLE_MS = 300;
const INITIAL_ESTIMATE = 6_000;
const FEED_ATTEMPTS = 3;
const VERIFIED = 'palisade_api_verifications_success_total';

export const S3N_TITLE = 'POST /v1/verify, two nodes sharing Redis beside one node';

export interface NodesOptions {
  /** Verifications per second per node in the fixed-rate runs (docs/scaling.md's model: 1,000). */
  readonly ratePerNode: number;
}

export interface NodesRun {
  /** autocannon over every node (full speed), or the paced generator's run per node (fixed rate). */
  readonly loads: readonly LoadResult[];
  /** Successful verifications per node during the run (/.metrics). */
  readonly verifiedPerNode: readonly number[];
  readonly durationS: number;
  /** Verifications per second, all nodes. */
  readonly rps: number;
  readonly perNodeRps: readonly number[];
  /** CPU of every process of the arm's nodes ÷ verifications, µs. */
  readonly serverCpuUs: number | null;
  readonly redis: RedisWindow;
  readonly perVerification: PerVerification | null;
  /** Errors, timeouts, non-2xx answers, or 2xx answers and verifications that do not agree. */
  readonly troubled: boolean;
}

export interface NodesArmResult {
  /** '1×2': nodes × workers per node. */
  readonly id: string;
  readonly nodes: number;
  readonly workersPerNode: number;
  readonly runs: readonly NodesRun[];
  /** Median over the runs. */
  readonly rps: number;
  /** Per node, in node order, of the run whose total is the median (the lower of the two middle ones for an even count). */
  readonly perNodeRps: readonly number[];
  readonly serverCpuUs: number | null;
  /** Medians over the runs. */
  readonly redis: PerVerification | null;
  readonly troubled: number;
}

export interface NodesResult {
  readonly id: 'S3n';
  readonly title: string;
  readonly skipped: string | null;
  readonly loadBefore: readonly number[];
  readonly loadAfter: readonly number[];
  readonly redisVersion: string | null;
  /** Full speed, in the order they were started (one node W workers, two nodes, one node W/2). */
  readonly arms: readonly NodesArmResult[];
  /** The two nodes at `ratePerNode` each (paced); latencies are the medians over the runs of both nodes' p50 and p99. */
  readonly fixedRate: (NodesArmResult & { readonly ratePerNode: number; readonly paced: { readonly p50: number; readonly p99: number } }) | null;
  /** Two nodes ÷ one node of the same total workers; two nodes ÷ one node of half the workers (total, and per node). */
  readonly ratios: { readonly split: number | null; readonly added: number | null; readonly perNodeAdded: number | null };
  readonly checks: readonly CheckResult[];
}

interface Node {
  readonly name: string;
  readonly target: Target;
  readonly countDir: string;
}

interface Arm {
  readonly id: string;
  readonly workersPerNode: number;
  readonly nodes: readonly Node[];
}

interface Snapshot {
  readonly redis: RedisSnapshot;
  readonly client: ClientCounts;
  readonly verified: readonly number[];
  readonly cpuMs: number | null;
}

export async function runNodes(ctx: RunContext, o: NodesOptions): Promise<NodesResult> {
  const loadBefore = loadAverage();
  const result = (fields: Partial<NodesResult>): NodesResult => ({ ...failedNodes(null, loadBefore), ...fields });
  let redis: ThrowawayRedis;
  try {
    redis = await startThrowawayRedis([], { persistent: true });
  } catch (err) {
    const reason = `no throwaway Redis: ${err instanceof Error ? err.message : String(err)}`;
    ctx.log(`  S3n skipped: ${reason}`);
    return result({ skipped: reason });
  }
  const countRoot = mkdtempSync(join(tmpdir(), 'pb-redis-count-'));
  const started: Node[] = [];
  try {
    const redisVersion = /^redis_version:(\S+)/m.exec(redis.command('INFO', 'server'))?.[1] ?? null;
    const half = Math.max(1, Math.floor(ctx.workers / 2));
    const startNode = async (name: string, workers: number): Promise<Node> => {
      const countDir = join(countRoot, name);
      mkdirSync(countDir);
      ctx.log(`  starting ${name} (${workers} worker${workers === 1 ? '' : 's'})`);
      const target = await startPalisade(ctx.template, 'production', workers, {
        REDIS_URL: redis.url, CACHE_DURATION_USED_CHALLENGES: '30m', NODE_NAME: name,
        NODE_OPTIONS: `--require ${COUNT_MODULE}`, BENCH_REDIS_COUNT_DIR: countDir,
      });
      const node = { name, target, countDir };
      started.push(node);
      return node;
    };
    const arms: Arm[] = [{ id: `1×${ctx.workers}`, workersPerNode: ctx.workers, nodes: [await startNode('one', ctx.workers)] }];
    arms.push({ id: `2×${half}`, workersPerNode: half, nodes: [await startNode('pair-a', half), await startNode('pair-b', half)] });
    if (half !== ctx.workers) arms.push({ id: `1×${half}`, workersPerNode: half, nodes: [await startNode('half', half)] });
    const pair = arms[1]!;

    for (const n of started) {
      const reason = await S3.checkTarget!(n.target.server.url);
      if (reason) return result({ skipped: `${n.name}: ${reason}`, redisVersion });
    }
    const across = await checkAcrossNodes(pair.nodes[0]!, pair.nodes[1]!, ctx);
    if (across) return result({ skipped: across, redisVersion });
    await sleep(SETTLE_MS);
    for (const n of started) {
      if (Object.keys(readClientCounts([n.countDir]).requests).length === 0) {
        return result({ skipped: `${n.name}: no Redis counts from bench/lib/redis-count.cjs (not preloaded?)`, redisVersion });
      }
    }

    const estimates = new Map(arms.map((a) => [a.id, INITIAL_ESTIMATE]));
    const full = async (arm: Arm, durationS: number) => {
      const { run, estimate } = await fullSpeed(arm, durationS, estimates.get(arm.id)!, ctx, redis);
      estimates.set(arm.id, estimate);
      return run;
    };
    for (const arm of arms) {
      ctx.log(`  warm-up ${arm.id}`);
      await full(arm, ctx.warmupS);
    }
    const runs = new Map<string, NodesRun[]>(arms.map((a) => [a.id, []]));
    for (let round = 0; round < ctx.runs; round++) {
      for (const arm of rotate(arms, round)) {
        const r = await full(arm, ctx.durationS);
        runs.get(arm.id)!.push(r);
        ctx.log(`  round ${round + 1} ${arm.id}: ${describe(r)}`);
      }
    }
    const paced: NodesRun[] = [];
    for (let round = 0; round < ctx.runs; round++) {
      const r = await fixedRate(pair, o.ratePerNode, ctx.durationS, ctx, redis);
      paced.push(r);
      ctx.log(`  fixed rate ${round + 1} ${pair.id} at ${o.ratePerNode}/s per node: ${describe(r)}, ` +
        `p99 ${r.loads.map((l) => l.latency.p99).join(' / ')} ms`);
    }
    const armResults = arms.map((a) => summarizeArm(a, runs.get(a.id)!));
    const [one, two, halfArm] = armResults;
    const pacedLatency = (q: 'p50' | 'p99') => round(median(paced.flatMap((r) => r.loads.map((l) => l.latency[q]))), 2);
    return result({
      redisVersion,
      arms: armResults,
      fixedRate: {
        ...summarizeArm(pair, paced), ratePerNode: o.ratePerNode,
        paced: { p50: pacedLatency('p50'), p99: pacedLatency('p99') },
      },
      ratios: {
        split: ratio(two?.rps, one?.rps),
        added: halfArm ? ratio(two?.rps, halfArm.rps) : null,
        perNodeAdded: halfArm && two ? ratio(median(two.perNodeRps), halfArm.rps) : null,
      },
    });
  } finally {
    for (const n of started) await n.target.server.stop();
    await redis.stop();
    rmSync(countRoot, { recursive: true, force: true });
  }
}

/** The result of a run that did not measure (skipped: why), or the frame a measured one fills. */
export function failedNodes(skipped: string | null, loadBefore: readonly number[] = loadAverage()): NodesResult {
  return {
    id: 'S3n', title: S3N_TITLE, skipped, loadBefore, loadAfter: loadAverage(), redisVersion: null, arms: [], fixedRate: null,
    ratios: { split: null, added: null, perNodeAdded: null }, checks: [],
  };
}

/**
 * A payload verified on one node is refused on the other (the claim is in the shared Redis), and a
 * challenge issued by one node verifies on another (the nodes share SECRET_SEED). Returns why not, or null.
 */
async function checkAcrossNodes(a: Node, b: Node, ctx: RunContext): Promise<string | null> {
  const challenge = await fetch(a.target.server.url + challengePath(ctx), { headers: GET_HEADERS });
  if (challenge.status !== 200) return `${a.name}: GET /v1/challenge answered ${challenge.status}`;
  const body = verifyBody(solvePayload(await challenge.text()));
  const post = async (n: Node) => {
    const res = await fetch(n.target.server.url + verifyPath(ctx), { method: 'POST', headers: POST_HEADERS, body });
    return { status: res.status, json: (await res.json()) as { verified?: boolean; reason?: string } };
  };
  const onB = await post(b);
  if (onB.status !== 200 || onB.json.verified !== true) return `${b.name} did not verify a challenge of ${a.name}: ${onB.status} ${JSON.stringify(onB.json)}`;
  const onA = await post(a);
  if (onA.json.verified !== false || onA.json.reason !== 'PAYLOAD_ALREADY_USED') {
    return `${a.name} did not refuse a payload verified on ${b.name}: ${onA.status} ${JSON.stringify(onA.json)}`;
  }
  return null;
}

/** Every node's connections at full speed, one feed for all (a challenge verifies on any node). */
async function fullSpeed(arm: Arm, durationS: number, estimate: number, ctx: RunContext, redis: ThrowawayRedis): Promise<{ run: NodesRun; estimate: number }> {
  const urls = arm.nodes.map((n) => n.target.server.url);
  for (let attempt = 1; ; attempt++) {
    const count = Math.ceil(estimate * 1.3 * durationS) + 3 * ctx.connections;
    const feed = await prepareFeed(urls[0]!, challengePath(ctx), GET_HEADERS, count);
    const before = await snapshot(arm, redis);
    const load = await runLoad({
      url: urls, request: { method: 'POST', path: verifyPath(ctx), headers: POST_HEADERS, feed }, durationS, connections: ctx.connections, workers: ctx.loadWorkers,
    });
    const after = await snapshot(arm, redis);
    const run = measured(before, after, [load], load.durationS, ctx.connections);
    estimate = Math.max(estimate, run.rps);
    if (load.fed!.claimed <= count) return { run, estimate };
    estimate = Math.max(estimate * 2, (load.fed!.claimed / durationS) * 1.5);
    if (attempt === FEED_ATTEMPTS) {
      ctx.log(`    ${arm.id}: feed still too small after ${attempt} attempts; keeping a run whose last requests went to /.live`);
      return { run, estimate };
    }
    ctx.log(`    ${arm.id}: feed of ${count} used up; repeating the run with a larger one`);
  }
}

/** Each node at `rate` verifications per second, by a paced generator of its own. */
async function fixedRate(arm: Arm, rate: number, durationS: number, ctx: RunContext, redis: ThrowawayRedis): Promise<NodesRun> {
  const connections = Math.max(1, Math.floor(ctx.connections / arm.nodes.length));
  const count = Math.ceil(rate * (durationS + 1)) + 3 * connections;
  const feeds: Feed[] = [];
  for (const n of arm.nodes) feeds.push(await prepareFeed(n.target.server.url, challengePath(ctx), GET_HEADERS, count));
  const before = await snapshot(arm, redis);
  const loads = await Promise.all(arm.nodes.map((n, i) => runPaced({
    url: n.target.server.url, request: { method: 'POST', path: verifyPath(ctx), headers: POST_HEADERS, feed: feeds[i]! }, rate, durationS, connections,
  })));
  const after = await snapshot(arm, redis);
  return measured(before, after, loads, durationS, ctx.connections);
}

async function snapshot(arm: Arm, redis: ThrowawayRedis): Promise<Snapshot> {
  await sleep(SETTLE_MS);
  const verified: number[] = [];
  let cpuMs: number | null = 0;
  for (const n of arm.nodes) {
    const res = await fetch(`${n.target.server.url}/.metrics`);
    const v = metricValue(await res.text(), VERIFIED);
    if (res.status !== 200 || v === null) throw new Error(`${n.name}: GET /.metrics answered ${res.status} without ${VERIFIED}`);
    verified.push(v);
    const cpu = serverCpuMs(n.target.server);
    cpuMs = cpu === null || cpuMs === null ? null : cpuMs + cpu;
  }
  return {
    redis: parseInfo(redis.command('INFO', 'commandstats', 'stats', 'cpu', 'memory', 'keyspace')),
    client: readClientCounts(arm.nodes.map((n) => n.countDir)),
    verified, cpuMs,
  };
}

function measured(before: Snapshot, after: Snapshot, loads: readonly LoadResult[], durationS: number, connections: number): NodesRun {
  const verifiedPerNode = after.verified.map((v, i) => v - before.verified[i]!);
  const verifications = verifiedPerNode.reduce((a, b) => a + b, 0);
  const window = redisWindow(before, after, verifications);
  const ok = loads.reduce((sum, l) => sum + Object.entries(l.statusCodes).reduce((s, [code, n]) => s + (code.startsWith('2') ? n : 0), 0), 0);
  return {
    loads, verifiedPerNode, durationS,
    rps: round(verifications / durationS), perNodeRps: verifiedPerNode.map((v) => round(v / durationS)),
    serverCpuUs: before.cpuMs === null || after.cpuMs === null || verifications === 0 ? null : Math.round(((after.cpuMs - before.cpuMs) * 1000) / verifications),
    redis: window, perVerification: perVerification(window),
    // autocannon stops counting at the end of the run with a request in flight on each connection,
    // which the nodes still answer: up to `connections` more verifications than 2xx answers.
    troubled: ok > verifications || verifications - ok > connections || loads.some((l) => l.errors > 0 || l.timeouts > 0 || l.non2xx > 0),
  };
}

function summarizeArm(arm: Arm, runs: readonly NodesRun[]): NodesArmResult {
  const perRun = runs.map((r) => r.perVerification).filter((p): p is PerVerification => p !== null);
  const cpu = runs.map((r) => r.serverCpuUs).filter((c): c is number => c !== null);
  return {
    id: arm.id, nodes: arm.nodes.length, workersPerNode: arm.workersPerNode, runs,
    rps: round(median(runs.map((r) => r.rps))),
    perNodeRps: [...runs].sort((a, b) => a.rps - b.rps)[(runs.length - 1) >> 1]?.perNodeRps ?? [],
    serverCpuUs: cpu.length === 0 ? null : Math.round(median(cpu)),
    redis: perRun.length === 0 ? null : medianPerVerification(perRun),
    troubled: runs.filter((r) => r.troubled).length,
  };
}

/** Each figure's median over the runs; a command missing from a run counts 0 there. */
export function medianPerVerification(runs: readonly PerVerification[]): PerVerification {
  const m = (pick: (p: PerVerification) => number) => round(median(runs.map(pick)), 4);
  const by = (pick: (p: PerVerification) => Readonly<Record<string, number>>) => {
    const names = [...new Set(runs.flatMap((r) => Object.keys(pick(r))))].sort();
    return Object.fromEntries(names.map((n) => [n, m((r) => pick(r)[n] ?? 0)]));
  };
  const bytes = runs.map((r) => r.bytesPerKey).filter((b): b is number => b !== null);
  return {
    executed: m((r) => r.executed), executedBy: by((r) => r.executedBy), requests: m((r) => r.requests), requestsBy: by((r) => r.requestsBy),
    roundTrips: m((r) => r.roundTrips), reads: m((r) => r.reads), redisCpuUs: round(median(runs.map((r) => r.redisCpuUs)), 2),
    bytesPerKey: bytes.length === 0 ? null : Math.round(median(bytes)),
  };
}

function challengePath(ctx: RunContext): string {
  return `/v1/challenge?apiKey=${ctx.keys.narrow}`;
}

function verifyPath(ctx: RunContext): string {
  return `/v1/verify?apiKey=${ctx.keys.narrow}`;
}

function describe(r: NodesRun): string {
  const p = r.perVerification;
  return `${r.rps} verifications/s (${r.perNodeRps.join(' + ')})` +
    (p === null ? '' : `; per verification: ${p.executed} commands executed, ${p.requests} requests, ${p.roundTrips} round trips, ${p.redisCpuUs} µs of Redis CPU`) +
    (r.troubled ? ' [errors or non-verified answers]' : '');
}
