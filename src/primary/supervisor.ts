// Forks the workers, restarts the ones that die (at once when they had become ready; with an
// exponential back-off when they die while starting), notices a crash loop (which makes /.ready
// answer 503), and drains them all on shutdown.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../log.js';
import { decode, encode } from './ipc.js';

export interface SupervisorOptions {
  workers: number;
  /** Extra node flags for workers (e.g. --max-old-space-size). */
  execArgv?: string[];
  logger: Logger;
  /** First restart delay; doubles per crash up to maxBackoffMs. Default 100 ms. */
  minBackoffMs?: number;
  /** Default 10 s. */
  maxBackoffMs?: number;
  /** This many crashes within crashWindowMs is a crash loop. Default 5 in 60 s. */
  crashLoopCount?: number;
  crashWindowMs?: number;
  /** A worker that became ready, or lived this long, resets the back-off. Default 30 s. */
  stableAfterMs?: number;
}

const DEFAULTS = { minBackoffMs: 100, maxBackoffMs: 10_000, crashLoopCount: 5, crashWindowMs: 60_000, stableAfterMs: 30_000 };

export class Supervisor {
  readonly #options: SupervisorOptions & typeof DEFAULTS;
  readonly #log: Logger;
  readonly #crashes: number[] = [];
  readonly #slots = new Map<number, { worker: Worker | null; startedAt: number; backoffMs: number; timer: NodeJS.Timeout | null }>();
  #stopping = false;
  #readyCount = 0;
  #onAllReady: (() => void) | null = null;

  constructor(options: SupervisorOptions) {
    this.#options = { ...DEFAULTS, ...options };
    this.#log = options.logger;
  }

  get stopping(): boolean { return this.#stopping; }

  get crashLoop(): boolean {
    const since = Date.now() - this.#options.crashWindowMs;
    while (this.#crashes.length > 0 && this.#crashes[0]! < since) this.#crashes.shift();
    return this.#crashes.length >= this.#options.crashLoopCount;
  }

  workers(): Worker[] {
    return [...this.#slots.values()].map((s) => s.worker).filter((w): w is Worker => w !== null && !w.isDead());
  }

  /** Forks every worker; resolves when each has reported ready (or rejects when one dies first). */
  start(): Promise<void> {
    cluster.setupPrimary({ execArgv: [...process.execArgv, ...(this.#options.execArgv ?? [])], serialization: 'advanced' });
    return new Promise((resolve, reject) => {
      this.#onAllReady = resolve;
      for (let slot = 1; slot <= this.#options.workers; slot++) {
        this.#slots.set(slot, { worker: null, startedAt: 0, backoffMs: this.#options.minBackoffMs, timer: null });
        this.#fork(slot, reject);
      }
    });
  }

  #fork(slot: number, failStart?: (err: Error) => void): void {
    const state = this.#slots.get(slot)!;
    state.timer = null;
    const worker = cluster.fork({ PALISADE_WORKER: String(slot) });
    state.worker = worker;
    state.startedAt = Date.now();
    let ready = false;
    worker.on('message', (raw: unknown) => {
      // Only the 'ready' frame matters here; the hub handles the rest.
      if (ready || !(raw instanceof Uint8Array) || decode(raw)?.t !== 'ready') return;
      ready = true;
      if (this.#onAllReady && ++this.#readyCount === this.#options.workers) {
        const done = this.#onAllReady;
        this.#onAllReady = null;
        done();
      }
    });
    worker.on('exit', (code, signal) => {
      if (state.worker === worker) state.worker = null;
      if (this.#stopping) return;
      const lived = Date.now() - state.startedAt;
      this.#crashes.push(Date.now());
      // A worker that served was not failing to start: replace it promptly (a worker killed every
      // 2 s must be back within 2 s, test/reliability/worker-kill.test.ts). The back-off only grows
      // for workers that die before they are ready.
      if (ready || lived >= this.#options.stableAfterMs) state.backoffMs = this.#options.minBackoffMs;
      if (!ready && failStart && this.#onAllReady) {
        this.#onAllReady = null;
        failStart(new Error(`worker ${slot} exited during start-up (code ${code}, signal ${signal})`));
        return;
      }
      const delay = state.backoffMs;
      state.backoffMs = Math.min(state.backoffMs * 2, this.#options.maxBackoffMs);
      if (this.crashLoop) {
        this.#log.error({ worker: slot, code, signal, crashes: this.#crashes.length }, 'worker crash loop: restarting with back-off, /.ready reports 503');
      } else {
        this.#log.warn({ worker: slot, code, signal, restartInMs: delay }, 'worker died; restarting');
      }
      state.timer = setTimeout(() => this.#fork(slot), delay);
    });
  }

  /** Asks every worker to drain; kills the ones still alive after `timeoutMs` + 2 s. */
  async stop(timeoutMs: number): Promise<void> {
    this.#stopping = true;
    for (const state of this.#slots.values()) if (state.timer) clearTimeout(state.timer);
    const alive = this.workers();
    const exits = alive.map((w) => new Promise<void>((resolve) => {
      if (w.isDead()) return resolve();
      w.once('exit', () => resolve());
    }));
    for (const w of alive) {
      try { w.send(encode({ t: 'shutdown' })); } catch { /* already gone */ }
    }
    const killer = setTimeout(() => {
      for (const w of this.workers()) {
        this.#log.warn({ pid: w.process.pid }, 'worker did not exit in time; killing it');
        w.process.kill('SIGKILL');
      }
    }, timeoutMs + 2000);
    await Promise.all(exits);
    clearTimeout(killer);
  }
}
