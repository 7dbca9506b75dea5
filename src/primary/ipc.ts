// The small message protocol between the primary and its workers (STYLE.md: typed messages, a
// request id, a timeout, failures returned as data). Frames are msgpackr-packed Buffers sent over
// node:cluster's IPC channel with 'advanced' serialization; anything else on the channel (prom-client's
// own messages) is left alone.
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false });

export type Message =
  | { t: 'req'; id: number; op: 'metrics' | 'status' | 'logs-subscribe' | 'logs-unsubscribe' }
  | { t: 'res'; id: number; ok: boolean; value?: unknown; error?: string }
  | { t: 'log'; line: string }
  | { t: 'logs-tap'; on: boolean }
  | { t: 'ready' }
  /** Primary → workers: the downloaded list `name` was replaced in DATA_DIR/lists; load it again. */
  | { t: 'list-updated'; name: string }
  | { t: 'shutdown' };

export function encode(message: Message): Buffer {
  return packr.pack(message);
}

export function decode(raw: unknown): Message | null {
  if (!(raw instanceof Uint8Array)) return null;
  try {
    const m = packr.unpack(raw) as Message;
    return typeof m === 'object' && m !== null && typeof m.t === 'string' ? m : null;
  } catch {
    return null;
  }
}

/** Worker side: requests to the primary with a timeout; failures resolve as errors, never hang. */
export class PrimaryLink {
  #next = 1;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  readonly #listeners = new Set<(m: Message) => void>();
  readonly #onMessage = (raw: unknown) => {
    const m = decode(raw);
    if (!m) return;
    if (m.t === 'res') {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(m.error ?? 'primary request failed'));
      return;
    }
    for (const l of this.#listeners) l(m);
  };

  constructor() {
    process.on('message', this.#onMessage);
  }

  request(op: 'metrics' | 'status' | 'logs-subscribe' | 'logs-unsubscribe', timeoutMs = 5000): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`primary did not answer ${op} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.send({ t: 'req', id, op });
    });
  }

  send(message: Message): void {
    if (process.connected) process.send?.(encode(message));
  }

  on(listener: (m: Message) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  close(): void {
    process.off('message', this.#onMessage);
    for (const p of this.#pending.values()) { clearTimeout(p.timer); p.reject(new Error('closed')); }
    this.#pending.clear();
  }
}
