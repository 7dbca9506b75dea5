// Load generation. autocannon (programmatic, with worker threads) measures every target. wrk, a C
// generator that needs far less CPU per request, checks autocannon against L once per invocation
// and measures the GET scenarios beside it: on a small machine it shows how much of a figure the
// JavaScript generator costs.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Options, type RequestOptions, type Result } from 'autocannon';
import { round } from './stats.js';
import type { Feed } from './types.js';

/** bench/lib/feed-request.cjs in the source tree (tsc does not copy .cjs files into dist). */
export const FEED_MODULE = join(fileURLToPath(new URL('../../../', import.meta.url)), 'bench', 'lib', 'feed-request.cjs');

export interface RequestSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** A fixed body (L's stand-in for a payload). */
  readonly body?: string;
  /** A different pre-solved body per request. */
  readonly feed?: Feed;
  /** Absolute path of a CommonJS module exporting autocannon's setupRequest (request, context). */
  readonly setupRequest?: string;
  /** Absolute path of a CommonJS module exporting autocannon's onResponse (status, body, context). */
  readonly onResponse?: string;
}

export interface LoadOptions {
  /** Several: connection i goes to url[i % length] (S3n's two nodes). */
  readonly url: string | readonly string[];
  /** One request, or a sequence each connection goes through in turn. */
  readonly request: RequestSpec | readonly RequestSpec[];
  readonly durationS: number;
  readonly connections: number;
  /** autocannon worker threads; 0 runs in the calling thread. */
  readonly workers: number;
  /** Requests per second over all connections (autocannon -R); unset = as fast as possible. */
  readonly rate?: number;
  /** Send exactly this many requests, as fast as possible, instead of running for durationS. */
  readonly amount?: number;
}

export interface Latency {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export interface LoadResult {
  /** 2xx answers per second over the run. */
  readonly rps: number;
  readonly requests: number;
  readonly durationS: number;
  /** Milliseconds (autocannon corrects for coordinated omission when a rate is set). */
  readonly latency: Latency;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  /** Bursts (`amount`): answers per second in the median 50 ms sample, i.e. without ramp-up and tail. */
  readonly sampledRps?: number;
  /** Feed runs: bodies claimed (sent or built) out of the feed's count. */
  readonly fed?: { readonly claimed: number; readonly available: number };
  /**
   * CPU time of the server's primary and workers during the run ÷ the answers it gave, µs
   * (bench/lib/drivers.ts; absent from results written before it, null where /proc is unreadable).
   */
  readonly serverCpuUsPerAnswer?: number | null;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const specs: readonly RequestSpec[] = Array.isArray(o.request) ? o.request : [o.request as RequestSpec];
  const load = createRequire(import.meta.url);
  // In workers mode autocannon require()s module paths in each thread; in this thread it takes functions.
  const fn = (path: string) => (o.workers > 0 ? path : (load(path) as (...args: never[]) => unknown));
  let feed: Feed | undefined;
  const requests = specs.map((spec) => {
    const req: RequestOptions = { method: spec.method, path: spec.path, headers: { ...spec.headers } };
    if (spec.body !== undefined) req.body = spec.body;
    if (spec.onResponse !== undefined) req.onResponse = fn(spec.onResponse) as RequestOptions['onResponse'];
    if (spec.setupRequest !== undefined) req.setupRequest = fn(spec.setupRequest) as RequestOptions['setupRequest'];
    if (spec.feed) {
      feed = spec.feed;
      Atomics.store(new Int32Array(feed.next), 0, 0);
      if (o.workers === 0) (load(FEED_MODULE) as { attach(f: Feed): void }).attach(feed);
      req.setupRequest = fn(FEED_MODULE) as RequestOptions['setupRequest'];
    }
    return req;
  });
  const opts: Options = {
    url: typeof o.url === 'string' ? o.url : [...o.url],
    connections: o.connections,
    pipelining: 1,
    duration: o.durationS,
    timeout: 10,
    requests,
  };
  if (o.amount !== undefined) {
    // autocannon then ignores duration, and notices the last answer only at its next sample tick
    // (every second by default, which rounds a burst's duration up to whole seconds).
    opts.amount = o.amount;
    opts.sampleInt = BURST_SAMPLE_MS;
  }
  if (feed) opts.benchFeed = feed; // reaches feed-request.cjs in each worker through workerData
  if (o.workers > 0) opts.workers = o.workers;
  // In workers mode overallRate applies per worker.
  if (o.rate !== undefined) opts.overallRate = Math.max(1, Math.round(o.rate / Math.max(1, o.workers)));
  const r = await autocannon(opts);
  const out = summarize(r, feed);
  if (o.amount === undefined) return out;
  // Each worker thread samples its own connections; their samples are pooled into one histogram.
  return { ...out, sampledRps: round(r.requests.p50 * (1000 / BURST_SAMPLE_MS) * Math.max(1, o.workers)) };
}

/** Sample interval of bursts (`amount`): their rate is the median sample, free of ramp-up and tail. */
const BURST_SAMPLE_MS = 50;

function summarize(r: Result, feed: Feed | undefined): LoadResult {
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) {
    statusCodes[code] = count;
    if (code.startsWith('2')) ok += count;
  }
  const out: LoadResult = {
    rps: round(ok / r.duration),
    requests: r.totalCompletedRequests,
    durationS: r.duration,
    latency: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, mean: r.latency.mean },
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    statusCodes,
  };
  if (!feed || feed.repeat) return out;
  return { ...out, fed: { claimed: Atomics.load(new Int32Array(feed.next), 0), available: feed.count } };
}

/** Collects `amount` response bodies of GET `path` (challenges to solve before a verify run). */
export async function collectBodies(url: string, path: string, headers: Record<string, string>, amount: number): Promise<string[]> {
  const bodies: string[] = [];
  const failures: string[] = [];
  await autocannon({
    url,
    connections: Math.min(50, amount),
    amount,
    timeout: 10,
    requests: [{
      method: 'GET', path, headers,
      onResponse(status, body) {
        if (status === 200) bodies.push(body);
        else if (failures.length < 3) failures.push(`${status} ${body.slice(0, 200)}`);
      },
    }],
  });
  if (bodies.length < amount) throw new Error(`GET ${path}: ${amount - bodies.length} of ${amount} failed: ${failures.join(' | ')}`);
  return bodies;
}

export interface WrkResult {
  readonly rps: number;
  readonly latencyAvgMs: number;
  /** Answers outside 2xx/3xx ("Non-2xx or 3xx responses"). */
  readonly non2xx: number;
  readonly threads: number;
  readonly connections: number;
  readonly durationS: number;
  readonly version: string;
}

/** The wrk binary's version ("wrk debian/4.1.0-3"), or null when wrk is not installed. */
export function wrkVersion(): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('wrk', ['--version'], (err, stdout, stderr) => {
      // wrk prints its version and usage, and exits 1.
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') resolve(null);
      else resolve(/wrk\s+\S+/.exec(`${stdout}${stderr}`)?.[0] ?? 'wrk');
    });
  });
}

/** A request wrk sends again and again: a GET, or a POST with a fixed body (given to wrk in a Lua script). */
export interface WrkRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
}

export interface WrkOptions {
  readonly threads: number;
  readonly connections: number;
  readonly durationS: number;
  readonly version: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * `url` with wrk: a GET, or with `post` a POST of that fixed body (a Lua script sets the method and
 * body; the verify scenarios' unique payloads are autocannon's alone).
 */
export function runWrk(url: string, o: WrkOptions, post?: { readonly body: string }): Promise<WrkResult> {
  const headers = Object.entries(o.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  let dir: string | null = null;
  const script: string[] = [];
  if (post !== undefined) {
    dir = mkdtempSync(join(tmpdir(), 'pb-wrk-'));
    const file = join(dir, 'post.lua');
    // A Lua long string: the body needs no escaping unless it holds the closing bracket sequence.
    let level = '';
    while (post.body.includes(`]${level}]`)) level += '=';
    writeFileSync(file, `wrk.method = "POST"\nwrk.body = [${level}[${post.body}]${level}]\n`);
    script.push('-s', file);
  }
  return new Promise<WrkResult>((resolve, reject) => {
    execFile('wrk', [`-t${o.threads}`, `-c${o.connections}`, `-d${o.durationS}s`, ...script, ...headers, url], (err, stdout) => {
      if (err) return reject(err);
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1];
      const lat = /Latency\s+([\d.]+)(us|ms|s)\b/.exec(stdout);
      if (rps === undefined || lat === null) return reject(new Error(`cannot read wrk output:\n${stdout}`));
      const unit = lat[2] === 'us' ? 0.001 : lat[2] === 's' ? 1000 : 1;
      resolve({
        rps: round(Number(rps)), latencyAvgMs: round(Number(lat[1]) * unit, 3),
        non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0),
        threads: o.threads, connections: o.connections, durationS: o.durationS, version: o.version,
      });
    });
  }).finally(() => {
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  });
}
