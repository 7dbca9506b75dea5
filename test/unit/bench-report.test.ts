// The tables the bench writes (bench/README.md, and the summary in README.md): S4's stocked-pool line names the L figure each configuration
// was divided by (the L bursts of its own minutes), and results written before that pairing (no
// lRps) still render.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { latestResults, renderSection, renderSummary, type ResultsFile } from '../../bench/lib/report.js';
import type { StockedResult } from '../../bench/lib/stocked-pool.js';

const machine = { cpuModel: 'AMD EPYC', cores: 2, cpuFlags: ['sha_ni'], memoryMb: 24_106, node: 'v20.20.2', os: 'linux' };
const options = {
  generator: 'autocannon 8.0.0', quick: false, durationS: 10, warmupS: 2, runs: 3, connections: 100, loadWorkers: 1, workers: 2,
};

function s4(stockedPool: StockedResult): ResultsFile {
  return {
    kind: 'scenario', date: '2026-11-22T09:00:00.000Z', machine, options, generatorCheck: null,
    result: {
      id: 'S4', title: 'GET /v1/challenge (PBKDF2/SHA-256 cost 5,000, pooled)', skipped: null, loadBefore: [1, 1, 1],
      loadAfter: [2, 2, 2], targets: [], derivation: null, stockedPool, floodRatio: null, checks: [],
    },
  } as unknown as ResultsFile;
}

const run = (sampledRps: number) => ({ sampledRps }) as unknown as StockedResult['L']['runs'][number];

test('bench report: each stocked-pool configuration is shown against the L bursts of its own minutes', () => {
  const text = renderSection(new Map([['S4', s4({
    size: 100_000, workers: 2, amount: 34_000, rounds: 3,
    L: { runs: [run(30_000), run(62_000)], rps: 46_000 },
    configs: {
      production: { runs: [], rps: 20_000, lRps: 30_000, vsL: 0.67, missed: 0 },
      bare: { runs: [], rps: 40_000, lRps: 62_000, vsL: 0.65, missed: 3 },
    },
  })]]));
  const line = text.split('\n').find((l) => l.startsWith('Stocked pool'));
  assert.equal(line,
    'Stocked pool (CHALLENGE_POOL_SIZE=100,000 per worker, 2 workers; medians of 3 bursts of 34,000 requests after a ' +
    'warm-up burst, an L burst of the same size after each): ' +
    "production 20,000 req/s (÷ L 0.67 against L's 30,000 req/s between its bursts, 0 takes found a pool empty), " +
    "bare 40,000 req/s (÷ L 0.65 against L's 62,000 req/s between its bursts, 3 takes found a pool empty).");
});

test('bench report: a stocked-pool result from before the pairing (no lRps) still renders', () => {
  const old = {
    size: 100_000, workers: 2, amount: 34_000, rounds: 3, L: { runs: [], rps: 47_650 },
    configs: { production: { runs: [], rps: 20_220, vsL: 0.42, missed: 0 } },
  } as unknown as StockedResult;
  const line = renderSection(new Map([['S4', s4(old)]])).split('\n').find((l) => l.startsWith('Stocked pool'));
  assert.match(line ?? '', /: production 20,220 req\/s \(÷ L 0\.42, 0 takes found a pool empty\)\.$/);
});

function s1(intelRatio: number | null | undefined): ResultsFile {
  const target = (kind: string, config: string | null, rps: number) => ({
    id: config ? `palisade:${config}` : kind, kind, config, rps, vsL: kind === 'L' ? null : 0.5, vsP: null, wrkRps: null, wrkVsL: null,
    latencyRate: rps / 2, troubled: 0, latency: { p50: 1, p99: 2, max: 3 }, paced: { p50: 1, p99: 2, max: 3 },
  });
  return {
    kind: 'scenario', date: '2026-11-25T09:00:00.000Z', machine, options, generatorCheck: null,
    result: {
      id: 'S1', title: 'GET /v1/challenge (default policy)', skipped: null, loadBefore: [1, 1, 1], loadAfter: [2, 2, 2],
      targets: [target('palisade', 'production', 20_000), target('palisade', 'production-nointel', 21_000), target('L', null, 40_000)],
      derivation: null, stockedPool: null, floodRatio: null, checks: [], ...(intelRatio === undefined ? {} : { intelRatio }),
    },
  } as unknown as ResultsFile;
}

test('bench report: S1 shows IP intelligence on ÷ off; results written before it (no intelRatio) render without the line', () => {
  const text = renderSection(new Map([['S1', s1(0.95)]]));
  assert.ok(text.includes('| Palisade production-nointel | 21,000 |'), text);
  assert.equal(text.split('\n').find((l) => l.startsWith('IP intelligence')), 'IP intelligence on ÷ off (production ÷ production-nointel): 0.95.');
  for (const old of [undefined, null]) {
    assert.equal(renderSection(new Map([['S1', s1(old)]])).split('\n').some((l) => l.startsWith('IP intelligence')), false);
  }
});

test('bench report: the S5 inspect scenario renders beside the others', () => {
  const file = s1(null);
  const s5 = { ...file, result: { ...file.result, id: 'S5', title: 'GET /v1/inspect (default intelligence)' } } as ResultsFile;
  const text = renderSection(new Map([['S1', file], ['S5', s5]]));
  assert.ok(text.includes('### S5: GET /v1/inspect (default intelligence)'), text);
  assert.ok(text.indexOf('### S1:') < text.indexOf('### S5:'));
});

test('bench summary: one row per measured scenario with production\'s figures, skipped ones left out, the targets counted', () => {
  const file = s1(null);
  const withChecks = {
    ...file,
    result: {
      ...file.result,
      targets: file.result.targets.map((t) => (t.config === 'production' ? { ...t, vsL: 0.5, vsP: 3.1, paced: { p50: 0.4, p99: 4.2, max: 9 } } : t)),
      checks: [{ label: 'production ÷ L', target: '≥ 0.5', measured: 0.5, met: true }, { label: 'bare ÷ L', target: '≥ 0.65', measured: 0.6, met: false }],
    },
  } as unknown as ResultsFile;
  const skipped = { ...file, result: { ...file.result, id: 'S3', skipped: 'Redis does not answer' } } as ResultsFile;
  const text = renderSummary(new Map([['S1', withChecks], ['S3', skipped]]));
  const rows = text.split('\n').filter((l) => l.startsWith('| S'));
  assert.deepEqual(rows, ['| S1: GET /v1/challenge (default policy) | 2026-11-25, AMD EPYC | 20,000 | 0.5 | 3.1 | 4.2 | 5,257 |']);
  assert.ok(text.includes('(Machine: AMD EPYC, 2 cores, SHA-NI, 24 GB, Node v20.20.2;'), text);
  assert.ok(text.includes('Targets met: 1 of 2.'), text);
  assert.equal(renderSummary(new Map()), '_No results yet: run `npm run bench`._');
});

test('bench report: results measured on different machines name each one, at the top and in each section', () => {
  const a = s1(null);
  const b = { ...a, machine: { ...a.machine, cpuModel: 'Intel Xeon' }, result: { ...a.result, id: 'S5', title: 'GET /v1/inspect (default intelligence)' } } as ResultsFile;
  const text = renderSection(new Map([['S1', a], ['S5', b]]));
  assert.ok(text.includes('Machines: AMD EPYC, 2 cores, SHA-NI, 24 GB, Node v20.20.2; Intel Xeon, 2 cores, SHA-NI, 24 GB, Node v20.20.2.'), text);
  assert.ok(text.includes('_2026-11-25 on Intel Xeon, 3 × 10 s per target and mode'), text);
  assert.match(renderSummary(new Map([['S1', a], ['S5', b]])), /\| 2026-11-25, Intel Xeon \|/);
});

test('bench report: S6 shows ÷ B instead of ÷ P, names B, and adds the classifier row beside ALTCHA\'s figure', () => {
  const file = s1(null);
  const t = (kind: string, config: string | null, rps: number, vsB: number | null) => ({
    id: config ? `palisade:${config}` : kind, kind, config, rps, vsL: kind === 'L' ? null : 0.1, vsP: null, vsB, wrkRps: null, wrkVsL: null,
    latencyRate: rps / 2, troubled: 0, latency: { p50: 1, p99: 2, max: 3 }, paced: { p50: 1, p99: 2, max: 3 },
  });
  const s6 = {
    ...file,
    result: {
      ...file.result, id: 'S6', title: 'POST /v1/classifier (10 KB of text, every signal on)',
      targets: [t('palisade', 'production', 2_400, 2.4), t('palisade', 'bare', 2_600, 2.6), t('L', null, 30_000, null), t('B', null, 1_000, null)],
    },
  } as unknown as ResultsFile;
  const text = renderSection(new Map([['S1', file], ['S6', s6]]));
  const block = text.slice(text.indexOf('### S6:'));
  assert.ok(block.includes('| target | req/s (median) | ÷ L | ÷ B |'), block);
  assert.ok(block.includes('| Palisade production | 2,400 | 0.1 | 2.4 |'), block);
  assert.ok(block.includes('| B: Fastify + wink-naive-bayes-text-classifier | 1,000 | 0.1 | — |'), block);
  assert.ok(text.includes('| POST /v1/classifier, 10 KB | 2,600 | 2,400 | 932 (a laptop) |'), text);
  // Without S6 the Sentinel table has no classifier row, and S1 keeps its ÷ P column.
  const without = renderSection(new Map([['S1', file]]));
  assert.equal(without.includes('/v1/classifier'), false);
  assert.ok(without.includes('| target | req/s (median) | ÷ L | ÷ P |'));
});

test('bench report: S2c gives the fields ratio; its results file is picked up by name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-report-'));
  try {
    const file = s1(null);
    const s2c = {
      ...file, result: { ...file.result, id: 'S2c', title: 'POST /v1/verify, a key asking for fields, payloads without them', fieldsRatio: 0.97 },
    } as unknown as ResultsFile;
    writeFileSync(join(dir, '2026-11-27-S2c.json'), JSON.stringify(s2c));
    writeFileSync(join(dir, '2026-11-27-S2x-old.json'), '{}');
    const latest = latestResults(dir);
    assert.deepEqual([...latest.keys()], ['S2c']);
    const text = renderSection(latest);
    assert.equal(text.split('\n').find((l) => l.startsWith('A key asking for fields')),
      'A key asking for fields ÷ the default policy, payloads without fields (production-fields ÷ production): 0.97.');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
