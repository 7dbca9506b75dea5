// How full the shared-memory table gets before it refuses: random claim ids into a fresh table until
// half of the last 1,000 claims are refused with STORE_FULL. Reports, as a share of the slots, where
// the first refusal came, where 1 % of claims were refused, and where half were. The README's
// "Sizing the shared-memory state table" quotes these figures.
//   npx tsc -p . && node dist/bench/micro/store-fill.js [--capacity N] [--fills N]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isPalisadeError } from '../../src/errors.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';

const WINDOW = 1_000;
const TTL_MS = 3_600_000;

export interface Fill {
  /** Shares of the capacity claimed when the first claim was refused, when 1 % and when half of the last WINDOW were. */
  readonly firstRefusal: number;
  readonly onePercent: number;
  readonly half: number;
}

export async function fillTable(capacity: number): Promise<Fill> {
  const dir = mkdtempSync(join(tmpdir(), 'store-fill-'));
  const store = openSharedMemoryStore(join(dir, 'state.shm'), { capacity });
  try {
    const recent: boolean[] = [];
    let refusedRecently = 0;
    let claimed = 0;
    let firstRefusal = -1;
    let onePercent = -1;
    for (;;) {
      let refused = false;
      try {
        store.claimOnceSync(randomBytes(16).toString('base64url'), TTL_MS);
        claimed++;
      } catch (err) {
        if (!isPalisadeError(err) || err.code !== 'STORE_FULL') throw err;
        refused = true;
        if (firstRefusal < 0) firstRefusal = claimed;
      }
      recent.push(refused);
      if (refused) refusedRecently++;
      if (recent.length > WINDOW && recent.shift()) refusedRecently--;
      if (onePercent < 0 && recent.length === WINDOW && refusedRecently >= WINDOW / 100) onePercent = claimed;
      if (refusedRecently >= WINDOW / 2) break;
    }
    return { firstRefusal: firstRefusal / capacity, onePercent: onePercent / capacity, half: claimed / capacity };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('store-fill.js')) {
  const { values } = parseArgs({ options: { capacity: { type: 'string', default: String(1 << 20) }, fills: { type: 'string', default: '3' } } });
  const capacity = Number(values.capacity);
  const fills = Number(values.fills);
  if (!Number.isInteger(capacity) || capacity < 1024 || capacity > 2 ** 30) throw new Error('--capacity must be an integer from 1024 to 2^30');
  if (!Number.isInteger(fills) || fills < 1) throw new Error('--fills must be a positive integer');
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  console.log(`capacity ${capacity} slots, ${fills} fills with random claim ids`);
  for (let i = 0; i < fills; i++) {
    const f = await fillTable(capacity);
    console.log(`  first STORE_FULL at ${pct(f.firstRefusal)}, 1 % refused at ${pct(f.onePercent)}, half refused at ${pct(f.half)}`);
  }
}
