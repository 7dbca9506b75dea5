// The cells of one ledger region (usage-ledger.ts) and the protocol that writes each count to the
// database exactly once, whoever writes it: the process that counted it, or the next owner of its
// region after that process died at any instruction.
//
// A cell counts one thing: requests of an API key in a month with their classifications ('key'),
// or requests of a key in a month from one referrer origin ('referrer'). Four counters
// (requests, GOOD, NEUTRAL, BAD), each three times:
//   counted  c  raised by the owner as it counts (the only store on the request path)
//   flushed  f  how much of c the database has
//   pending  p  the target of the batch in flight: the batch adds p − f
// and the region header holds `seq` (the last batch prepared) and `inflight` (batch `seq` was
// prepared and may have been committed). The owner, one batch at a time:
//   prepare  p = c for every cell, seq + 1, then inflight = 1; the batch is p − f under id
//            (file nonce, region, seq), which the database records in the batch's own transaction
//            (src/db/usage.ts), so a batch id applies once however often it is sent
//   commit   after the database acknowledged (or answered "already applied"): f = p for every cell,
//            then inflight = 0
// A new owner that finds inflight = 1 sends p − f again under the same id before anything else. Why
// that is exact wherever the last owner died: p and f are only changed by prepare (under
// inflight = 0, before any batch exists) and commit (only after the database has the batch), so
// with inflight = 1 either no f moved yet, and p − f is the very batch the dead owner sent (or was
// about to), or some did, which proves the id is applied and the database answers "already applied"
// to the rest. Counts raised after the snapshot are c − p: the next batch's.
//
// Cell layout (Float64 words; a cell is LEDGER_LAYOUT.cellBytes): 0 state (1 live), 1 identity
// bytes, 2 last use (epoch ms), 4-7 counted, 8-11 flushed, 12-15 pending, then from byte 128 the
// identity as JSON. A cell is made live last (identity and zeroed counters first) and freed only
// when c = f with no batch in flight, so a half-made or half-freed cell never holds a count. The
// region header (the first cell's worth of bytes) holds 0 seq, 1 inflight, 2 live cells (never
// below the true number, so a region that reads 0 with no batch in flight needs no scan).
import { randomBytes } from 'node:crypto';
import type { RequestLogEntry } from '../db/request-logs.js';
import type { ReferrerRow, UsageBatch, UsageCounterRow } from '../db/usage.js';
import { LEDGER_LAYOUT, type LedgerRegion } from './usage-ledger.js';

/** Counter offsets within a cell's counted/flushed/pending groups. */
export const REQUESTS = 0;
export const GOOD = 1;
export const NEUTRAL = 2;
export const BAD = 3;

export interface CellIdentity {
  readonly kind: 'key' | 'referrer';
  readonly apiKeyId: string;
  readonly month: string;
  /** The key's account ('key' cells). */
  readonly accountId: string;
  /** The referrer origin ('referrer' cells). */
  readonly origin: string;
}

/** What a batch adds, in the row shapes of src/db/usage.ts. */
export interface BatchRows {
  readonly counters: UsageCounterRow[];
  readonly referrers: ReferrerRow[];
  /** key id → latest use. */
  readonly lastUsed: Map<string, number>;
}

export function emptyRows(): BatchRows {
  return { counters: [], referrers: [], lastUsed: new Map() };
}

export function batchOf(id: string, rows: BatchRows, logs: readonly RequestLogEntry[] = []): UsageBatch {
  return {
    id, counters: rows.counters, referrers: rows.referrers, logs,
    lastUsed: [...rows.lastUsed].map(([apiKeyId, at]) => ({ apiKeyId, at: new Date(at) })),
  };
}

const WORDS = LEDGER_LAYOUT.cellBytes / 8;
const STATE = 0;
const ID_BYTES = 1;
const LAST_USED = 2;
/** Word offsets of the counter groups in a cell. */
export const COUNTED = 4;
const FLUSHED = 8;
const PENDING = 12;
const ID_OFFSET = 128;
/** Longest identity (JSON bytes) a cell holds. */
export const MAX_IDENTITY_BYTES = LEDGER_LAYOUT.cellBytes - ID_OFFSET;
const H_SEQ = 0;
const H_INFLIGHT = 1;
const H_LIVE = 2;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The cells of one region, for its one owner. In a heap region (index -1) the table grows when
 * full; a file region is fixed, and allocate() answers -1 when it has no room.
 */
export class LedgerCells {
  readonly region: LedgerRegion;
  /** The region's words; cell `i` starts at word (i + 1) × WORDS (the region header is cell -1). */
  f64: Float64Array;
  #u8: Uint8Array;
  #capacity: number;
  readonly #ids: (CellIdentity | null)[] = [];
  readonly #free: number[] = [];
  #live = 0;

  constructor(region: LedgerRegion) {
    this.region = region;
    this.#capacity = region.cells;
    const bytes = (region.cells + 1) * LEDGER_LAYOUT.cellBytes;
    this.f64 = new Float64Array(region.buffer, region.byteOffset, bytes / 8);
    this.#u8 = new Uint8Array(region.buffer, region.byteOffset, bytes);
    for (let i = region.cells - 1; i >= 0; i--) this.#free.push(i);
    this.#ids.length = region.cells;
    this.#ids.fill(null);
  }

  get live(): number { return this.#live; }
  get inflight(): boolean { return this.f64[H_INFLIGHT] === 1; }

  /**
   * Takes over what an earlier owner left: its live cells (returned, to be indexed) and its batch
   * in flight, if any (`inflight`). Call once, right after claiming the region.
   */
  adopt(): number[] {
    const found: number[] = [];
    if (this.f64[H_LIVE] === 0 && this.f64[H_INFLIGHT] === 0) return found;
    for (let cell = 0; cell < this.#capacity; cell++) {
      const base = (cell + 1) * WORDS;
      if (this.f64[base + STATE] !== 1) continue;
      const id = this.#decode(base);
      if (id === null) {
        // Not a cell this build wrote: nothing in it can be attributed, so it is left as it is.
        continue;
      }
      this.#ids[cell] = id;
      found.push(cell);
    }
    const taken = new Set(found);
    this.#free.length = 0;
    for (let cell = this.#capacity - 1; cell >= 0; cell--) {
      if (!taken.has(cell) && this.f64[(cell + 1) * WORDS + STATE] !== 1) this.#free.push(cell);
    }
    this.#live = found.length;
    this.f64[H_LIVE] = Math.max(this.f64[H_LIVE]!, found.length);
    return found;
  }

  identity(cell: number): CellIdentity {
    return this.#ids[cell]!;
  }

  /** A live cell for `id`, counters at zero; -1 when a file region is full or the identity does not fit. */
  allocate(id: CellIdentity): number {
    const json = encoder.encode(JSON.stringify([id.kind, id.apiKeyId, id.month, id.kind === 'key' ? id.accountId : id.origin]));
    // A file region cannot grow; a heap region is never adopted, so its identities need no bytes.
    const inFile = this.region.index >= 0;
    if (inFile && (json.length > MAX_IDENTITY_BYTES || this.#free.length === 0)) return -1;
    if (this.#free.length === 0) this.#grow();
    const cell = this.#free.pop()!;
    const base = (cell + 1) * WORDS;
    // Counters and identity first, the live state last; the live count before it (never below the truth).
    this.f64.fill(0, base, base + ID_OFFSET / 8);
    if (json.length <= MAX_IDENTITY_BYTES) this.#u8.set(json, base * 8 + ID_OFFSET);
    this.f64[base + ID_BYTES] = json.length;
    this.#live++;
    this.f64[H_LIVE] = this.#live;
    this.f64[base + STATE] = 1;
    this.#ids[cell] = id;
    return cell;
  }

  /** Word index of `cell`'s counted group: f64[counted(cell) + REQUESTS]++ counts a request. */
  counted(cell: number): number {
    return (cell + 1) * WORDS + COUNTED;
  }

  touch(cell: number, at: number): void {
    this.f64[(cell + 1) * WORDS + LAST_USED] = at;
  }

  /** Requests counted in `cell` and not yet in the database. */
  unwritten(cell: number): number {
    const base = (cell + 1) * WORDS;
    return this.f64[base + COUNTED]! - this.f64[base + FLUSHED]!;
  }

  /**
   * Prepares the next batch: p = c for every live cell, their p − f into `out`, then (when this
   * table added any) seq + 1 and inflight = 1. Returns the batch id, or null when nothing was added.
   */
  prepare(out: BatchRows): string | null {
    const before = out.counters.length + out.referrers.length;
    this.#snapshot();
    this.rows(out);
    return out.counters.length + out.referrers.length === before ? null : this.#begin();
  }

  /**
   * The batch in flight is in the database (acknowledged, or answered "already applied"): f = p
   * for every live cell, then inflight = 0; then cells left with nothing to write are freed.
   * `onKey` hears the requests each key cell had in the batch, `forget` each cell freed.
   */
  finish(onKey: ((id: CellIdentity, requests: number) => void) | null, forget: (id: CellIdentity) => void): void {
    this.#commit(onKey);
    this.#freeIdle(forget);
  }

  #snapshot(): void {
    const f = this.f64;
    for (let cell = 0; cell < this.#capacity; cell++) {
      if (this.#ids[cell] === null) continue;
      const base = (cell + 1) * WORDS;
      for (let k = 0; k < 4; k++) f[base + PENDING + k] = f[base + COUNTED + k]!;
    }
  }

  /** Appends p − f of every live cell: the batch in flight (sent again under inflightId() by a new owner). */
  rows(out: BatchRows): void {
    const f = this.f64;
    for (let cell = 0; cell < this.#capacity; cell++) {
      const id = this.#ids[cell];
      if (id === null) continue;
      const base = (cell + 1) * WORDS;
      const requests = f[base + PENDING]! - f[base + FLUSHED]!;
      const lastUsed = f[base + LAST_USED]!;
      if (lastUsed > (out.lastUsed.get(id.apiKeyId) ?? 0)) out.lastUsed.set(id.apiKeyId, lastUsed);
      if (id.kind === 'referrer') {
        if (requests > 0) out.referrers.push({ apiKeyId: id.apiKeyId, month: id.month, origin: id.origin, requests });
        continue;
      }
      const good = f[base + PENDING + GOOD]! - f[base + FLUSHED + GOOD]!;
      const neutral = f[base + PENDING + NEUTRAL]! - f[base + FLUSHED + NEUTRAL]!;
      const bad = f[base + PENDING + BAD]! - f[base + FLUSHED + BAD]!;
      if (requests > 0 || good > 0 || neutral > 0 || bad > 0) {
        out.counters.push({ apiKeyId: id.apiKeyId, accountId: id.accountId, month: id.month, requests, good, neutral, bad });
      }
    }
  }

  #begin(): string {
    const prefix = this.region.batchPrefix;
    if (prefix === null) return randomBytes(12).toString('base64url');
    const seq = this.f64[H_SEQ]! + 1;
    this.f64[H_SEQ] = seq;
    this.f64[H_INFLIGHT] = 1;
    return prefix + seq;
  }

  /** The id of the batch in flight (inflight is true). */
  inflightId(): string {
    return this.region.batchPrefix! + this.f64[H_SEQ]!;
  }

  #commit(onKey: ((id: CellIdentity, requests: number) => void) | null): void {
    const f = this.f64;
    for (let cell = 0; cell < this.#capacity; cell++) {
      const id = this.#ids[cell];
      if (id === null) continue;
      const base = (cell + 1) * WORDS;
      if (onKey !== null && id.kind === 'key') {
        const n = f[base + PENDING]! - f[base + FLUSHED]!;
        if (n !== 0) onKey(id, n);
      }
      for (let k = 0; k < 4; k++) f[base + FLUSHED + k] = f[base + PENDING + k]!;
    }
    f[H_INFLIGHT] = 0;
  }

  #freeIdle(forget: (id: CellIdentity) => void): void {
    if (this.inflight) return;
    const f = this.f64;
    for (let cell = 0; cell < this.#capacity; cell++) {
      const id = this.#ids[cell];
      if (id === null) continue;
      const base = (cell + 1) * WORDS;
      if (f[base + COUNTED] !== f[base + FLUSHED] || f[base + COUNTED + GOOD] !== f[base + FLUSHED + GOOD] ||
        f[base + COUNTED + NEUTRAL] !== f[base + FLUSHED + NEUTRAL] || f[base + COUNTED + BAD] !== f[base + FLUSHED + BAD]) continue;
      // Dead first, then the live count: it never drops below the true number.
      f[base + STATE] = 0;
      this.#ids[cell] = null;
      this.#free.push(cell);
      this.#live--;
      f[H_LIVE] = this.#live;
      forget(id);
    }
  }

  /** Live cells with counts not yet in the database. */
  pendingCells(): number {
    let n = 0;
    const f = this.f64;
    for (let cell = 0; cell < this.#capacity; cell++) {
      if (this.#ids[cell] === null) continue;
      const base = (cell + 1) * WORDS;
      for (let k = 0; k < 4; k++) if (f[base + COUNTED + k] !== f[base + FLUSHED + k]) { n++; break; }
    }
    return n;
  }

  #decode(base: number): CellIdentity | null {
    const length = this.f64[base + ID_BYTES]!;
    if (!Number.isInteger(length) || length < 2 || length > MAX_IDENTITY_BYTES) return null;
    try {
      const v = JSON.parse(decoder.decode(this.#u8.subarray(base * 8 + ID_OFFSET, base * 8 + ID_OFFSET + length))) as unknown;
      if (!Array.isArray(v) || v.length !== 4 || !v.every((s) => typeof s === 'string')) return null;
      const [kind, apiKeyId, month, last] = v as string[];
      if (kind === 'key') return { kind, apiKeyId: apiKeyId!, month: month!, accountId: last!, origin: '' };
      if (kind === 'referrer') return { kind, apiKeyId: apiKeyId!, month: month!, accountId: '', origin: last! };
      return null;
    } catch {
      return null;
    }
  }

  /** Heap regions only: twice the cells, the same contents. */
  #grow(): void {
    const old = this.#capacity;
    const next = old * 2;
    const words = new Float64Array((next + 1) * WORDS);
    words.set(this.f64);
    this.f64 = words;
    this.#u8 = new Uint8Array(words.buffer);
    this.#capacity = next;
    this.#ids.length = next;
    this.#ids.fill(null, old);
    for (let i = next - 1; i >= old; i--) this.#free.push(i);
  }
}
