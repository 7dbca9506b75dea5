// The usage ledger: a file in DATA_DIR that every process of the host maps shared, where usage
// counts live from the moment a request is counted until the database has them. A worker killed
// at any instruction cannot take its counts along: they are stores into the page cache, not into
// its heap, and whoever owns its region next writes them (its replacement when it takes the same
// region, else the primary, which drains every region nobody holds: src/primary/usage-drain.ts).
// The cells and the exactly-once protocol are in ledger-cells.ts.
//
// Not IPC to the primary: process.send() queues the message in the worker (libuv writes it to the
// pipe later), and a queued message dies with the worker; awaiting an acknowledgement per request
// would put a round trip on the request path. A store into a shared page is done the moment it
// executes: nothing of it is left in the worker to lose.
//
// A region belongs to the process that holds the lock on its byte (an open file description lock:
// the kernel drops it when the process dies, however it dies, as the process's descriptors and
// mappings go), so no two processes ever write one region, and a region nobody holds is a dead
// process's, or empty.
//
// File: a 4,096-byte header, then LEDGER_LAYOUT.regions regions of (cells + 1) × cellBytes bytes:
// a region header of one cell's size, then the cells.
//   header  0 magic 'PALUSAGE', 8 version (u32), 12 regions, 16 cells per region, 20 cell bytes,
//           24 header bytes (u32 each), 32 nonce (16 random bytes: batch ids unique to this file)
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { lockFileByte, mapSharedFile, reserveFile, unlockFileByte } from '../native/index.js';

/** Regions (at most this many processes count at once), cells per region, bytes per cell. */
export const LEDGER_LAYOUT = Object.freeze({ regions: 32, cells: 1024, cellBytes: 512, headerBytes: 4096 });

const MAGIC = Buffer.from('PALUSAGE', 'latin1');
const VERSION = 1;
const REGION_BYTES = (LEDGER_LAYOUT.cells + 1) * LEDGER_LAYOUT.cellBytes;
const FILE_BYTES = LEDGER_LAYOUT.headerBytes + LEDGER_LAYOUT.regions * REGION_BYTES;

/** The memory one owner counts into: a region of the file, or of the heap (see heapRegion). */
export interface LedgerRegion {
  /** The region's number in the file; -1 for a heap region. */
  readonly index: number;
  readonly cells: number;
  /** The region header, then `cells` cells of LEDGER_LAYOUT.cellBytes. */
  readonly buffer: ArrayBuffer;
  readonly byteOffset: number;
  /** Batch ids of this region start with it; null for a heap region (random ids). */
  readonly batchPrefix: string | null;
  /** Gives the region up (its counts stay in the file for the next owner). */
  release(): void;
}

export interface UsageLedger {
  readonly path: string;
  readonly regions: number;
  /** Takes the first region no process holds; null when every one is held. */
  claim(): LedgerRegion | null;
  /** Takes region `index` when no process holds it, else null. */
  tryClaim(index: number): LedgerRegion | null;
  /** Releases every region this ledger holds. Views stay readable until collected. */
  close(): void;
}

/** DATA_DIR's ledger. */
export function usageLedgerPath(dataDir: string): string {
  return join(dataDir, 'db', 'usage.shm');
}

/** Opens the ledger at `path`, creating it (and its directory) when absent. Throws when it is not one this build reads. */
export function openUsageLedger(path: string): UsageLedger {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fd = create(path);
  }
  let buffer: ArrayBuffer;
  let nonce: string;
  try {
    nonce = check(path, fd);
    buffer = mapSharedFile(fd, FILE_BYTES);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  const held = new Set<number>();
  let open = true;

  const region = (index: number): LedgerRegion => {
    held.add(index);
    return {
      index,
      cells: LEDGER_LAYOUT.cells,
      buffer,
      byteOffset: LEDGER_LAYOUT.headerBytes + index * REGION_BYTES,
      batchPrefix: `${nonce}.${index}.`,
      release() {
        if (!held.delete(index) || !open) return;
        unlockFileByte(fd, index);
      },
    };
  };

  return {
    path,
    regions: LEDGER_LAYOUT.regions,
    claim() {
      for (let i = 0; i < LEDGER_LAYOUT.regions; i++) {
        const r = this.tryClaim(i);
        if (r !== null) return r;
      }
      return null;
    },
    tryClaim(index) {
      if (!open) throw new Error('the usage ledger is closed');
      if (!Number.isInteger(index) || index < 0 || index >= LEDGER_LAYOUT.regions) throw new RangeError(`no region ${index}`);
      // Locks of one descriptor never conflict with each other: a region this ledger holds already is not free.
      if (held.has(index) || !lockFileByte(fd, index)) return null;
      return region(index);
    },
    close() {
      if (!open) return;
      // Explicitly: the mapping holds the open file description, and with it the locks, past closeSync.
      for (const index of held) unlockFileByte(fd, index);
      held.clear();
      open = false;
      closeSync(fd);
    },
  };
}

/**
 * A region in this process's heap, as large as needed: for tests, and for counts that find no room
 * in the file (every region held, a region full). Counts in it die with the process, as before the ledger.
 */
export function heapRegion(cells: number): LedgerRegion {
  return {
    index: -1,
    cells,
    buffer: new ArrayBuffer((cells + 1) * LEDGER_LAYOUT.cellBytes),
    byteOffset: 0,
    batchPrefix: null,
    release() {},
  };
}

/**
 * Creates the file under a temporary name and publishes it with link(2), which fails when the path
 * exists: of several processes starting together, one file wins and nobody maps a half-made header.
 */
function create(path: string): number {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  const fd = openSync(tmp, 'wx+', 0o600);
  try {
    reserveFile(fd, FILE_BYTES);
    const header = Buffer.alloc(48);
    MAGIC.copy(header, 0);
    header.writeUInt32LE(VERSION, 8);
    header.writeUInt32LE(LEDGER_LAYOUT.regions, 12);
    header.writeUInt32LE(LEDGER_LAYOUT.cells, 16);
    header.writeUInt32LE(LEDGER_LAYOUT.cellBytes, 20);
    header.writeUInt32LE(LEDGER_LAYOUT.headerBytes, 24);
    randomBytes(16).copy(header, 32);
    writeSync(fd, header, 0, header.length, 0);
    try {
      linkSync(tmp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      closeSync(fd);
      return openSync(path, 'r+'); // another process created it first
    }
    return fd;
  } catch (err) {
    try { closeSync(fd); } catch { /* closed above */ }
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

/** Checks the header and the size; returns the file's nonce (base64url). */
function check(path: string, fd: number): string {
  const header = Buffer.alloc(48);
  const read = readSync(fd, header, 0, header.length, 0);
  if (read < header.length || !header.subarray(0, 8).equals(MAGIC)) {
    throw new Error(`${path} is not a Palisade usage ledger; move it away`);
  }
  const layout = [header.readUInt32LE(8), header.readUInt32LE(12), header.readUInt32LE(16), header.readUInt32LE(20), header.readUInt32LE(24)];
  const mine = [VERSION, LEDGER_LAYOUT.regions, LEDGER_LAYOUT.cells, LEDGER_LAYOUT.cellBytes, LEDGER_LAYOUT.headerBytes];
  if (layout.some((v, i) => v !== mine[i])) {
    throw new Error(
      `the usage ledger ${path} has layout ${layout.join('/')} and this build reads ${mine.join('/')}; start the version ` +
        'that wrote it once and stop it (its primary writes every count on the way out), then remove the file',
    );
  }
  const size = fstatSync(fd).size;
  if (size !== FILE_BYTES) throw new Error(`the usage ledger ${path} is ${size} bytes, expected ${FILE_BYTES}; it is damaged: remove it`);
  return header.subarray(32, 48).toString('base64url');
}
