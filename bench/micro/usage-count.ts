// The request path's usage count: UsageBuffer.countUsage into a region of the usage ledger (a file
// mapped shared, src/usage/usage-ledger.ts) and into a heap region (what a process without a
// ledger region uses). Prints a table and writes bench/results/micro-usage-count.json.
//   npx tsc -p . && node dist/bench/micro/usage-count.js [--quick]
// Each row is the median of 7 rounds of 200,000 counts after a warm-up round (--quick: 3 × 50,000),
// in CPU time of this process; nothing is flushed meanwhile (the writer is not started).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createUsageBuffer, type Classification, type UsageBuffer } from '../../src/usage/usage-buffer.js';
import { openUsageLedger } from '../../src/usage/usage-ledger.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;
const OPS = quick ? 50_000 : 200_000;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const keys = Array.from({ length: 10 }, (_, i) => ({ id: `key_${String(i).padStart(24, '0')}`, accountId: `acc_${i % 3}` }));
const origins = ['https://a.example', 'https://b.example', 'https://c.example'];
const classes: (Classification | null)[] = [null, 'GOOD', 'NEUTRAL', 'BAD'];

const shapes: { name: string; run: (b: UsageBuffer, n: number) => void }[] = [
  { name: 'one key, no classification, no origin', run: (b, n) => { for (let i = 0; i < n; i++) b.countUsage(keys[0]!, null, null); } },
  {
    name: '10 keys, classification and origin',
    run: (b, n) => { for (let i = 0; i < n; i++) b.countUsage(keys[i % 10]!, classes[i & 3]!, origins[i % 3]!); },
  },
];

function cpuNs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) * 1000;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-ledger-'));
const ledger = openUsageLedger(join(dir, 'usage.shm'));
const rows: { region: string; shape: string; nsPerCount: number }[] = [];
try {
  for (const region of ['ledger (file, shared)', 'heap'] as const) {
    for (const shape of shapes) {
      const claimed = region === 'heap' ? undefined : ledger.claim()!;
      const buffer = createUsageBuffer(async () => undefined, { timeZone: 'UTC', ...(claimed ? { region: claimed } : {}) });
      shape.run(buffer, OPS);
      const times: number[] = [];
      for (let r = 0; r < ROUNDS; r++) times.push(cpuNs(() => shape.run(buffer, OPS)) / OPS);
      rows.push({ region, shape: shape.name, nsPerCount: Math.round(median(times) * 10) / 10 });
      claimed?.release();
    }
  }
} finally {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
}

console.log('| region | counts | ns per count (CPU) |\n|---|---|---:|');
for (const r of rows) console.log(`| ${r.region} | ${r.shape} | ${r.nsPerCount} |`);
const out = join(root, 'bench', 'results', 'micro-usage-count.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ node: process.version, rounds: ROUNDS, ops: OPS, rows }, null, 2)}\n`);
