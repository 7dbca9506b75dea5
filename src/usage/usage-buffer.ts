// Usage counters and request logs, aggregated in memory per worker and written in batches
// (DESIGN.md section 3: hot paths never wait on the database).
//
// - Counters (requests, GOOD/NEUTRAL/BAD, referrers) merge per key and month, so they stay bounded
//   by #keys × #months however long the database is away, and are never dropped. They live in a
//   region of the usage ledger (usage-ledger.ts), memory shared with the host's other processes,
//   so a process killed at any instruction loses none: the region's next owner writes them, once
//   (the protocol is in ledger-cells.ts). Counts that find no room there (no region free, the
//   region full, an identity too long for a cell) are kept in this process's heap, as they all
//   were before the ledger, and die with it; stats().outsideLedger counts them.
// - Request-log rows queue up to `maxBufferedLogs`; beyond that the oldest are dropped and counted.
// - A batch is written every `flushIntervalMs`, or as soon as `maxBatchRows` log rows wait. A batch
//   that fails is retried as it is, with the same id, before anything newer (src/db/usage.ts makes
//   a retried batch count once even if its first commit did land). Failures never lose counters.
//   Request-log rows and last-use times are best effort: they ride in the batch, not in the ledger.
import { randomBytes } from 'node:crypto';
import type { RequestLogEntry } from '../db/request-logs.js';
import type { UsageBatch } from '../db/usage.js';
import { anonymizeIp } from '../ip.js';
import { BAD, batchOf, emptyRows, GOOD, LedgerCells, NEUTRAL, REQUESTS, type CellIdentity } from './ledger-cells.js';
import { createMonthClock } from './month.js';
import { heapRegion, type LedgerRegion } from './usage-ledger.js';

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
  /**
   * The ledger region counters live in (claimed by the caller, who releases it after close()); what
   * an earlier owner left in it is adopted and written first. Default: a heap region (counts die
   * with the process).
   */
  readonly region?: LedgerRegion;
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
  /** The request's classification when it counted as one (verify with classification). */
  readonly classification?: 'GOOD' | 'NEUTRAL' | 'BAD' | null;
  /** Epoch ms; default now. */
  readonly time?: number;
}

export interface UsageBufferStats {
  /** Counter cells with counts not yet written. */
  readonly pendingCounters: number;
  readonly pendingLogs: number;
  readonly droppedLogs: number;
  /** Rows left out because of maxLogsPerSecond. */
  readonly rateLimitedLogs: number;
  readonly batchesWritten: number;
  readonly failedWrites: number;
  /** Requests counted in this process's heap because the ledger region had no room (they die with the process). */
  readonly outsideLedger: number;
  /** The ledger region counters live in; -1 for none (heap only). */
  readonly ledgerRegion: number;
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

const OTHER_ORIGIN = 'other';
const MAX_PATH = 2048;
/** Cells of a heap table to start with (it doubles when full). */
const HEAP_CELLS = 64;

export function createUsageBuffer(write: UsageWriter, options: UsageBufferOptions = {}): UsageBuffer {
  const o = { ...USAGE_BUFFER_DEFAULTS, ...options };
  const now = options.now ?? Date.now;
  const month = createMonthClock(options.timeZone, now);
  // Counter cells: the ledger region (or the heap), and heap cells for what finds no room there.
  // A cell reference is cell × 2 + (1 in the overflow table), so a lookup yields one number.
  const main = new LedgerCells(options.region ?? heapRegion(HEAP_CELLS));
  let overflow: LedgerCells | null = null;
  // month → key id → cell reference; month → key id → origin → cell reference: nested maps, so
  // counting allocates no composite key.
  const keyCells = new Map<string, Map<string, number>>();
  const referrerCells = new Map<string, Map<string, Map<string, number>>>();
  /** Counts since the last snapshot (plus what an earlier owner of the region left unwritten). */
  let unsnapshotted = 0;
  let outsideLedger = 0;
  // month → account id → requests counted and not yet durable (current + in-flight batch).
  const accountPending = new Map<string, Map<string, number>>();
  // month → key id → origins counted by this process (bounds referrer rows per key and month).
  const originsSeen = new Map<string, Map<string, Set<string>>>();
  let logs: RequestLogEntry[] = [];
  let logsHead = 0;
  /** Sequence number of logs[logsHead]; with `logSeqEnd` it tells which rows a flush() must cover. */
  let logSeqHead = 0;
  let logSeqEnd = 0;
  let inflight: UsageBatch | null = null;
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

  const tableOf = (ref: number): LedgerCells => ((ref & 1) === 0 ? main : overflow!);

  /** A cell for `id`: in the region when it has room, else in the heap. */
  const allocate = (id: CellIdentity): number => {
    const cell = main.allocate(id);
    if (cell >= 0) return cell * 2;
    overflow ??= new LedgerCells(heapRegion(HEAP_CELLS));
    return overflow.allocate(id) * 2 + 1;
  };

  const keyCell = (key: UsageKeyRef, m: string): number => {
    let byKey = keyCells.get(m);
    if (byKey === undefined) keyCells.set(m, (byKey = new Map()));
    let ref = byKey.get(key.id);
    if (ref === undefined) {
      ref = allocate({ kind: 'key', apiKeyId: key.id, accountId: key.accountId, month: m, origin: '' });
      byKey.set(key.id, ref);
    }
    return ref;
  };

  const referrerCell = (keyId: string, m: string, origin: string): number => {
    let byKey = referrerCells.get(m);
    if (byKey === undefined) referrerCells.set(m, (byKey = new Map()));
    let byOrigin = byKey.get(keyId);
    if (byOrigin === undefined) byKey.set(keyId, (byOrigin = new Map()));
    let ref = byOrigin.get(origin);
    if (ref === undefined) {
      ref = allocate({ kind: 'referrer', apiKeyId: keyId, accountId: '', month: m, origin });
      byOrigin.set(origin, ref);
    }
    return ref;
  };

  /** A freed cell leaves the index. */
  const forget = (id: CellIdentity): void => {
    if (id.kind === 'key') {
      const byKey = keyCells.get(id.month);
      byKey?.delete(id.apiKeyId);
      if (byKey?.size === 0) keyCells.delete(id.month);
      return;
    }
    const byKey = referrerCells.get(id.month);
    const byOrigin = byKey?.get(id.apiKeyId);
    byOrigin?.delete(id.origin);
    if (byOrigin?.size === 0) byKey!.delete(id.apiKeyId);
    if (byKey?.size === 0) referrerCells.delete(id.month);
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

  // What an earlier owner of the region left: its cells join the index, and its batch in flight
  // (if any) is the first to be written, under its own id.
  for (const cell of main.adopt()) {
    const id = main.identity(cell);
    if (id.kind === 'key') {
      let byKey = keyCells.get(id.month);
      if (byKey === undefined) keyCells.set(id.month, (byKey = new Map()));
      byKey.set(id.apiKeyId, cell * 2);
      const n = main.unwritten(cell);
      if (n !== 0) addAccountPending(accountPending, id.month, id.accountId, n);
    } else {
      let byKey = referrerCells.get(id.month);
      if (byKey === undefined) referrerCells.set(id.month, (byKey = new Map()));
      let byOrigin = byKey.get(id.apiKeyId);
      if (byOrigin === undefined) byKey.set(id.apiKeyId, (byOrigin = new Map()));
      byOrigin.set(id.origin, cell * 2);
    }
  }
  if (main.pendingCells() > 0) unsnapshotted = 1;
  if (main.inflight) {
    const rows = emptyRows();
    main.rows(rows);
    inflight = batchOf(main.inflightId(), rows);
  }

  /** Prepares the next batch (ledger-cells.ts: snapshot, rows, then the id with inflight = 1). */
  const buildBatch = (): UsageBatch => {
    const rows = emptyRows();
    const mainId = main.prepare(rows);
    const overflowId = overflow?.prepare(rows) ?? null;
    unsnapshotted = 0;
    // The region's id when it has rows: the one a next owner would send the batch under again.
    const id = mainId ?? overflowId ?? randomBytes(12).toString('base64url');
    return batchOf(id, rows, takeLogs(o.maxBatchRows));
  };

  const committed = (id: CellIdentity, n: number): void => addAccountPending(accountPending, id.month, id.accountId, -n);

  /** Writes the in-flight batch, or a new one from what is buffered. True when something was written. */
  const writeOnce = async (): Promise<boolean> => {
    if (inflight === null) {
      if (unsnapshotted === 0 && pendingLogs() === 0) return false;
      const next = buildBatch();
      if (next.counters.length + next.referrers.length + next.logs.length === 0) return false;
      inflight = next;
    }
    const current = inflight;
    try {
      await write(current);
    } catch (err) {
      failedWrites++;
      throw err;
    }
    inflight = null;
    batchesWritten++;
    main.finish(committed, forget);
    overflow?.finish(committed, forget);
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
    const hadCounts = unsnapshotted > 0;
    const targetSeq = logSeqEnd;
    return exclusive(async () => {
      if (inflight !== null) await writeOnce();
      if (hadCounts || unsnapshotted > 0 || logSeqHead < targetSeq) await writeOnce();
      while (logSeqHead < targetSeq) await writeOnce();
    });
  };

  return {
    // The request path: a few stores into the region (no call, no allocation once the cells exist).
    countUsage(key, classification, origin) {
      const m = month();
      const ref = keyCell(key, m);
      const table = tableOf(ref);
      const at = table.counted(ref >> 1);
      const f = table.f64;
      f[at + REQUESTS]!++;
      if (classification === 'GOOD') f[at + GOOD]!++;
      else if (classification === 'NEUTRAL') f[at + NEUTRAL]!++;
      else if (classification === 'BAD') f[at + BAD]!++;
      table.touch(ref >> 1, now());
      if ((ref & 1) === 1) outsideLedger++;
      if (origin !== null && origin !== '') {
        const r = referrerCell(key.id, m, admitOrigin(key.id, m, origin));
        const rt = tableOf(r);
        rt.f64[rt.counted(r >> 1) + REQUESTS]!++;
      }
      unsnapshotted++;
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
        classification: entry.classification ?? null,
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
          if (inflight === null && unsnapshotted === 0 && pendingLogs() === 0) return true;
        } catch (err) {
          options.onError?.(err);
        }
        if (Date.now() >= deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, Math.min(o.flushIntervalMs, Math.max(deadline - Date.now(), 1))));
      }
    },

    stats() {
      return {
        pendingCounters: main.pendingCells() + (overflow?.pendingCells() ?? 0),
        pendingLogs: pendingLogs() + (inflight?.logs.length ?? 0),
        droppedLogs,
        rateLimitedLogs,
        batchesWritten,
        failedWrites,
        outsideLedger,
        ledgerRegion: main.region.index,
      };
    },
  };
}
