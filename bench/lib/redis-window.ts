// What Redis did during one load run of the S3n scenario (bench/lib/nodes.ts), per verification: two
// snapshots taken while the nodes are idle, one before and one after the run, and their difference.
// Redis's side (INFO): the commands it executed (commandstats, which counts the commands run inside
// a Lua script as well as the EVALSHA), the socket reads it handled, its CPU time, its memory and
// keys. The nodes' side (bench/lib/redis-count.cjs, one file per process): the requests they sent
// and the event-loop turns in which they sent them (round trips).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { round } from './stats.js';

export interface RedisSnapshot {
  /** cmdstat_<name> calls (subcommands as `config|get`). */
  readonly executed: Readonly<Record<string, number>>;
  /** total_reads_processed: socket reads with client data. */
  readonly reads: number;
  /** used_cpu_sys + used_cpu_user, ms. */
  readonly cpuMs: number;
  readonly usedMemory: number;
  /** Keys in every database. */
  readonly keys: number;
}

export interface ClientCounts {
  /** Requests sent, by command (a defined script by its name: palisadeClaims, palisadeHits, …). */
  readonly requests: Readonly<Record<string, number>>;
  /** Event-loop turns that sent a request other than INFO. */
  readonly turns: number;
}

export interface RedisWindow {
  readonly verifications: number;
  readonly executed: Readonly<Record<string, number>>;
  readonly requests: Readonly<Record<string, number>>;
  readonly turns: number;
  readonly reads: number;
  readonly cpuMs: number;
  readonly memoryBytes: number;
  readonly keys: number;
}

/** Per verification, INFO left out (every process sends INFO memory once a second, whatever the load). */
export interface PerVerification {
  /** Commands Redis executed, those inside scripts included. */
  readonly executed: number;
  readonly executedBy: Readonly<Record<string, number>>;
  /** Requests the nodes sent (one EVALSHA for a batch, however many keys it holds). */
  readonly requests: number;
  readonly requestsBy: Readonly<Record<string, number>>;
  /** Event-loop turns that sent something: the batches of one turn are awaited together. */
  readonly roundTrips: number;
  /** Socket reads Redis handled (INFO's included: a few per second against thousands). */
  readonly reads: number;
  /** Redis CPU, µs. */
  readonly redisCpuUs: number;
  /** Redis memory per key created, bytes (claims, each live until its challenge expires). */
  readonly bytesPerKey: number | null;
}

/** The `INFO commandstats stats cpu memory keyspace` answer as a snapshot. */
export function parseInfo(text: string): RedisSnapshot {
  const executed: Record<string, number> = {};
  const fields = new Map<string, string>();
  let keys = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const stat = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (stat) {
      executed[stat[1]!] = Number(stat[2]);
      continue;
    }
    const db = /^db\d+:keys=(\d+)/.exec(line);
    if (db) {
      keys += Number(db[1]);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  const num = (name: string) => {
    const v = Number(fields.get(name));
    if (!Number.isFinite(v)) throw new Error(`INFO has no ${name}`);
    return v;
  };
  return {
    executed, reads: num('total_reads_processed'), cpuMs: round((num('used_cpu_sys') + num('used_cpu_user')) * 1000, 3),
    usedMemory: num('used_memory'), keys,
  };
}

/** The counts of every process whose file is in `dirs` (bench/lib/redis-count.cjs), summed. */
export function readClientCounts(dirs: readonly string[]): ClientCounts {
  const requests: Record<string, number> = {};
  let turns = 0;
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (!name.endsWith('.json')) continue;
      const c = JSON.parse(readFileSync(join(dir, name), 'utf8')) as { commands: Record<string, number>; turns: number };
      for (const [cmd, n] of Object.entries(c.commands)) requests[cmd] = (requests[cmd] ?? 0) + n;
      turns += c.turns;
    }
  }
  return { requests, turns };
}

export function redisWindow(
  before: { redis: RedisSnapshot; client: ClientCounts }, after: { redis: RedisSnapshot; client: ClientCounts }, verifications: number,
): RedisWindow {
  return {
    verifications,
    executed: difference(before.redis.executed, after.redis.executed),
    requests: difference(before.client.requests, after.client.requests),
    turns: after.client.turns - before.client.turns,
    reads: after.redis.reads - before.redis.reads,
    cpuMs: round(after.redis.cpuMs - before.redis.cpuMs, 3),
    memoryBytes: after.redis.usedMemory - before.redis.usedMemory,
    keys: after.redis.keys - before.redis.keys,
  };
}

/** Commands left out of the per-verification figures: the nodes' once-a-second INFO memory and the runner's snapshots. */
const BACKGROUND = new Set(['info']);

export function perVerification(w: RedisWindow): PerVerification | null {
  const v = w.verifications;
  if (v <= 0) return null;
  const per = (counts: Readonly<Record<string, number>>) => {
    const by: Record<string, number> = {};
    let total = 0;
    for (const [cmd, n] of Object.entries(counts)) {
      if (BACKGROUND.has(cmd) || n === 0) continue;
      by[cmd] = round(n / v, 4);
      total += n;
    }
    return { total: round(total / v, 4), by };
  };
  const executed = per(w.executed);
  const requests = per(w.requests);
  return {
    executed: executed.total, executedBy: executed.by, requests: requests.total, requestsBy: requests.by,
    roundTrips: round(w.turns / v, 4), reads: round(w.reads / v, 4), redisCpuUs: round((w.cpuMs * 1000) / v, 2),
    bytesPerKey: w.keys > 0 ? Math.round(w.memoryBytes / w.keys) : null,
  };
}

function difference(before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(after)) out[k] = n - (before[k] ?? 0);
  return out;
}
