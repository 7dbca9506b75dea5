// Loads a downloaded IP list from disk into a RangeSet, off the calling thread: a worker thread
// reads, parses, sorts and merges, and hands the typed arrays back by transfer. An absent file is
// an empty list (nothing downloaded yet, or a start without network).
import { Worker } from 'node:worker_threads';
import { RangeSet, type RangeArrays } from './range-set.js';

export interface LoadedRanges {
  readonly set: RangeSet;
  /** Lines that named an address or CIDR. */
  readonly entries: number;
  /** Lines skipped (not an address or CIDR, or a /0). */
  readonly bad: number;
}

const WORKER_URL = new URL('./range-build-worker.js', import.meta.url);
const EMPTY: LoadedRanges = Object.freeze({ set: RangeSet.EMPTY, entries: 0, bad: 0 });

type Reply =
  | { ok: true; arrays: RangeArrays; entries: number; bad: number }
  | { ok: false; code: string | null; message: string };

export function loadRangeFile(path: string): Promise<LoadedRanges> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: { path } });
    let settled = false;
    worker.once('message', (reply: Reply) => {
      settled = true;
      void worker.terminate();
      if (reply.ok) resolve({ set: new RangeSet(reply.arrays), entries: reply.entries, bad: reply.bad });
      else if (reply.code === 'ENOENT') resolve(EMPTY);
      else reject(Object.assign(new Error(reply.message), { code: reply.code }));
    });
    worker.once('error', (err) => { if (!settled) { settled = true; reject(err); } });
    worker.once('exit', (code) => { if (!settled) { settled = true; reject(new Error(`range build thread exited with ${code}`)); } });
  });
}
