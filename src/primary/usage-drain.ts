// The primary's part of the usage ledger (src/usage/usage-ledger.ts): it writes what dead processes
// left in regions nobody holds. It sweeps once before the workers start (what the last run left:
// a node killed as a whole loses nothing the page cache kept), as soon as a worker exits, every
// `intervalMs` (a region whose write failed, a process outside the supervisor's sight), and a
// last time on shutdown. A region's lock makes the primary and a worker that claims the same
// region take turns; the protocol of ledger-cells.ts makes whichever writes it write it once.
import type { UsageWriter } from '../usage/usage-buffer.js';
import { batchOf, emptyRows, LedgerCells } from '../usage/ledger-cells.js';
import type { LedgerRegion, UsageLedger } from '../usage/usage-ledger.js';

export interface UsageDrainOptions {
  /** Sweep at least this often. Default 10,000 ms. */
  readonly intervalMs?: number;
  /** Each failed sweep (the counts stay in the ledger for the next). Default: ignore. */
  readonly onError?: (err: unknown) => void;
  /** Each region written: its index and the requests it added. Default: ignore. */
  readonly onDrained?: (region: number, requests: number) => void;
}

export const USAGE_DRAIN_DEFAULTS = Object.freeze({ intervalMs: 10_000 });

export interface UsageDrain {
  /** Writes every region nobody holds; resolves with the requests written. Sweeps asked for during one run once after it. */
  sweep(): Promise<number>;
  /** Stops the timer, sweeps a last time and closes the ledger. */
  close(): Promise<void>;
}

export function startUsageDrain(ledger: UsageLedger, write: UsageWriter, options: UsageDrainOptions = {}): UsageDrain {
  const { intervalMs } = { ...USAGE_DRAIN_DEFAULTS, ...options };
  let running: Promise<number> | null = null;
  let again: Promise<number> | null = null;
  let closed = false;

  const sweepOnce = async (): Promise<number> => {
    let written = 0;
    for (let i = 0; i < ledger.regions; i++) {
      const region = ledger.tryClaim(i);
      if (region === null) continue;
      try {
        const n = await drainRegion(region, write);
        if (n > 0) options.onDrained?.(i, n);
        written += n;
      } finally {
        region.release();
      }
    }
    return written;
  };

  const sweep = (): Promise<number> => {
    if (running === null) {
      running = sweepOnce().finally(() => { running = null; });
      return running;
    }
    // One more run after the current one, shared by everyone who asks meanwhile.
    again ??= running.catch(() => 0).then(() => {
      again = null;
      return sweep();
    });
    return again;
  };

  const timer = setInterval(() => {
    sweep().catch((err) => options.onError?.(err));
  }, intervalMs);
  timer.unref();

  return {
    sweep,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      try {
        await sweep();
      } finally {
        ledger.close();
      }
    },
  };
}

/**
 * Writes what `region` holds: first the batch its last owner had in flight, under that batch's id,
 * then everything else as one new batch. Resolves with the requests written; rejects when the
 * database does (what is not written stays, in the state the protocol needs to try again).
 */
export async function drainRegion(region: LedgerRegion, write: UsageWriter): Promise<number> {
  const cells = new LedgerCells(region);
  cells.adopt();
  if (cells.live === 0 && !cells.inflight) return 0;
  let requests = 0;
  if (cells.inflight) {
    const rows = emptyRows();
    cells.rows(rows);
    // false: the dead owner's write had committed; the batch is not applied again.
    const applied = await write(batchOf(cells.inflightId(), rows));
    cells.finish(null, ignore);
    if (applied !== false) for (const r of rows.counters) requests += r.requests;
  }
  const rows = emptyRows();
  const id = cells.prepare(rows);
  if (id !== null) {
    await write(batchOf(id, rows));
    for (const r of rows.counters) requests += r.requests;
  }
  cells.finish(null, ignore);
  return requests;
}

function ignore(): void {}
