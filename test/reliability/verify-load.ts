// Open-loop verification traffic for the battery: every 1/rate s one fresh payload goes to
// POST /v1/verify and one replay of a payload already verified, each on its own connection. Every
// answer is recorded with its latency; every payload's acceptances are counted, so "a replay was
// accepted" is simply "a payload was verified twice".
import type { ConnectionPool } from './harness.js';
import { ConnectionError } from './harness.js';

export interface LoadRecord {
  readonly kind: 'fresh' | 'replay';
  readonly payload: number;
  /** performance.now() when it was sent. */
  readonly sentAt: number;
  readonly ms: number;
  /**
   * VERIFIED, a verified:false reason (PAYLOAD_ALREADY_USED…), `<status>:<error code>`, or
   * `ERR:<socket error>` (`ERR:<socket error>:first` when it was the connection's first request).
   */
  readonly outcome: string;
}

export interface LoadOptions {
  /** Fresh payloads per second (and as many replays). */
  rate: number;
  /** Send replays too. Default true. */
  replays?: boolean;
}

export interface VerifyLoad {
  /** Stops sending; resolves with every record so far once the requests in flight are answered. */
  stop(): Promise<LoadRecord[]>;
  /** Payloads verified more than once. */
  replaysAccepted(): number;
  /** Payloads verified exactly once. */
  accepted(): number;
  /** Indexes of the payloads verified at least once. */
  acceptedPayloads(): readonly number[];
  /** Requests sent and not answered yet. */
  inFlight(): number;
  /** Payloads not verified yet that got 503 or lost their connection are sent once more; returns the outcome tally. */
  retryUnavailable(): Promise<string>;
  /** Every record, retries included. */
  readonly records: readonly LoadRecord[];
}

export function runVerifyLoad(pool: ConnectionPool, keyId: string, payloads: readonly string[], options: LoadOptions): VerifyLoad {
  const path = `/v1/verify?apiKey=${keyId}`;
  const acceptedTimes = new Uint32Array(payloads.length);
  const accepted: number[] = [];
  const tried = new Set<number>();
  const records: LoadRecord[] = [];
  const inflight = new Set<Promise<void>>();
  let next = 0;
  let stopped = false;

  const send = (kind: LoadRecord['kind'], i: number): Promise<string> => {
    const sentAt = performance.now();
    const p = verify(pool, path, payloads[i]!).then(({ outcome, ms }) => {
      if (outcome === 'VERIFIED') {
        if (acceptedTimes[i]++ === 0) accepted.push(i);
      }
      records.push({ kind, payload: i, sentAt, ms: ms ?? performance.now() - sentAt, outcome });
      return outcome;
    });
    const tracked = p.then(() => undefined);
    inflight.add(tracked);
    void tracked.finally(() => inflight.delete(tracked));
    return p;
  };

  const interval = 1000 / options.rate;
  const started = performance.now();
  let ticks = 0;
  const tick = () => {
    if (stopped) return;
    if (next < payloads.length) {
      tried.add(next);
      void send('fresh', next++);
    }
    if ((options.replays ?? true) && accepted.length > 0) void send('replay', accepted[Math.floor(Math.random() * accepted.length)]!);
    ticks++;
    // Scheduled against the start time, so a late timer does not lower the rate.
    timer = setTimeout(tick, Math.max(0, started + ticks * interval - performance.now()));
  };
  let timer = setTimeout(tick, 0);

  return {
    records,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      while (inflight.size > 0) await Promise.all([...inflight]);
      return records.slice();
    },
    replaysAccepted: () => acceptedTimes.filter((n) => n > 1).length,
    accepted: () => acceptedTimes.filter((n) => n === 1).length,
    acceptedPayloads: () => accepted,
    inFlight: () => inflight.size,
    async retryUnavailable() {
      const retry = [...tried].filter((i) => acceptedTimes[i] === 0 &&
        records.some((r) => r.payload === i && (r.outcome.startsWith('503') || r.outcome.startsWith('ERR'))));
      const tally = new Map<string, number>();
      for (let i = 0; i < retry.length; i += 32) {
        const outcomes = await Promise.all(retry.slice(i, i + 32).map((p) => send('fresh', p)));
        for (const o of outcomes) tally.set(o, (tally.get(o) ?? 0) + 1);
      }
      return [...tally].map(([k, v]) => `${k}=${v}`).join(' ') || 'none';
    },
  };
}

/** One POST /v1/verify; never rejects: a socket failure is the outcome `ERR:<code>`. */
export async function verify(pool: ConnectionPool, path: string, payload: string): Promise<{ outcome: string; ms?: number }> {
  try {
    const res = await pool.request('POST', path, JSON.stringify({ payload }));
    return { outcome: outcomeOf(res.status, res.body), ms: res.ms };
  } catch (err) {
    if (!(err instanceof ConnectionError)) return { outcome: `ERR:${(err as Error).message}` };
    return { outcome: `ERR:${err.code}${err.served === 0 ? ':first' : ''}` };
  }
}

export function outcomeOf(status: number, body: string): string {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return `${status}:not JSON`;
  }
  if (status === 200 && json.verified === true) return 'VERIFIED';
  if (status === 200 && json.verified === false) return String(json.reason);
  return `${status}:${String(json.error)}`;
}

export interface Outage {
  /** performance.now() when the store stopped answering and when it answered again. */
  from: number;
  to: number;
}

export interface OutageSummary {
  /** Slowest answer as the client saw it (includes this machine's scheduling noise). */
  slowest: number;
  unavailable: number;
  /** Answers other than VERIFIED, PAYLOAD_ALREADY_USED and 503 STORE_UNAVAILABLE (first 20). */
  unexpected: string[];
  /** Per outage: ms from its end to the first fresh payload from which on every fresh payload was verified. */
  recovery: number[];
}

export function summarizeOutages(records: readonly LoadRecord[], outages: readonly Outage[]): OutageSummary {
  const unexpected = records.filter((r) => !['VERIFIED', 'PAYLOAD_ALREADY_USED', '503:STORE_UNAVAILABLE'].includes(r.outcome))
    .map((r) => `${r.kind}: ${r.outcome}`);
  const recovery = outages.map((outage, i) => {
    const until = outages[i + 1]?.from ?? Infinity;
    const fresh = records.filter((r) => r.kind === 'fresh' && r.sentAt >= outage.to && r.sentAt < until)
      .sort((a, b) => a.sentAt - b.sentAt);
    let lastBad = -1;
    fresh.forEach((r, j) => { if (r.outcome !== 'VERIFIED') lastBad = j; });
    const first = fresh[lastBad + 1];
    return first === undefined ? Infinity : Math.max(0, first.sentAt - outage.to);
  });
  return {
    slowest: Math.max(...records.map((r) => r.ms)),
    unavailable: records.filter((r) => r.outcome === '503:STORE_UNAVAILABLE').length,
    unexpected: unexpected.slice(0, 20),
    recovery,
  };
}
