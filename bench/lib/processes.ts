// Server processes under test: spawn with a given environment on a free port, wait until an HTTP
// path answers, stop (SIGTERM, then SIGKILL), and read the workers' RSS from /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync, closeSync } from 'node:fs';
import { baseEnv, childPids, freePort, pollUntilReady, stopChild } from '../../test/helpers/child-process.js';

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

/**
 * Starts `node <script>` with PORT set. stdout goes to /dev/null: a production access log is
 * written in full (that is its cost) but not read back, so the runner spends no CPU on it.
 */
export async function spawnServer(options: SpawnOptions): Promise<ServerProcess> {
  const port = await freePort();
  const devNull = openSync('/dev/null', 'w');
  const proc = spawn(process.execPath, [options.script], {
    env: { ...baseEnv(), ...options.env, PORT: String(port) },
    stdio: ['ignore', devNull, 'pipe'],
  });
  closeSync(devNull);
  const tail: string[] = [];
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (chunk: string) => {
    tail.push(...chunk.split('\n').filter((l) => l !== ''));
    if (tail.length > TAIL_LINES) tail.splice(0, tail.length - TAIL_LINES);
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const server: ServerProcess = {
    name: options.name,
    port,
    url: `http://127.0.0.1:${port}`,
    proc,
    stderrTail: () => tail.join('\n'),
    workerPids: () => childPids(proc.pid!),
    async stop() {
      live.delete(server);
      await stopChild(proc, exited);
    },
  };
  live.add(server);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const state = await pollUntilReady(server.url + (options.readyPath ?? '/'), proc, deadline, 100);
  if (state === 'exited') {
    throw new Error(`${options.name} exited with ${proc.exitCode ?? proc.signalCode} during start-up:\n${server.stderrTail()}`);
  }
  if (state === 'timeout') {
    await server.stop();
    throw new Error(`${options.name} did not answer ${options.readyPath ?? '/'} within ${options.timeoutMs ?? 60_000} ms:\n${server.stderrTail()}`);
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

/**
 * CPU time (user + system, ms) spent so far by a server's primary and workers, from
 * /proc/<pid>/stat (clock ticks of 10 ms on Linux: read it over whole runs, not single requests).
 * Processes that are gone count 0; null when /proc cannot be read (not Linux).
 */
export function serverCpuMs(server: ServerProcess): number | null {
  let ticks = 0;
  for (const pid of [server.proc.pid!, ...server.workerPids()]) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      if (pid === server.proc.pid) return null;
      continue;
    }
    // The fields after the command name (which may hold spaces): state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * CLOCK_TICK_MS;
}

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICK_MS = 10;

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
