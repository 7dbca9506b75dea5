// The claim store (native/claim-binding.cc): used challenges, kept apart from the soft state.
import { addon } from './addon.js';
import { argType, checkInt } from './args.js';
import { SHM_MAX_MS } from './shm-table.js';

// Claims of used challenges, kept apart from the soft state (format and rules in
// native/claim-store.h). An id is claimed until an epoch-ms moment its caller derives from the
// challenge, so the same challenge always names the same moment.

interface RawClaimStore {
  claim(id: string, untilMs: number): number;
  sweep(removeFiles: boolean): number;
  stats(): number;
  survey(): number;
  setClock(epochMs: number): void;
  close(): void;
}

/** Claim results besides 1 (claimed now) and 0 (claimed before). */
export const CLAIM_FULL = -1;
export const CLAIM_EXPIRED = -3;
/** The smallest first segment, in 8-byte slots. */
export const CLAIM_MIN_SLOTS = 32;
const CLAIM_MAX_SLOTS = 2 ** 28;

export interface ClaimStoreStats {
  /** Bytes of every segment file in the directory (all processes). */
  readonly bytes: number;
  /** Segments, claims and buckets mapped by this process. */
  readonly segments: number;
  readonly claims: number;
  readonly buckets: number;
  /** Claims this process refused because the memory bound was reached. */
  readonly full: number;
}

/**
 * One process's view of a claims directory; every process on the host that opens the same
 * directory shares the claims. Operations throw TypeError / RangeError on bad arguments and Error
 * after close().
 */
export class ClaimStore {
  readonly out = new Float64Array(5);
  readonly #raw: RawClaimStore;

  constructor(dir: string, maxBytes: number, minSlots: number) {
    if (typeof dir !== 'string' || dir.length === 0 || dir.includes('\0')) throw argType('dir', 'a directory path');
    checkInt('maxBytes', maxBytes, 4096, Number.MAX_SAFE_INTEGER);
    checkInt('minSlots', minSlots, CLAIM_MIN_SLOTS, CLAIM_MAX_SLOTS);
    const Raw = addon.ClaimStore as (new (dir: string, maxBytes: number, minSlots: number, out: Float64Array) => RawClaimStore) | undefined;
    if (typeof Raw !== 'function') throw new Error('The native addon is out of date (no ClaimStore); rebuild it with "npm run build".');
    this.#raw = new Raw(dir, maxBytes, minSlots, this.out);
  }

  /** 1 claimed now, 0 already claimed, CLAIM_FULL (memory bound), CLAIM_EXPIRED (`untilMs` has passed). */
  claim(id: string, untilMs: number): number {
    if (typeof id !== 'string') throw argType('id', 'a string');
    return this.#raw.claim(id, checkInt('untilMs', untilMs, 1, SHM_MAX_MS));
  }

  /** Unmaps ended buckets; with `removeFiles`, deletes their files too. The number of files deleted. */
  sweep(removeFiles: boolean): number {
    return this.#raw.sweep(removeFiles === true);
  }

  stats(): ClaimStoreStats {
    this.#raw.stats();
    const o = this.out;
    return { bytes: o[0]!, segments: o[1]!, claims: o[2]!, buckets: o[3]!, full: o[4]! };
  }

  /** Every live segment of the directory, whichever process wrote it. O(files): for gauges and the CLI. */
  survey(): { claims: number; segments: number; buckets: number; bytes: number } {
    this.#raw.survey();
    const o = this.out;
    return { claims: o[0]!, segments: o[1]!, buckets: o[2]!, bytes: o[3]! };
  }

  /** Tests only: epoch ms that replaces the real clock for this process's view (0: the real clock). */
  setClock(epochMs: number): void {
    this.#raw.setClock(checkInt('epochMs', epochMs, 0, SHM_MAX_MS));
  }

  close(): void {
    this.#raw.close();
  }
}
