// Running a set of messages through one filter: a fixed number of requests in flight, each
// message's verdict and latency, and the wall time of the whole set; and waiting until a freshly
// started filter has finished its start-up work (rule compilation) before it is measured.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { quantile } from '../../eval/lib/metrics.js';
import type { Verdict } from './anchors.js';
import type { RawMessage } from './corpus.js';

export interface SetRun<V extends Verdict> {
  readonly verdicts: readonly V[];
  /** Milliseconds per message, in message order. */
  readonly latencies: readonly number[];
  readonly wallMs: number;
  /** Messages the filter failed on (counted as not spam). */
  readonly errors: number;
  readonly firstError: string | null;
}

export interface Speed {
  readonly messages: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export async function runSet<V extends Verdict>(
  check: (raw: Buffer) => Promise<V>, messages: readonly RawMessage[], concurrency: number, none: V,
): Promise<SetRun<V>> {
  const verdicts: V[] = new Array(messages.length);
  const latencies: number[] = new Array(messages.length);
  let next = 0;
  let errors = 0;
  let firstError: string | null = null;
  const started = performance.now();
  const lane = async () => {
    while (next < messages.length) {
      const i = next++;
      const t = performance.now();
      try {
        verdicts[i] = await check(messages[i]!.raw);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
        verdicts[i] = none;
      }
      latencies[i] = performance.now() - t;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { verdicts, latencies, wallMs: performance.now() - started, errors, firstError };
}

export function speedOf(run: SetRun<Verdict>): Speed {
  const n = run.latencies.length;
  return {
    messages: n, perSecond: round(n / (run.wallMs / 1000), 1),
    p50Ms: round(quantile(run.latencies, 0.5) ?? 0, 1), p99Ms: round(quantile(run.latencies, 0.99) ?? 0, 1),
  };
}

/**
 * Waits until the process tree of `pid` uses less than 5 % of a core over two seconds (rspamd
 * compiles its Hyperscan databases, spamd its rules, after they already answer), at most `maxMs`.
 */
export async function waitUntilIdle(pid: number, maxMs = 240_000): Promise<number> {
  const started = Date.now();
  const ticks = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim()) || 100;
  let last = treeCpu(pid);
  while (Date.now() - started < maxMs) {
    await new Promise((r) => setTimeout(r, 2000));
    const now = treeCpu(pid);
    if ((now - last) / ticks < 0.1) break;
    last = now;
  }
  return Date.now() - started;
}

function treeCpu(pid: number): number {
  let total = 0;
  const visit = (p: number) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += Number(fields[11]) + Number(fields[12]);
    } catch { /* gone */ }
    const children = spawnSync('pgrep', ['-P', String(p)]).stdout.toString().trim();
    for (const c of children === '' ? [] : children.split('\n')) visit(Number(c));
  };
  visit(pid);
  return total;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
