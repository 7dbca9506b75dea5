// Threat-list index: ns per lookup and memory against 1.5 million random ranges, IPv4 and IPv6
// (src/lists/range-set.ts), and the time to build each set (what the worker thread spends).
//   npx tsc -p . && node dist/bench/micro/ip-ranges.js [--quick]
// Lookups include parsing the address text (as on the request path); half hit a listed range.
import { performance } from 'node:perf_hooks';
import { parseIpRanges } from '../../src/lists/ip-ranges.js';
import { addressKey, buildRangeArrays, newAddressKey, RangeSet } from '../../src/lists/range-set.js';

const quick = process.argv.includes('--quick');
const N = quick ? 200_000 : 1_500_000;
const LOOKUPS = quick ? 200_000 : 1_000_000;
let seed = 12345;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
const v4 = (x: number) => `${x >>> 24}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
const hex = (x: number) => (x >>> 16).toString(16);

function bench(label: string, lines: string[], probes: string[]): void {
  const text = lines.join('\n');
  const heapBefore = process.memoryUsage().arrayBuffers;
  let t = performance.now();
  const parsed = parseIpRanges(text);
  const set = new RangeSet(buildRangeArrays(parsed));
  const buildMs = performance.now() - t;
  const key = newAddressKey();
  let hits = 0;
  t = performance.now();
  for (let i = 0; i < LOOKUPS; i++) {
    const k = addressKey(probes[i % probes.length]!, key);
    if (k.family === 4 ? set.hasV4(k.v4) : set.hasV6(k.words)) hits++;
  }
  const ns = ((performance.now() - t) * 1e6) / LOOKUPS;
  console.log(JSON.stringify({
    set: label, entries: parsed.entries, ranges: set.size, indexBytes: set.bytes,
    bytesPerRange: +(set.bytes / set.size).toFixed(1), buildMs: Math.round(buildMs), nsPerLookup: +ns.toFixed(1),
    hitRate: +(hits / LOOKUPS).toFixed(2), arrayBuffersMb: +((process.memoryUsage().arrayBuffers - heapBefore) / 1048576).toFixed(1),
  }));
}

const lines4: string[] = [];
const probes4: string[] = [];
for (let i = 0; i < N; i++) {
  const bits = 24 + (rnd() % 9);
  const size = 2 ** (32 - bits);
  const start = Math.floor(rnd() / size) * size;
  lines4.push(`${v4(start)}/${bits}`);
  if (i % 2 === 0) probes4.push(v4(start + (rnd() % size)));
  else probes4.push(v4(rnd()));
}
bench('ipv4', lines4, probes4.slice(0, 100_000));

const lines6: string[] = [];
const probes6: string[] = [];
for (let i = 0; i < N; i++) {
  const a = [0x2000 | (rnd() >>> 20), rnd(), rnd(), rnd()].map(hex);
  lines6.push(`${a.join(':')}::/64`);
  if (i % 2 === 0) probes6.push(`${a.join(':')}::${hex(rnd())}`);
  else probes6.push(`${[0x2000 | (rnd() >>> 20), rnd(), rnd(), rnd()].map(hex).join(':')}::1`);
}
bench('ipv6', lines6, probes6.slice(0, 100_000));
