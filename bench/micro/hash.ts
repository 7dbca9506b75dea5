// Native hashing vs node:crypto. Prints a table and writes bench/results/micro-hash.json.
//   npx tsc -p . && node dist/bench/micro/hash.js [--quick]
// Each row is the median of 7 rounds of ~150 ms (--quick: 3 × 50 ms). Acceptance (issue 3): the
// prepared native HMAC-SHA-256 of a 200-byte message at least 2× node:crypto's createHmac.
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hmac, hmacPrepared, hmacPreparedHex, hmacPreparedInto, iteratedSha, pbkdf2, prepareHmacKey, sha } from '../../src/native/index.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;
const ROUND_MS = quick ? 50 : 150;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

interface Row {
  operation: string;
  input: string;
  implementation: string;
  nsPerOp: number;
  opsPerSec: number;
  /** node:crypto's ns/op over this row's (1 for the node:crypto row itself). */
  speedup: number;
}

let sink = 0;

/** Median ns/op over ROUNDS rounds, each running `fn` in batches until ROUND_MS has passed. */
function measure(fn: () => Buffer | string): number {
  let batch = 64;
  const warmEnd = performance.now() + ROUND_MS;
  while (performance.now() < warmEnd) for (let i = 0; i < batch; i++) sink ^= fn().length;
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let ops = 0;
    const start = process.hrtime.bigint();
    const end = performance.now() + ROUND_MS;
    do {
      for (let i = 0; i < batch; i++) sink ^= fn().length;
      ops += batch;
    } while (performance.now() < end);
    samples.push(Number(process.hrtime.bigint() - start) / ops);
    if (ops < 1000) batch = Math.max(1, batch >> 1);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1]!;
}

const rows: Row[] = [];

function group(operation: string, input: string, cases: Record<string, () => Buffer | string>): void {
  let baseline = 0;
  for (const [implementation, fn] of Object.entries(cases)) {
    const ns = measure(fn);
    if (baseline === 0) baseline = ns;
    rows.push({
      operation, input, implementation, nsPerOp: Math.round(ns), opsPerSec: Math.round(1e9 / ns),
      speedup: Math.round((baseline / ns) * 100) / 100,
    });
  }
}

const key = Buffer.alloc(32, 0x42);
const prepared = prepareHmacKey('sha256', key);
const out = Buffer.allocUnsafe(32);

for (const size of [64, 1024]) {
  const data = Buffer.alloc(size, 0x61);
  const label = size === 64 ? '64 B' : '1 KiB';
  group('SHA-256', label, {
    'node:crypto createHash': () => createHash('sha256').update(data).digest(),
    'native sha': () => sha('sha256', data),
  });
  group('HMAC-SHA-256', label, {
    'node:crypto createHmac': () => createHmac('sha256', key).update(data).digest(),
    'native hmac (one-shot)': () => hmac('sha256', key, data),
    'native hmacPrepared': () => hmacPrepared(prepared, data),
  });
}

const msg = Buffer.alloc(200, 0x62);
const msgText = 'b'.repeat(200);
group('HMAC-SHA-256', '200 B', {
  'node:crypto createHmac': () => createHmac('sha256', key).update(msg).digest(),
  'native hmac (one-shot)': () => hmac('sha256', key, msg),
  'native hmacPrepared': () => hmacPrepared(prepared, msg),
  'native hmacPreparedInto': () => (hmacPreparedInto(prepared, msg, out), out),
});
group('HMAC-SHA-256 → hex', '200 B string', {
  'node:crypto createHmac': () => createHmac('sha256', key).update(msgText).digest('hex'),
  'native hmacPreparedHex': () => hmacPreparedHex(prepared, msgText),
});

const salt = Buffer.alloc(16, 0x5a);
const pw = Buffer.alloc(20, 0x70);
group('PBKDF2-HMAC-SHA-256', '1,000 iterations', {
  'node:crypto pbkdf2Sync': () => pbkdf2Sync(pw, salt, 1000, 32, 'sha256'),
  'native pbkdf2': () => pbkdf2('sha256', pw, salt, 1000, 32),
});
group('iterated SHA-256', 'cost 1,000', {
  'node:crypto createHash loop': () => {
    let d = createHash('sha256').update(salt).update(pw).digest();
    for (let i = 1; i < 1000; i++) d = createHash('sha256').update(d).digest();
    return d;
  },
  'native iteratedSha': () => iteratedSha('sha256', salt, pw, 1000, 32),
});

const acceptanceRow = rows.find((r) => r.input === '200 B' && r.implementation === 'native hmacPrepared')!;
const acceptance = {
  criterion: 'native hmacPrepared ≥ 2× node:crypto createHmac, HMAC-SHA-256 of 200 bytes',
  speedup: acceptanceRow.speedup,
  passed: acceptanceRow.speedup >= 2,
};

const table = [
  '| operation | input | implementation | ns/op | ops/s | vs node:crypto |',
  '|---|---|---|---:|---:|---:|',
  ...rows.map((r) =>
    `| ${r.operation} | ${r.input} | ${r.implementation} | ${r.nsPerOp.toLocaleString('en')} | ` +
    `${r.opsPerSec.toLocaleString('en')} | ${r.speedup.toFixed(2)}× |`),
].join('\n');
console.log(table);
console.log(`\nacceptance: ${acceptance.criterion}: ${acceptance.speedup}× → ${acceptance.passed ? 'PASS' : 'FAIL'}`);

const result = {
  benchmark: 'micro-hash',
  date: new Date().toISOString(),
  node: process.version,
  openssl: process.versions.openssl,
  cpu: cpus()[0]?.model ?? 'unknown',
  cpus: cpus().length,
  rounds: ROUNDS,
  roundMs: ROUND_MS,
  rows,
  acceptance,
};
const path = join(root, 'bench', 'results', 'micro-hash.json');
mkdirSync(dirname(path), { recursive: true });
writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${path}`);
if (!acceptance.passed) process.exitCode = 1;
