// The text analysis of POST /v1/classifier (src/classifier/text): µs of CPU per analyzeText call
// on 1 KB, 10 KB and 100 KB of mixed text (support messages in seven languages, links, prices,
// emoji, a spam paragraph), with and without language detection. Prints a table and writes
// bench/results/micro-classifier-text.json.
//   npx tsc -p . && node dist/bench/micro/classifier-text.js [--quick]
// Each row is the median of 7 rounds of ~200 ms (--quick: 3 × 60 ms) after a warm-up round, in CPU
// time of this process. "baseline loop" reads the 10 KB text once with charCodeAt and counts its
// lower-case letters: the floor any single pass over the text pays on this machine.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzeText, loadLanguageDetector, prepareTextAnalysis, type TextOptions } from '../../src/classifier/text/index.js';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 7;
const ROUND_MS = quick ? 60 : 200;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const PARAGRAPHS = [
  'Hello team, I was charged $49.99 twice for my subscription last month. Could you please check the invoice and refund the duplicate payment? My order number is 88231-AX. ',
  'Guten Tag, ich habe letzte Woche eine blaue Jacke bestellt und sie ist noch nicht angekommen. Können Sie bitte nachsehen, wo mein Paket ist? Vielen Dank! ',
  "Bonjour, je voudrais savoir si ma commande a déjà été expédiée et quels sont les frais de port pour la Belgique. Merci d'avance 🙂 ",
  'Hola, ¿tienen descuento para estudiantes? Me interesa el plan anual de 99 €, pero no encuentro la opción en https://shop.example.com/pricing. ',
  'Buongiorno, vorrei sapere se il prodotto è disponibile in taglia M e quando arriverà. Grazie mille per la risposta. ',
  'Olá, gostaria de cancelar a minha assinatura e receber a fatura de março por e-mail (financeiro@example.com). Obrigado. ',
  'Hallo, ik wil graag mijn wachtwoord wijzigen maar ik krijg geen e-mail. Zie screenshot op www.example.org/s/123 — kunt u mij helpen? ',
  'Buy cheap viagra online, no prescription needed!!! Best casino bonus and free spins at http://bit.ly/abc123, limited time offer. ',
];

/** `size` characters of the paragraphs in turn, as a flat string (JSON.parse gives the route one). */
function mixedText(size: number): string {
  let text = '';
  for (let i = 0; text.length < size; i++) text += PARAGRAPHS[i % PARAGRAPHS.length];
  return JSON.parse(JSON.stringify(text.slice(0, size))) as string;
}

let sink = 0;

/** Median CPU µs per call over ROUNDS rounds of ~ROUND_MS each, after a warm-up round. */
function measure(fn: () => number): number {
  let batch = 1;
  const warmEnd = performance.now() + ROUND_MS;
  while (performance.now() < warmEnd) sink ^= fn();
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let calls = 0;
    const cpu = process.cpuUsage();
    const end = performance.now() + ROUND_MS;
    do {
      for (let i = 0; i < batch; i++) sink ^= fn();
      calls += batch;
    } while (performance.now() < end);
    const used = process.cpuUsage(cpu);
    samples.push((used.user + used.system) / calls);
    if (calls > 64) batch = Math.min(64, batch * 2);
  }
  samples.sort((a, b) => a - b);
  return Math.round(samples[samples.length >> 1]! * 10) / 10;
}

function baseline(text: string): number {
  let lower = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x61 && c <= 0x7a) lower++;
  }
  return lower;
}

prepareTextAnalysis();
const detector = await loadLanguageDetector();
const withDetector: TextOptions = { disabled: new Set(), detector };
const withoutDetector: TextOptions = { disabled: new Set() };

const rows: { input: string; case: string; usPerCall: number }[] = [];
const ten = mixedText(10_000);
rows.push({ input: '10 KB', case: 'baseline loop (charCodeAt, count)', usPerCall: measure(() => baseline(ten)) });
for (const [label, size] of [['1 KB', 1_000], ['10 KB', 10_000], ['100 KB', 100_000]] as const) {
  const texts = [mixedText(size)];
  rows.push({ input: label, case: 'analyzeText with language detection', usPerCall: measure(() => analyzeText({ texts, expectedLanguages: ['en'] }, withDetector).score) });
  rows.push({ input: label, case: 'analyzeText without language detection', usPerCall: measure(() => analyzeText({ texts }, withoutDetector).score) });
}
const sample = PARAGRAPHS[1]!.repeat(3).slice(0, 200); // the scanner's sample size
rows.push({ input: '200 chars', case: 'eld detection alone (the sample)', usPerCall: measure(() => (detector.detect(sample) ?? '').length) });

console.log('| input | case | µs per call (CPU) |\n|---|---|---:|');
for (const r of rows) console.log(`| ${r.input} | ${r.case} | ${r.usPerCall} |`);
const machine = { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', loadavg: loadavg().map((l) => Math.round(l * 100) / 100) };
console.log(`\n${machine.cpus} × ${machine.model}, load average ${machine.loadavg.join(' ')}, Node ${process.version}`);
if (sink === 0.5) console.log(''); // keeps the results alive
const out = join(root, 'bench', 'results', 'micro-classifier-text.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ node: process.version, machine, rounds: ROUNDS, roundMs: ROUND_MS, rows }, null, 2)}\n`);
