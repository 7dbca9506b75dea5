// `npm run bench:eml:bands [-- options]`: the score bands of mail (SOURCE_BANDS.mail in
// src/classifier/sources.ts) measured on one half of the SpamAssassin corpus. Palisade runs as the
// e-mail comparison runs it (palisade.ts: offline in a network namespace, DNS refused, no
// X-Authenticate, no training data), each message's score is kept, and every candidate band is
// applied to the scores: spam precision, recall and F1 and the ham false-positive rate, at BAD
// (score ≥ badScore) and at NEUTRAL or worse (score ≥ neutralScore). Bands are chosen on the tune
// half; the test half is the one `npm run bench:eml` reports, and is only read to report.
//
//   --split tune|test   the half (default tune)
//   --bad LIST          badScore candidates, comma-separated (default 1.5,1.75,2,2.25,2.5,2.75,3)
//   --neutral LIST      neutralScore candidates (default 0.5,0.75,1,1.25,1.5)
//   --concurrency N     requests in flight (default 4)
//   --save FILE         also write each message's id, label and score as JSON
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { emptyConfusion, figures, record, type Figures } from '../../eval/lib/metrics.js';
import { loadCorpus, type RawMessage } from './corpus.js';
import { startDnsRefuser } from './dns-refuser.js';
import { runSet, waitUntilIdle } from './measure.js';
import { rerunOffline } from './offline.js';
import { startPalisadeEml, type PalisadeVerdict } from './palisade.js';

const { values: v } = parseArgs({
  options: {
    inner: { type: 'boolean', default: false },
    split: { type: 'string', default: 'tune' },
    bad: { type: 'string', default: '1.5,1.75,2,2.25,2.5,2.75,3' },
    neutral: { type: 'string', default: '0.5,0.75,1,1.25,1.5' },
    concurrency: { type: 'string', default: '4' },
    save: { type: 'string' },
  },
});

if (!v.inner) rerunOffline(fileURLToPath(import.meta.url), process.argv.slice(2));
else await inner();

async function inner(): Promise<void> {
  const split = v.split;
  if (split !== 'tune' && split !== 'test') throw new Error('--split must be tune or test');
  const bad = numbers('bad', v.bad!);
  const neutral = numbers('neutral', v.neutral!);
  const concurrency = Number(v.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency must be a positive integer');
  const corpus = loadCorpus(split);
  const scores = await scoresOf(corpus, concurrency);
  if (v.save !== undefined) {
    writeFileSync(v.save, `${JSON.stringify(corpus.map((m, i) => ({ id: m.id, label: m.label, score: scores[i] })))}\n`);
  }
  const ham = corpus.filter((m) => m.label === 'ham').length;
  console.log(`\nThe ${split} half: ${corpus.length} messages (${ham} ham, ${corpus.length - ham} spam).\n`);
  console.log(table('BAD: score ≥ badScore', 'badScore', bad, corpus, scores));
  console.log(table('NEUTRAL or worse: score ≥ neutralScore', 'neutralScore', neutral, corpus, scores));
}

/** Each message's score from POST /v1/eml; a message the service failed on ends the run. */
async function scoresOf(corpus: readonly RawMessage[], concurrency: number): Promise<number[]> {
  const dns = await startDnsRefuser();
  const palisade = await startPalisadeEml(availableParallelism(), randomBytes(32).toString('base64url'), dns.server);
  try {
    await waitUntilIdle(palisade.pid);
    const none: PalisadeVerdict = { spam: false, neutralOrWorse: false, score: 0 };
    const run = await runSet(palisade.check, corpus, concurrency, none);
    if (run.errors > 0) throw new Error(`${run.errors} messages failed (${run.firstError})`);
    return run.verdicts.map((x) => x.score);
  } finally {
    await palisade.stop();
    await dns.close();
  }
}

function table(title: string, column: string, cuts: readonly number[], corpus: readonly RawMessage[], scores: readonly number[]): string {
  const out = [`${title}`, '', `| ${column} | spam precision % | spam recall % | spam F1 % | ham flagged (FPR) % | ham flagged |`, '|--:|--:|--:|--:|--:|--:|'];
  for (const cut of cuts) {
    const f = figuresAt(corpus, scores, cut);
    out.push(`| ${cut} | ${pct(f.precision)} | ${pct(f.recall)} | ${pct(f.f1)} | ${pct(f.fpr)} | ${f.fp} of ${f.ham} |`);
  }
  return `${out.join('\n')}\n`;
}

function figuresAt(corpus: readonly RawMessage[], scores: readonly number[], cut: number): Figures {
  const c = emptyConfusion();
  corpus.forEach((m, i) => record(c, m.label, scores[i]! >= cut));
  return figures(c);
}

function pct(x: number | null): string {
  return x === null ? '–' : (x * 100).toFixed(1);
}

function numbers(name: string, list: string): number[] {
  const out = list.split(',').map(Number);
  if (out.length === 0 || out.some((n) => !Number.isFinite(n) || n <= 0)) throw new Error(`--${name} must be positive numbers, comma-separated`);
  return out;
}
