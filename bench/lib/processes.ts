// Server processes under test: spawn with a given environment on a free port, wait until an HTTP
// path answers, stop (SIGTERM, then SIGKILL), and read the workers' RSS from /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readdirSync, readFileSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';

export interface ServerProcess {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly proc: ChildProcess;
  /** The last lines of stderr (start-up failures, crashes). */
  stderrTail(): string;
  /** PIDs of the cluster's workers (children of the primary). */
  workerPids(): number[];
  stop(): Promise<void>;
}

export interface SpawnOptions {
  readonly name: string;
  readonly script: string;
  readonly env: Readonly<Record<string, string>>;
  /** Answers 200 once the server is up (default '/'). */
  readonly readyPath?: string;
  readonly timeoutMs?: number;
}

const TAIL_LINES = 60;
const live = new Set<ServerProcess>();

/** Stops every server still running (the runner's SIGINT/SIGTERM handler). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((s) => s.stop()));
}

// However the runner ends (an uncaught error, a closed stdout), no server outlives it: SIGTERM makes
// each primary drain and take its workers down. 'exit' handlers run synchronously, so only a signal.
process.on('exit', () => {
  for (const s of live) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGTERM');
});

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node <script>` with PORT set. stdout goes to /dev/null: a production access log is
 * written in full (that is its cost) but not read back, so the runner spends no CPU on it.
 */
export async function spawnServer(options: SpawnOptions): Promise<ServerProcess> {
  const port = await freePort();
  const devNull = openSync('/dev/null', 'w');
  const proc = spawn(process.execPath, [options.script], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env, PORT: String(port) },
    stdio: ['ignore', devNull, 'pipe'],
  });
  closeSync(devNull);
  const tail: string[] = [];
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (chunk: string) => {
    tail.push(...chunk.split('\n').filter((l) => l !== ''));
    if (tail.length > TAIL_LINES) tail.splice(0, tail.length - TAIL_LINES);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const server: ServerProcess = {
    name: options.name,
    port,
    url: `http://127.0.0.1:${port}`,
    proc,
    stderrTail: () => tail.join('\n'),
    workerPids: () => childPids(proc.pid!),
    async stop() {
      live.delete(server);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  live.add(server);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${options.name} exited with ${proc.exitCode ?? proc.signalCode} during start-up:\n${server.stderrTail()}`);
    }
    try {
      const res = await fetch(server.url + (options.readyPath ?? '/'));
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${options.name} did not answer ${options.readyPath ?? '/'} within ${options.timeoutMs ?? 60_000} ms:\n${server.stderrTail()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // Every worker listens on its own; the first answer may come before the last one is up.
  await waitForWorkers(server, Number(options.env.WORKERS ?? 0), deadline);
  return server;
}

async function waitForWorkers(server: ServerProcess, workers: number, deadline: number): Promise<void> {
  while (workers > 0 && server.workerPids().length < workers && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 300));
}

/** PIDs of the direct children of `pid` (the cluster's workers), from /proc. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        for (const c of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/)) if (c) out.push(Number(c));
      } catch { /* task gone */ }
    }
  } catch { /* process gone */ }
  return out.sort((a, b) => a - b);
}

export interface MemoryUse {
  /** VmRSS: every resident page, shared ones (the mapped state table, libraries) included. */
  readonly rss: number;
  /** RssAnon: private memory (heaps, buffers): what a leak grows. */
  readonly anon: number;
  /** RssFile + RssShmem: resident shared pages (the state table as its pages get touched, code). */
  readonly shared: number;
  /** Proportional set size: shared pages divided among the processes mapping them (null when unavailable). */
  readonly pss: number | null;
}

/** Memory of `pid` in MB from /proc (null when the process is gone). */
export function memoryUse(pid: number): MemoryUse | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? NaN);
    let pss: number | null = null;
    try {
      const v = /^Pss:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
      if (v !== undefined) pss = mb(Number(v));
    } catch { /* kernel without smaps_rollup */ }
    return { rss: mb(kb('VmRSS')), anon: mb(kb('RssAnon')), shared: mb(kb('RssFile') + kb('RssShmem')), pss };
  } catch {
    return null;
  }
}

function mb(kb: number): number {
  return Math.round((kb / 1024) * 10) / 10;
}
