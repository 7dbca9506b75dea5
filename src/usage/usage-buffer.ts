// Usage counters and request logs, aggregated in memory per worker and written in batches
// (DESIGN.md section 3: hot paths never wait on the database).
//
// - Counters (requests, GOOD/NEUTRAL/BAD, referrers) merge per key and month, so they stay bounded
//   by #keys × #months however long the database is away, and are never dropped.
// - Request-log rows queue up to `maxBufferedLogs`; beyond that the oldest are dropped and counted.
// - A batch is written every `flushIntervalMs`, or as soon as `maxBatchRows` log rows wait. A batch
//   that fails is retried as it is, with the same id, before anything newer (src/db/usage.ts makes
//   a retried batch count once even if its first commit did land). Failures never lose counters.
import { randomBytes } from 'node:crypto';
import type { RequestLogEntry } from '../db/request-logs.js';
import type { ReferrerRow, UsageBatch, UsageCounterRow } from '../db/usage.js';
import { anonymizeIp } from '../ip.js';
import { createMonthClock } from './month.js';

export type Classification = 'GOOD' | 'NEUTRAL' | 'BAD';

export interface UsageBufferOptions {
  /** Write at least this often. Default 1,000 ms. */
  readonly flushIntervalMs?: number;
  /** Write as soon as this many log rows wait; also the most log rows per batch. Default 1,000. */
  readonly maxBatchRows?: number;
  /** Log rows kept while the database is away; older ones are dropped beyond it. Default 50,000. */
  readonly maxBufferedLogs?: number;
  /** Distinct referrer origins counted per key and month by this process; more count as `other`. Default 100. */
  readonly maxReferrersPerKey?: number;
  /**
   * REQUEST_LOGS_MAX_RATE: most request-log rows kept per second by this process; beyond it rows are
   * left out (and counted). Usage counters are never limited. Default Infinity.
   */
  readonly maxLogsPerSecond?: number;
  /** ANONYMIZE_IP_ADDRESS: keep IPv4 /24 and IPv6 /48 of logged IPs. Default true. */
  readonly anonymizeIp?: boolean;
  /** TZ for usage months. Default: the system time zone. */
  readonly timeZone?: string;
  /** Called with each failed background write (the data stays buffered). Default: ignore. */
  readonly onError?: (err: unknown) => void;
  /** Clock (tests). Default Date.now. */
  readonly now?: () => number;
}

export const USAGE_BUFFER_DEFAULTS = Object.freeze({
  flushIntervalMs: 1000,
  maxBatchRows: 1000,
  maxBufferedLogs: 50_000,
  maxReferrersPerKey: 100,
  maxLogsPerSecond: Infinity,
  anonymizeIp: true,
});

/** Writes a batch; resolves when it is durable (src/db/usage.ts writeUsageBatch). */
export type UsageWriter = (batch: UsageBatch) => Promise<unknown>;

export interface UsageKeyRef {
  readonly id: string;
  readonly accountId: string;
}

export interface RequestLogInput {
  readonly apiKeyId: string | null;
  readonly accountId: string | null;
  /** The client IP; anonymised here when configured. */
  readonly ip: string | null;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  readonly country?: string | null;
  /** Threat kinds, comma-separated. */
  readonly threats?: string | null;
  /** Epoch ms; default now. */
  readonly time?: number;
}

export interface UsageBufferStats {
  readonly pendingCounters: number;
  readonly pendingLogs: number;
  readonly droppedLogs: number;
  /** Rows left out because of maxLogsPerSecond. */
  readonly rateLimitedLogs: number;
  readonly batchesWritten: number;
  readonly failedWrites: number;
}

export interface UsageBuffer {
  /** One request for `key`, with its classification (null = none) and referrer origin (null = none). */
  countUsage(key: UsageKeyRef, classification: Classification | null, origin: string | null): void;
  /** One request-log row. */
  logRequest(entry: RequestLogInput): void;
  /** Requests of `accountId` in `month` counted here but not yet written (for plan limits). */
  pendingAccountRequests(accountId: string, month: string): number;
  /** The current usage month in the configured time zone. */
  currentMonth(): string;
  /** Starts the periodic writer (idempotent). */
  start(): void;
  /** Writes everything counted or logged before the call. Rejects when the database fails (nothing is lost). */
  flush(): Promise<void>;
  /** Stops the timer and flushes, retrying until `timeoutMs`; resolves true when everything was written. */
  close(timeoutMs?: number): Promise<boolean>;
  stats(): UsageBufferStats;
}

interface Counter {
  readonly apiKeyId: string;
  readonly accountId: string;
  readonly month: string;
  requests: number;
  good: number;
  neutral: number;
  bad: number;
  referrers: Map<string, number> | null;
  lastUsed: number;
}

const OTHER_ORIGIN = 'other';
const MAX_PATH = 2048;

export function createUsageBuffer(write: UsageWriter, options: UsageBufferOptions = {}): UsageBuffer {
  const o = { ...USAGE_BUFFER_DEFAULTS, ...options };
  const now = options.now ?? Date.now;
  const month = createMonthClock(options.timeZone, now);
  // month → key id → counter: nested maps, so counting allocates no composite key.
  let counters = new Map<string, Map<string, Counter>>();
  let counterCount = 0;
  // month → account id → requests counted and not yet durable (current + in-flight batch).
  const accountPending = new Map<string, Map<string, number>>();
  // month → key id → origins counted by this process (bounds referrer rows per key and month).
  const originsSeen = new Map<string, Map<string, Set<string>>>();
  let logs: RequestLogEntry[] = [];
  let logsHead = 0;
  /** Sequence number of logs[logsHead]; with `logSeqEnd` it tells which rows a flush() must cover. */
  let logSeqHead = 0;
  let logSeqEnd = 0;
  let inflight: { batch: UsageBatch; accounts: Map<string, Map<string, number>> } | null = null;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let soon: NodeJS.Immediate | null = null;
  let closed = false;
  let droppedLogs = 0;
  let rateLimitedLogs = 0;
  let logSecond = 0;
  let logsThisSecond = 0;
  let batchesWritten = 0;
  let failedWrites = 0;

  const counterFor = (key: UsageKeyRef, m: string): Counter => {
    let byKey = counters.get(m);
    if (byKey === undefined) counters.set(m, (byKey = new Map()));
    let c = byKey.get(key.id);
    if (c === undefined) {
      c = { apiKeyId: key.id, accountId: key.accountId, month: m, requests: 0, good: 0, neutral: 0, bad: 0, referrers: null, lastUsed: 0 };
      byKey.set(key.id, c);
      counterCount++;
    }
    return c;
  };

  const admitOrigin = (keyId: string, m: string, origin: string): string => {
    let byKey = originsSeen.get(m);
    if (byKey === undefined) {
      // A new month: keep only the latest month seen before it (late counts), forget older ones.
      const months = [...originsSeen.keys()].sort();
      while (months.length > 1) originsSeen.delete(months.shift()!);
      originsSeen.set(m, (byKey = new Map()));
    }
    let seen = byKey.get(keyId);
    if (seen === undefined) byKey.set(keyId, (seen = new Set()));
    if (seen.has(origin)) return origin;
    if (seen.size >= o.maxReferrersPerKey) return OTHER_ORIGIN;
    seen.add(origin);
    return origin;
  };

  const addAccountPending = (target: Map<string, Map<string, number>>, m: string, accountId: string, n: number): void => {
    let byAccount = target.get(m);
    if (byAccount === undefined) target.set(m, (byAccount = new Map()));
    const next = (byAccount.get(accountId) ?? 0) + n;
    if (next === 0) byAccount.delete(accountId);
    else byAccount.set(accountId, next);
    if (byAccount.size === 0) target.delete(m);
  };

  const pendingLogs = (): number => logs.length - logsHead;

  const takeLogs = (max: number): RequestLogEntry[] => {
    const n = Math.min(max, pendingLogs());
    const out = logs.slice(logsHead, logsHead + n);
    logsHead += n;
    logSeqHead += n;
    if (logsHead === logs.length) {
      logs = [];
      logsHead = 0;
    } else if (logsHead > 4096 && logsHead * 2 > logs.length) {
      logs = logs.slice(logsHead);
      logsHead = 0;
    }
    return out;
  };

  const buildBatch = (): NonNullable<typeof inflight> => {
    const rows: UsageCounterRow[] = [];
    const referrers: ReferrerRow[] = [];
    const lastUsed: { apiKeyId: string; at: Date }[] = [];
    const accounts = new Map<string, Map<string, number>>();
    const latest = new Map<string, number>();
    for (const byKey of counters.values()) {
      for (const c of byKey.values()) {
        rows.push({ apiKeyId: c.apiKeyId, accountId: c.accountId, month: c.month, requests: c.requests, good: c.good, neutral: c.neutral, bad: c.bad });
        if (c.referrers !== null) {
          for (const [origin, n] of c.referrers) referrers.push({ apiKeyId: c.apiKeyId, month: c.month, origin, requests: n });
        }
        addAccountPending(accounts, c.month, c.accountId, c.requests);
        if (c.lastUsed > (latest.get(c.apiKeyId) ?? 0)) latest.set(c.apiKeyId, c.lastUsed);
      }
    }
    for (const [apiKeyId, at] of latest) lastUsed.push({ apiKeyId, at: new Date(at) });
    counters = new Map();
    counterCount = 0;
    const batchLogs = takeLogs(o.maxBatchRows);
    return {
      batch: { id: randomBytes(12).toString('base64url'), counters: rows, referrers, logs: batchLogs, lastUsed },
      accounts,
    };
  };

  /** Writes the in-flight batch, or a new one from what is buffered. True when something was written. */
  const writeOnce = async (): Promise<boolean> => {
    if (inflight === null) {
      if (counterCount === 0 && pendingLogs() === 0) return false;
      inflight = buildBatch();
    }
    const current = inflight;
    try {
      await write(current.batch);
    } catch (err) {
      failedWrites++;
      throw err;
    }
    inflight = null;
    batchesWritten++;
    for (const [m, byAccount] of current.accounts) {
      for (const [accountId, n] of byAccount) addAccountPending(accountPending, m, accountId, -n);
    }
    return true;
  };

  /** Runs `fn` when no other write runs (one write at a time per buffer). */
  const exclusive = async (fn: () => Promise<void>): Promise<void> => {
    while (running !== null) await running.catch(() => undefined);
    const p = fn();
    running = p;
    try {
      await p;
    } finally {
      if (running === p) running = null;
    }
  };

  const background = (): void => {
    if (running !== null) return;
    exclusive(async () => { await writeOnce(); }).catch((err) => options.onError?.(err));
  };

  const flush = (): Promise<void> => {
    const hadCounters = counterCount > 0;
    const targetSeq = logSeqEnd;
    return exclusive(async () => {
      if (inflight !== null) await writeOnce();
      if (hadCounters || counterCount > 0 || logSeqHead < targetSeq) await writeOnce();
      while (logSeqHead < targetSeq) await writeOnce();
    });
  };

  return {
    countUsage(key, classification, origin) {
      const m = month();
      const c = counterFor(key, m);
      c.requests++;
      if (classification === 'GOOD') c.good++;
      else if (classification === 'NEUTRAL') c.neutral++;
      else if (classification === 'BAD') c.bad++;
      if (origin !== null && origin !== '') {
        const admitted = admitOrigin(key.id, m, origin);
        if (c.referrers === null) c.referrers = new Map();
        c.referrers.set(admitted, (c.referrers.get(admitted) ?? 0) + 1);
      }
      c.lastUsed = now();
      addAccountPending(accountPending, m, key.accountId, 1);
    },

    logRequest(entry) {
      const second = Math.floor(now() / 1000);
      if (second !== logSecond) { logSecond = second; logsThisSecond = 0; }
      if (++logsThisSecond > o.maxLogsPerSecond) { rateLimitedLogs++; return; }
      const ip = entry.ip === null ? null : o.anonymizeIp ? anonymizeIp(entry.ip) : entry.ip;
      logs.push({
        time: entry.time ?? now(),
        apiKeyId: entry.apiKeyId,
        accountId: entry.accountId,
        ip,
        method: entry.method.slice(0, 16),
        path: entry.path.length > MAX_PATH ? entry.path.slice(0, MAX_PATH) : entry.path,
        status: entry.status,
        durationMs: Math.round(entry.durationMs * 1000) / 1000,
        country: entry.country ?? null,
        threats: entry.threats ?? null,
      });
      logSeqEnd++;
      if (pendingLogs() > o.maxBufferedLogs) {
        // Drop the oldest row; counters are never dropped.
        logsHead++;
        logSeqHead++;
        droppedLogs++;
      }
      if (pendingLogs() >= o.maxBatchRows && soon === null && running === null && timer !== null) {
        soon = setImmediate(() => { soon = null; background(); });
      }
    },

    pendingAccountRequests(accountId, m) {
      return accountPending.get(m)?.get(accountId) ?? 0;
    },

    currentMonth: month,

    start() {
      if (timer !== null || closed) return;
      timer = setInterval(background, o.flushIntervalMs);
      timer.unref();
    },

    flush,

    async close(timeoutMs = 10_000) {
      closed = true;
      if (timer !== null) clearInterval(timer);
      if (soon !== null) clearImmediate(soon);
      timer = null;
      soon = null;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          await flush();
          if (inflight === null && counterCount === 0 && pendingLogs() === 0) return true;
        } catch (err) {
          options.onError?.(err);
        }
        if (Date.now() >= deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, Math.min(o.flushIntervalMs, Math.max(deadline - Date.now(), 1))));
      }
    },

    stats() {
      return {
        pendingCounters: counterCount + (inflight?.batch.counters.length ?? 0),
        pendingLogs: pendingLogs() + (inflight?.batch.logs.length ?? 0),
        droppedLogs,
        rateLimitedLogs,
        batchesWritten,
        failedWrites,
      };
    },
  };
}
