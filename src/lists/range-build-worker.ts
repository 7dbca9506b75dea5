// Worker-thread entry of loadRangeFile (range-file.ts): reads a list file, parses and sorts it, and
// transfers the typed arrays back (no copy). Runs nothing at import in the main thread.
import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { parseIpRanges } from './ip-ranges.js';
import { buildRangeArrays } from './range-set.js';

if (!isMainThread && parentPort !== null) {
  const { path } = workerData as { path: string };
  try {
    const parsed = parseIpRanges(readFileSync(path, 'latin1'));
    const arrays = buildRangeArrays(parsed);
    parentPort.postMessage(
      { ok: true, arrays, entries: parsed.entries, bad: parsed.bad },
      [arrays.v4Start.buffer, arrays.v4End.buffer, arrays.v6Start.buffer, arrays.v6End.buffer] as ArrayBuffer[],
    );
  } catch (err) {
    parentPort.postMessage({ ok: false, code: (err as NodeJS.ErrnoException).code ?? null, message: (err as Error).message });
  }
}
