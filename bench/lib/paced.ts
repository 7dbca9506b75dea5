// Open-loop latency at a fixed rate. autocannon's -R gives each connection a budget per second and
// lets it spend the budget as fast as it can from the top of each second, so at "50% of the maximum"
// the server sees full-speed bursts from every connection half of each second, and p99 is the
// latency of a saturated server (measured on L at a third of its maximum: p99 17 ms with 100
// connections, 2 ms with 10). This generator sends request i at start + i / rate, spread evenly, on
// whichever keep-alive connection is free, and measures each latency from its scheduled time (a
// request that waits for a free connection is late by that wait: no coordinated omission). Requests
// sent on time are measured from the moment they are written: Node's timers tick every ~1 ms, and
// that lateness is the generator's, not the server's.
import { createRequire } from 'node:module';
import { connect, type Socket } from 'node:net';
import { FEED_MODULE, type Latency, type LoadResult, type RequestSpec } from './load.js';
import { round } from './stats.js';

export interface PacedOptions {
  readonly url: string;
  readonly request: RequestSpec;
  readonly rate: number;
  readonly durationS: number;
  readonly connections: number;
}

interface Conn {
  readonly socket: Socket;
  /** Scheduled time of the request in flight; -1 when idle. */
  scheduled: number;
  buf: Buffer;
}

const CRLF2 = Buffer.from('\r\n\r\n');
const DRAIN_MS = 5_000;

export async function runPaced(o: PacedOptions): Promise<LoadResult> {
  const { hostname, port } = new URL(o.url);
  const next = requestSource(o.request, `${hostname}:${port}`);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const backlog: number[] = [];
  let backlogHead = 0;
  let errors = 0;
  let sent = 0;
  let inFlight = 0;
  let onIdle: (() => void) | null = null;

  const conns: Conn[] = await Promise.all(Array.from({ length: o.connections }, () => open(hostname, Number(port))));
  const idle: Conn[] = [...conns];
  let finished = false;
  const send = (c: Conn, scheduled: number) => {
    c.scheduled = scheduled;
    inFlight++;
    sent++;
    c.socket.write(next());
  };
  /** A connection free again: the oldest late request goes out on it, or it waits in the pool. */
  const release = (c: Conn) => {
    if (backlogHead < backlog.length) send(c, backlog[backlogHead++]!);
    else idle.push(c);
  };
  const attach = (c: Conn) => {
    c.socket.on('data', (chunk: Buffer) => {
      c.buf = c.buf.length === 0 ? chunk : Buffer.concat([c.buf, chunk]);
      for (;;) {
        const end = c.buf.indexOf(CRLF2);
        if (end < 0 || c.scheduled < 0) return;
        const head = c.buf.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (c.buf.length < end + 4 + length) return;
        c.buf = c.buf.subarray(end + 4 + length);
        const status = head.slice(9, 12);
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        latencies.push(performance.now() - c.scheduled);
        c.scheduled = -1;
        inFlight--;
        release(c);
        if (inFlight === 0) onIdle?.();
      }
    });
    // Counted below, as a lost request, when the connection closes with one in flight.
    c.socket.on('error', () => undefined);
    // The server closes a keep-alive connection idle for long enough (uWS: 10 s), and with the most
    // recently freed connection taken first, the pool's last ones idle that long in a 10 s run:
    // a closed one leaves the pool for a new one, so that no request is written to it.
    c.socket.once('close', () => {
      if (finished) return;
      const at = idle.indexOf(c);
      if (at >= 0) idle.splice(at, 1);
      if (c.scheduled >= 0) {
        c.scheduled = -1;
        inFlight--;
        errors++;
        if (inFlight === 0) onIdle?.();
      }
      open(hostname, Number(port)).then((fresh) => {
        conns.push(fresh);
        if (finished) return void fresh.socket.destroy();
        attach(fresh);
        release(fresh);
      }, () => { errors++; });
    });
  };
  for (const c of conns) attach(c);

  const start = performance.now();
  const end = start + o.durationS * 1000;
  const intervalMs = 1000 / o.rate;
  let scheduledCount = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = Math.min(performance.now(), end);
      const due = Math.floor((now - start) / intervalMs);
      for (; scheduledCount < due; scheduledCount++) {
        const at = start + scheduledCount * intervalMs;
        const c = idle.pop();
        if (c) send(c, performance.now());
        else backlog.push(at);
      }
      if (now >= end) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  const unsent = backlog.length - backlogHead;
  backlog.length = backlogHead; // scheduled but never sent: counted below, not measured
  if (inFlight > 0) {
    await new Promise<void>((resolve) => {
      onIdle = resolve;
      setTimeout(resolve, DRAIN_MS);
    });
  }
  const timeouts = inFlight;
  finished = true;
  for (const c of conns) c.socket.destroy();

  const durationS = (performance.now() - start) / 1000;
  let ok = 0;
  let non2xx = 0;
  for (const [code, n] of Object.entries(statusCodes)) if (code.startsWith('2')) ok += n; else non2xx += n;
  return {
    rps: round(ok / o.durationS), requests: latencies.length, durationS: round(durationS, 2),
    latency: percentiles(latencies), errors: errors + unsent, timeouts, non2xx, statusCodes,
    ...(o.request.feed && !o.request.feed.repeat ? { fed: { claimed: sent, available: o.request.feed.count } } : {}),
  };
}

function open(host: string, port: number): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => resolve({ socket, scheduled: -1, buf: Buffer.alloc(0) }));
    socket.setNoDelay(true);
    socket.once('error', reject);
  });
}

const feedModule = createRequire(import.meta.url)(FEED_MODULE) as {
  claim(claims: Int32Array, count: number, repeats: boolean): number;
  PAST_THE_END: string;
};

/** The bytes of each next request: one prebuilt buffer, or a new one per feed body. */
export function requestSource(spec: RequestSpec, host: string): () => Buffer {
  const headers = Object.entries(spec.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const head = (length: number) => `${spec.method} ${spec.path} HTTP/1.1\r\nhost: ${host}\r\n${headers}` +
    `${spec.method === 'GET' ? '' : `content-length: ${length}\r\n`}\r\n`;
  const feed = spec.feed;
  if (!feed) {
    const fixed = Buffer.from(head(Buffer.byteLength(spec.body ?? '')) + (spec.body ?? ''), 'latin1');
    return () => fixed;
  }
  const bytes = Buffer.from(feed.data);
  const offsets = new Int32Array(feed.offsets);
  const claims = new Int32Array(feed.next);
  Atomics.store(claims, 0, 0);
  // The same claims as autocannon's requests (feed-request.cjs): once each, a repeating feed again
  // and again, past the end GET /.live, never a replay.
  const pastTheEnd = Buffer.from(`GET ${feedModule.PAST_THE_END} HTTP/1.1\r\nhost: ${host}\r\n\r\n`, 'latin1');
  const repeats = feed.repeat === true;
  return () => {
    const i = feedModule.claim(claims, feed.count, repeats);
    if (i < 0) return pastTheEnd;
    const body = bytes.subarray(offsets[i], offsets[i + 1]);
    return Buffer.concat([Buffer.from(head(body.length), 'latin1'), body]);
  };
}

function percentiles(ms: number[]): Latency {
  if (ms.length === 0) return { p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const s = Float64Array.from(ms).sort();
  const at = (q: number) => round(s[Math.min(s.length - 1, Math.floor(q * s.length))]!, 2);
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: round(s[s.length - 1]!, 2), mean: round(ms.reduce((a, b) => a + b, 0) / ms.length, 2) };
}
