// Shared file mappings and byte locks (native/usage-ledger.cc) for the usage ledger.
import { addon } from './addon.js';
import { checkInt } from './args.js';

// The shared mapping and the region locks of src/usage/usage-ledger.ts; the file and the counting
// protocol are JavaScript's.

interface RawUsageLedger {
  mapShared(fd: number, bytes: number): ArrayBuffer;
  reserve(fd: number, bytes: number): void;
  lockByte(fd: number, offset: number): boolean;
  unlockByte(fd: number, offset: number): void;
}

function usageLedgerAddon(): RawUsageLedger {
  const raw = addon.usageLedger as RawUsageLedger | undefined;
  if (raw === undefined) throw new Error('The native addon is out of date (no usageLedger); rebuild it with "npm run build".');
  return raw;
}

/**
 * An ArrayBuffer over the first `bytes` of the open file `fd`, mapped MAP_SHARED: what one process
 * stores is at once visible to every other that maps the file, and survives the death of the
 * process that stored it. Unmapped when the ArrayBuffer is collected (never while a view exists).
 */
export function mapSharedFile(fd: number, bytes: number): ArrayBuffer {
  checkInt('fd', fd, 0, 2 ** 31 - 1);
  checkInt('bytes', bytes, 1, Number.MAX_SAFE_INTEGER);
  return usageLedgerAddon().mapShared(fd, bytes);
}

/** Allocates the first `bytes` of `fd` on disk (posix_fallocate), so no later store into the mapping can fail. */
export function reserveFile(fd: number, bytes: number): void {
  checkInt('fd', fd, 0, 2 ** 31 - 1);
  usageLedgerAddon().reserve(fd, checkInt('bytes', bytes, 1, Number.MAX_SAFE_INTEGER));
}

/**
 * Takes the write lock on byte `offset` of `fd` (an open file description lock: the kernel drops
 * it when the descriptor closes, so when its process dies). False when another descriptor holds it.
 */
export function lockFileByte(fd: number, offset: number): boolean {
  checkInt('fd', fd, 0, 2 ** 31 - 1);
  return usageLedgerAddon().lockByte(fd, checkInt('offset', offset, 0, Number.MAX_SAFE_INTEGER));
}

export function unlockFileByte(fd: number, offset: number): void {
  checkInt('fd', fd, 0, 2 ** 31 - 1);
  usageLedgerAddon().unlockByte(fd, checkInt('offset', offset, 0, Number.MAX_SAFE_INTEGER));
}
