// The memory scenario's arithmetic: growth over the run is read off a Theil–Sen line through the
// samples after warm-up, so one heap shrink inside the warm window does not read as growth while a
// steady leak still does; and the README table renders result files written before the line existed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryChecks, summarizeMemory, trendGrowth, type MemorySample } from '../../bench/lib/memory.js';
import type { MemoryUse } from '../../bench/lib/processes.js';
import { renderSection, type MemoryFile } from '../../bench/lib/report.js';
import { theilSen } from '../../bench/lib/stats.js';

const use = (anon: number): MemoryUse => ({ rss: anon + 115, anon, shared: 115, pss: anon + 43 });
const PID = 4242;

/** Samples every 10 s over 600 s, private memory `anonAt(t)` MB. */
function series(anonAt: (t: number) => number): MemorySample[] {
  const out: MemorySample[] = [];
  for (let t = 0; t <= 600; t += 10) out.push({ t, workers: { [PID]: use(anonAt(t)) } });
  return out;
}

test('theilSen: recovers a line exactly, and keeps it with a quarter of the points far off', () => {
  const line = Array.from({ length: 40 }, (_, i) => [i * 10, 50 + 0.02 * i * 10] as const);
  assert.deepEqual(theilSen(line), { slope: 0.02, intercept: 50 });
  const spoiled = line.map(([t, y], i) => (i % 4 === 1 ? [t, y - 30] as const : [t, y] as const));
  const robust = theilSen(spoiled)!;
  assert.ok(Math.abs(robust.slope - 0.02) < 1e-9, `slope ${robust.slope}`);
  assert.equal(theilSen([[5, 1], [5, 2]]), null);
  assert.equal(theilSen([]), null);
});

test('trendGrowth: the line\'s value at the end ÷ at the start − 1', () => {
  // 100 MB at t = 60, +0.01 MB/s: 105.4 MB at t = 600.
  const points = Array.from({ length: 55 }, (_, i) => [60 + i * 10, 100 + 0.01 * i * 10] as const);
  assert.equal(trendGrowth(points, 60, 600), 0.054);
  assert.equal(trendGrowth([[60, -1], [70, -1]], 60, 600), null);
  assert.equal(trendGrowth([], 60, 600), null);
});

test('memory: one heap shrink inside the warm window is not growth; the steady ÷ warm figure is still reported', () => {
  // The 2026-11-22 run in outline: 61 MB, a collection at 100 s drops the heap to 31 MB, it regrows by
  // 190 s, then stays at 60–62 MB to the end.
  const samples = series((t) => (t >= 100 && t < 190 ? 31 + (t - 100) / 3 : t < 190 ? 61 : 62 - (t - 190) / 200));
  const [w] = summarizeMemory(samples, [PID], 600, 10);
  assert.ok(w!.anonGrowth! > 0.15, `steady ÷ warm − 1 = ${w!.anonGrowth}`);
  assert.ok(Math.abs(w!.trend!.anon!) < 0.05, `line ${w!.trend!.anon}`);
  const checks = memoryChecks([w!], { maxSteadyMb: 200, maxGrowth: 0.05 });
  assert.deepEqual(checks.map((c) => c.met), [true, true, true]);
});

test('memory: a steady leak is growth, whatever the windows say', () => {
  // +8% of private memory between the end of warm-up (60 s) and the end of the run.
  const samples = series((t) => 60 * (1 + (0.08 * Math.max(0, t - 60)) / 540));
  const [w] = summarizeMemory(samples, [PID], 600, 10);
  assert.equal(w!.trend!.anon, 0.08);
  assert.ok(w!.anonGrowth! > 0.05);
  const checks = memoryChecks([w!], { maxSteadyMb: 200, maxGrowth: 0.05 });
  assert.equal(checks[2]!.label, 'private memory (RssAnon) growth over the run (trend after warm-up)');
  assert.equal(checks[2]!.measured, 0.08);
  assert.equal(checks[2]!.met, false);
});

test('memory: a worker with no samples after warm-up fails the growth checks rather than passing them', () => {
  const samples: MemorySample[] = [{ t: 0, workers: { [PID]: use(40) } }, { t: 600, workers: { [PID]: null } }];
  const [w] = summarizeMemory(samples, [PID], 600, 10);
  assert.deepEqual(w!.trend, { rss: null, anon: null });
  const checks = memoryChecks([w!], { maxSteadyMb: 200, maxGrowth: 0.05 });
  assert.deepEqual(checks.map((c) => [c.measured, c.met]), [[null, false], [null, false], [null, false]]);
});

test('bench report: the memory table shows both growth figures, and a result file without the line renders with —', () => {
  const file = (withTrend: boolean): MemoryFile => {
    const samples = series(() => 60);
    const workers = summarizeMemory(samples, [PID], 600, 10).map((w) => (withTrend ? w : { ...w, trend: undefined }));
    return {
      kind: 'memory', date: '2026-11-22T13:35:08.843Z',
      machine: { cpuModel: 'AMD EPYC', cores: 2, cpuFlags: ['sha_ni'], memoryMb: 24_106, node: 'v20.20.2', os: 'linux' },
      options: { generator: 'autocannon 8.0.0', quick: false, durationS: 10, warmupS: 2, runs: 3, connections: 100, loadWorkers: 1, workers: 2 },
      result: { durationS: 600, rate: 941, calibration: { rps: 1_882 }, sampleEveryS: 10, samples, workers, checks: memoryChecks(workers, { maxSteadyMb: 120, maxGrowth: 0.05 }) },
    } as unknown as MemoryFile;
  };
  const row = (text: string) => text.split('\n').find((l) => l.startsWith(`| ${PID} |`));
  assert.equal(row(renderSection(new Map([['memory', file(true)]]))), `| ${PID} | 175 → 175 | 0.0% | 0.0% | 60 → 60 | 0.0% | 0.0% | 103 |`);
  assert.equal(row(renderSection(new Map([['memory', file(false)]]))), `| ${PID} | 175 → 175 | — | 0.0% | 60 → 60 | — | 0.0% | 103 |`);
});
