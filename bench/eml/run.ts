// `npm run bench:eml [-- options]`: the SpamAssassin corpus through Palisade's POST /v1/eml, rspamd
// and SpamAssassin on this machine, offline for all three, quality and speed in one table
// (bench/README.md, "E-mail beside rspamd and SpamAssassin").
//
//   --kb20 N        20 KB messages in the speed set (default 300)
//   --concurrency N requests in flight per filter (default 4)
//   --limit N       only the first N held-out messages (development; the figures are rough)
//   --no-readme     do not rewrite the README section
//
// Set-up: rspamd and SpamAssassin are installed from Debian when missing (apt-get, root). Then the
// runner starts itself again inside a new network namespace (`unshare -n`, loopback up): the three
// filters and the client run there, where no address but 127.0.0.1 exists, so "offline" is a fact
// of the run rather than a list of settings. Each filter is started, left to finish its start-up
// work and warmed up with 100 messages; then the corpus and the 20 KB set go through them in
// chunks of 100, one filter at a time and the order rotating, so none competes with another for
// the cores and load from elsewhere falls on the three alike.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SOURCE_BANDS } from '../../src/classifier/sources.js';
import { machineInfo } from '../lib/machine.js';
import { ensureInstalled, startRspamd, startSpamd, type Anchor, type Verdict } from './anchors.js';
import { loadCorpus, twentyKbMessages, type RawMessage } from './corpus.js';
import { runSet, speedOf, waitUntilIdle, type SetRun } from './measure.js';
import { startDnsRefuser } from './dns-refuser.js';
import { rerunOffline } from './offline.js';
import { startPalisadeEml, type PalisadeVerdict } from './palisade.js';
import { qualityOf, renderSection, updateReadme, writeResults, type EmlResults, type TargetResult } from './report.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WARM_UP = 100;
/** Messages each filter takes in turn. */
const CHUNK = 100;

const { values: v } = parseArgs({
  options: {
    inner: { type: 'boolean', default: false },
    kb20: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '4' },
    limit: { type: 'string' },
    'no-readme': { type: 'boolean', default: false },
  },
});
const log = (line: string) => console.log(`[bench:eml] ${line}`);

if (!v.inner) {
  ensureInstalled(log);
  rerunOffline(fileURLToPath(import.meta.url), process.argv.slice(2));
} else {
  await inner();
}

async function inner(): Promise<void> {
  const int = (name: string, raw: string | undefined, def: number) => {
    const n = raw === undefined ? def : Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
    return n;
  };
  const concurrency = int('concurrency', v.concurrency, 4);
  let corpus = loadCorpus();
  if (v.limit !== undefined) {
    // Evenly spaced, so that a short run still holds every group.
    const n = int('limit', v.limit, corpus.length);
    const all = corpus;
    corpus = Array.from({ length: Math.min(n, all.length) }, (_, i) => all[Math.floor((i * all.length) / Math.min(n, all.length))]!);
  }
  const kb20 = twentyKbMessages(corpus, int('kb20', v.kb20, 300));
  const warm = twentyKbMessages(corpus.slice(-400), WARM_UP);
  const workers = availableParallelism();
  log(`${corpus.length} held-out messages, ${kb20.length} of 20 KB, ${concurrency} in flight, ${workers} workers per filter`);

  const none: PalisadeVerdict = { spam: false, neutralOrWorse: false, score: 0 };
  const dns = await startDnsRefuser();
  const starts: [string, () => Promise<Anchor & { check(m: Buffer): Promise<Verdict> }>][] = [
    ['Palisade', () => startPalisadeEml(workers, randomBytes(32).toString('base64url'), dns.server)],
    ['rspamd', () => startRspamd(workers, dns.server)],
    ['SpamAssassin', () => startSpamd(workers)],
  ];
  const running: (Anchor & { check(m: Buffer): Promise<Verdict> })[] = [];
  const targets: TargetResult[] = [];
  try {
    for (const [name, start] of starts) {
      log(`${name}: starting`);
      const target = await start();
      running.push(target);
      const idleMs = await waitUntilIdle(target.pid);
      log(`${name} ${target.version}: idle after ${Math.round(idleMs / 1000)} s; warming up`);
      await runSet(target.check, warm, concurrency, none);
    }
    // Interleaved in chunks, the order rotating, so that whatever else loads the machine meanwhile
    // falls on the three alike; a filter's wall time is the sum of its chunks'.
    const corpusRuns = await interleaved(running, corpus, concurrency, none, 'corpus');
    const kb20Runs = await interleaved(running, kb20, concurrency, none, '20 KB');
    running.forEach((target, i) => {
      const run = corpusRuns[i]!;
      const speedRun = kb20Runs[i]!;
      const name = target.name;
      const result: TargetResult = {
        name, version: target.version,
        verdict: name === 'Palisade' ? `BAD (score ≥ ${SOURCE_BANDS.mail.badScore})` : name === 'rspamd' ? 'action add header or worse (score ≥ 6)' : 'Spam: True (score ≥ 5)',
        quality: qualityOf(corpus, run.verdicts.map((x) => x.spam)),
        ...(name === 'Palisade' ? { qualityNeutral: qualityOf(corpus, run.verdicts.map((x) => (x as PalisadeVerdict).neutralOrWorse)) } : {}),
        corpus: speedOf(run), kb20: speedOf(speedRun), errors: run.errors + speedRun.errors, firstError: run.firstError ?? speedRun.firstError,
      };
      targets.push(result);
      log(`${name}: spam F1 ${((result.quality.spam.f1 ?? 0) * 100).toFixed(1)} %, ${result.corpus.perSecond} msg/s (p99 ${result.corpus.p99Ms} ms), `
        + `20 KB ${result.kb20.perSecond} msg/s (p99 ${result.kb20.p99Ms} ms), ${result.errors} errors${result.firstError ? ` (${result.firstError})` : ''}`);
    });
  } finally {
    for (const t of running) await t.stop();
    await dns.close();
  }
  const results: EmlResults = {
    date: new Date().toISOString(), machine: machineInfo(), concurrency,
    corpus: { messages: corpus.length, ham: count(corpus, 'ham'), spam: count(corpus, 'spam'), kb20: kb20.length },
    targets,
  };
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const name = `${results.date.slice(0, 10)}-eml.json`;
  writeResults(join(dir, name), results);
  const section = renderSection(results, `bench/results/${name}`);
  console.log(`\n${section}\n`);
  if (!v['no-readme'] && v.limit === undefined) {
    if (!updateReadme(join(ROOT, 'README.md'), section)) log('README.md has no eml markers; the section was not written');
    else log('README.md section written');
  }
}

async function interleaved(
  targets: readonly (Anchor & { check(m: Buffer): Promise<Verdict> })[], messages: readonly RawMessage[], concurrency: number, none: Verdict, what: string,
): Promise<SetRun<Verdict>[]> {
  const parts: SetRun<Verdict>[][] = targets.map(() => []);
  for (let at = 0, round = 0; at < messages.length; at += CHUNK, round++) {
    const chunk = messages.slice(at, at + CHUNK);
    for (let k = 0; k < targets.length; k++) {
      const i = (k + round) % targets.length;
      parts[i]!.push(await runSet(targets[i]!.check, chunk, concurrency, none));
    }
    if (round % 5 === 4) log(`${what}: ${Math.min(at + CHUNK, messages.length)} of ${messages.length}`);
  }
  return parts.map((runs) => ({
    verdicts: runs.flatMap((r) => r.verdicts), latencies: runs.flatMap((r) => r.latencies),
    wallMs: runs.reduce((n, r) => n + r.wallMs, 0), errors: runs.reduce((n, r) => n + r.errors, 0),
    firstError: runs.find((r) => r.firstError !== null)?.firstError ?? null,
  }));
}

function count(messages: readonly RawMessage[], label: 'ham' | 'spam'): number {
  return messages.filter((m) => m.label === label).length;
}
