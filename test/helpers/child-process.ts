// Starting a server in a child process and stopping it, shared by the tests (test/helpers/service.ts)
// and the benchmarks (bench/lib/processes.ts): a free port, a minimal environment, waiting until an
// HTTP path answers, SIGTERM then SIGKILL, and the cluster's workers from /proc.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now. */
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

/** What a child inherits of this process's environment: PATH and HOME, nothing that could configure it. */
export function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
}

/**
 * Asks `url` every `intervalMs` until it answers 200 ('ready'); 'exited' as soon as `proc` has
 * exited, 'timeout' once `deadline` (epoch ms) has passed.
 */
export async function pollUntilReady(url: string, proc: ChildProcess, deadline: number, intervalMs: number): Promise<'ready' | 'exited' | 'timeout'> {
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) return 'exited';
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return 'ready';
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) return 'timeout';
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Sends `signal` unless `proc` has already exited, SIGKILL after `timeoutMs`; resolves with the exit
 * code (null when ended by a signal) once `exited`, the promise of its 'exit' event, has.
 */
export async function stopChild(proc: ChildProcess, exited: Promise<number | null>, signal: NodeJS.Signals = 'SIGTERM',
  timeoutMs = 15_000): Promise<number | null> {
  if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** PIDs of the direct children of `pid` (the cluster's workers), from /proc; [] once it is gone. */
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
