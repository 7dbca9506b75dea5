// The primary's side of the message protocol: answers workers' requests (aggregated metrics,
// cluster status, log subscriptions) and fans log lines out to the workers serving GET /.logs.
// Workers forward their log lines only while someone is subscribed ('logs-tap').
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { decode, encode, type Message } from './ipc.js';
import type { Supervisor } from './supervisor.js';

export class Hub {
  readonly #supervisor: Supervisor;
  readonly #aggregator = new AggregatorRegistry();
  /** worker id → number of open /.logs streams it serves. */
  readonly #subscribers = new Map<number, number>();
  readonly #onMessage = (worker: Worker, raw: unknown) => this.#handle(worker, raw);
  readonly #onExit = (worker: Worker) => {
    if (this.#subscribers.delete(worker.id)) this.#broadcastTap();
  };
  readonly #onOnline = (worker: Worker) => {
    if (this.#subscribers.size > 0) this.#send(worker, { t: 'logs-tap', on: true });
  };

  constructor(supervisor: Supervisor) {
    this.#supervisor = supervisor;
    cluster.on('message', this.#onMessage);
    cluster.on('exit', this.#onExit);
    cluster.on('online', this.#onOnline);
  }

  /** A log line of the primary itself, or forwarded from a worker. */
  publish(line: string): void {
    if (this.#subscribers.size === 0) return;
    const frame = encode({ t: 'log', line });
    for (const id of this.#subscribers.keys()) {
      const w = cluster.workers?.[id];
      if (w && w.isConnected()) w.send(frame);
    }
  }

  #handle(worker: Worker, raw: unknown): void {
    const m = decode(raw);
    if (!m) return;
    if (m.t === 'log') return this.publish(m.line);
    if (m.t !== 'req') return;
    const reply = (value: unknown) => this.#send(worker, { t: 'res', id: m.id, ok: true, value });
    const failed = (err: unknown) => this.#send(worker, { t: 'res', id: m.id, ok: false, error: String((err as Error).message ?? err) });
    switch (m.op) {
      case 'metrics':
        this.#aggregator.clusterMetrics().then(reply, failed);
        return;
      case 'status':
        reply({ crashLoop: this.#supervisor.crashLoop, draining: this.#supervisor.stopping, workers: this.#supervisor.workers().length });
        return;
      case 'logs-subscribe':
        this.#subscribers.set(worker.id, (this.#subscribers.get(worker.id) ?? 0) + 1);
        if (this.#subscribers.size === 1 && this.#subscribers.get(worker.id) === 1) this.#broadcastTap();
        reply(true);
        return;
      case 'logs-unsubscribe': {
        const n = (this.#subscribers.get(worker.id) ?? 0) - 1;
        if (n > 0) this.#subscribers.set(worker.id, n);
        else this.#subscribers.delete(worker.id);
        if (this.#subscribers.size === 0) this.#broadcastTap();
        reply(true);
        return;
      }
    }
  }

  #broadcastTap(): void {
    const on = this.#subscribers.size > 0;
    for (const w of this.#supervisor.workers()) this.#send(w, { t: 'logs-tap', on });
  }

  #send(worker: Worker, message: Message): void {
    try {
      if (worker.isConnected()) worker.send(encode(message));
    } catch { /* the worker is going away */ }
  }

  close(): void {
    cluster.off('message', this.#onMessage);
    cluster.off('exit', this.#onExit);
    cluster.off('online', this.#onOnline);
  }
}
