// Geolocation lookups (src/intel/geo.ts): the embedded country database (mmdb-lib) plus the
// embedded ASN index (asn-index.ts), as the request path asks them: text address in, merged answer
// out. Per-lookup latency is timed in batches of 1,000 (the clock's own cost would dominate single
// lookups); p50/p99 are over the batch means, with 10,000 distinct addresses (20 % IPv6) drawn
// from public space, and again with the one address a busy client repeats.
//   npx tsc -p . && node dist/bench/micro/geo.js [--quick]
import { performance } from 'node:perf_hooks';
import { embeddedAsnFiles, loadAsnIndex } from '../../src/intel/asn-index.js';
import { createGeo, embeddedCountryDatabase } from '../../src/intel/geo.js';

const quick = process.argv.includes('--quick');
const BATCHES = quick ? 300 : 3000;
const BATCH = 1000;
let seed = 7;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);

const t0 = performance.now();
const asn = await loadAsnIndex(embeddedAsnFiles());
const asnBuildMs = performance.now() - t0;
const geo = createGeo({ databases: [{ name: 'embedded', path: embeddedCountryDatabase() }], logger: { error() {}, debug() {} } as never, asn: () => asn });
await geo.reloadAll();

const addrs: string[] = [];
for (let i = 0; i < 10_000; i++) {
  if (i % 5 === 0) addrs.push(`2${(rnd() % 0x1000).toString(16).padStart(3, '0')}:${(rnd() & 0xffff).toString(16)}::${(rnd() & 0xffff).toString(16)}`);
  else addrs.push(`${1 + (rnd() % 222)}.${rnd() & 255}.${rnd() & 255}.${rnd() & 255}`);
}

function run(label: string, pick: (i: number) => string): void {
  const means: number[] = [];
  let known = 0;
  for (let b = 0; b < BATCHES; b++) {
    const t = performance.now();
    for (let i = 0; i < BATCH; i++) if (geo.lookup(pick(b * BATCH + i)).country !== null) known++;
    means.push(((performance.now() - t) * 1e6) / BATCH);
  }
  means.sort((a, b) => a - b);
  const at = (q: number) => +means[Math.min(means.length - 1, Math.floor(q * means.length))]!.toFixed(0);
  console.log(JSON.stringify({ lookups: label, p50ns: at(0.5), p99ns: at(0.99), located: +(known / (BATCHES * BATCH)).toFixed(2) }));
}

console.log(JSON.stringify({ asnBuildMs: Math.round(asnBuildMs), asnRanges: asn.size, asnIndexBytes: asn.bytes }));
run('distinct', (i) => addrs[i % addrs.length]!);
run('repeated', () => '8.8.8.8');
