// Where the CPU of one S6 request goes (POST /v1/classifier with bench/scenarios/s6-body.ts): µs
// of CPU per call of each in-process step the route takes for that body, measured alone in this
// process: reading the body (UTF-8 decode, depth scan, JSON.parse), validating it, the text block
// with and without eld, the similarity block against the 20 training examples of
// bench/lib/training-sample.ts, the e-mail block with its MX answer cached, classify() with those
// three blocks, and the JSON answer. The ip, location and device blocks need the service's
// intelligence databases and are left to the CPU profile (bench/README.md, S6). Prints a table and
// writes bench/results/micro-classifier-request.json.
//   npx tsc -p . && node dist/bench/micro/classifier-request.js [--quick]
// Each row is the median of 7 rounds of ~200 ms (--quick: 3 × 60 ms) after a warm-up round, in CPU
// time of this process (GC included).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { classify, RULE_NAMES, type ClassifierDeps } from '../../src/classifier/classify.js';
import { analyzeEmail } from '../../src/classifier/email.js';
import { embeddedDisposableDomains, embeddedFreeProviders } from '../../src/classifier/email-domains.js';
import type { MxLookup } from '../../src/classifier/mx-lookup.js';
import { PhishingList } from '../../src/classifier/phishing-list.js';
import { parseClassifierRequest } from '../../src/classifier/request.js';
import { analyzeSimilarity, createSimilarityIndex } from '../../src/classifier/similarity.js';
import { analyzeText, loadLanguageDetector, prepareTextAnalysis, VOCABULARY_LANGUAGES } from '../../src/classifier/text/index.js';
import { parseJson } from '../../src/http/request.js';
import { SPAM_SAMPLE } from '../lib/training-sample.js';
import { S6_BODY } from '../scenarios/s6-body.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;
const ROUND_MS = quick ? 60 : 200;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

let sink = 0;

/** Median CPU µs per call over ROUNDS rounds of ~ROUND_MS each, after a warm-up round. */
async function measure(fn: () => number | Promise<number>): Promise<number> {
  const warmEnd = performance.now() + ROUND_MS;
  while (performance.now() < warmEnd) sink ^= await fn();
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let calls = 0;
    const cpu = process.cpuUsage();
    const end = performance.now() + ROUND_MS;
    do {
      sink ^= await fn();
      calls++;
    } while (performance.now() < end);
    const used = process.cpuUsage(cpu);
    samples.push((used.user + used.system) / calls);
  }
  samples.sort((a, b) => a - b);
  return Math.round(samples[samples.length >> 1]! * 10) / 10;
}

prepareTextAnalysis();
const detector = await loadLanguageDetector();
/** The MX answer as the service's cache gives it after the first lookup. */
const cachedMx: MxLookup = {
  lookup: () => Promise.resolve('mx'),
  stats: () => ({ lookups: 0, cacheHits: 0, timeouts: 0, errors: 0, cacheSize: 0 }) as unknown as ReturnType<MxLookup['stats']>,
  close: () => {},
};
const lists = { disposable: embeddedDisposableDomains, freeProviders: embeddedFreeProviders, phishing: () => PhishingList.EMPTY };
const deps: ClassifierDeps = { detector, lists, mx: cachedMx };
const index = createSimilarityIndex(SPAM_SAMPLE.map((text, i) => ({ id: `trn_${i}`, text, threshold: 0.7, weight: 1 })));
const bodyBytes = Buffer.from(S6_BODY);
const options = { ruleNames: RULE_NAMES, classifiers: new Set(VOCABULARY_LANGUAGES) };
const body = parseClassifierRequest(parseJson(bodyBytes), options);
const texts = body.texts;
const none = new Set<string>();
const answer = await classify({ texts, expectedLanguages: body.expectedLanguages, email: body.email, similarity: index }, deps);

const rows: { step: string; usPerCall: number }[] = [];
const add = async (step: string, fn: () => number | Promise<number>) => rows.push({ step, usPerCall: await measure(fn) });
await add('read the body: UTF-8 decode, depth scan, JSON.parse (10,243 bytes)', () => (parseJson(bodyBytes) as { text: string }).text.length);
await add('validate it (parseClassifierRequest)', () => parseClassifierRequest(JSON.parse(S6_BODY), options).texts.length);
await add('text block with language detection (eld)', () => analyzeText({ texts, expectedLanguages: ['en'] }, { disabled: none, detector }).score);
await add('text block without language detection', () => analyzeText({ texts }, { disabled: none }).score);
await add('similarity block, 20 training examples', () => analyzeSimilarity(index, texts, { disabled: none }).score);
await add('e-mail block, MX answer cached', async () => (await analyzeEmail(body.email!, { disposable: lists.disposable(), freeProviders: lists.freeProviders(), mx: cachedMx }, { disabled: none })).score);
await add('classify(): text, e-mail and similarity blocks', async () => (await classify({
  texts, expectedLanguages: body.expectedLanguages, email: body.email, similarity: index,
}, deps)).score);
await add('the JSON answer (JSON.stringify)', () => JSON.stringify(answer).length);

console.log('| step | µs per call (CPU) |\n|---|---:|');
for (const r of rows) console.log(`| ${r.step} | ${r.usPerCall} |`);
const machine = { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', loadavg: loadavg().map((l) => Math.round(l * 100) / 100) };
console.log(`\n${machine.cpus} × ${machine.model}, load average ${machine.loadavg.join(' ')}, Node ${process.version}`);
if (sink === 0.5) console.log(''); // keeps the results alive
const out = join(root, 'bench', 'results', 'micro-classifier-request.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ node: process.version, machine, rounds: ROUNDS, roundMs: ROUND_MS, rows }, null, 2)}\n`);
