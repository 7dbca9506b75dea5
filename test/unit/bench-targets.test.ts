// The bench's target decisions (bench/lib/scenario-runner.ts): met on the unrounded ratio, and a
// miss that two places would round onto the target shown with four places; S4's stocked-pool target
// also needs every take of its bursts answered from stock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { atLeast, evaluate, shown } from '../../bench/lib/scenario-runner.js';
import type { StockedResult } from '../../bench/lib/stocked-pool.js';

test('bench targets: met on the unrounded ratio; a rounded-up miss is shown with four places', () => {
  assert.equal(atLeast(9540, 31814, 0.3), false, '0.29987 is not ≥ 0.3');
  assert.equal(atLeast(9546, 31814, 0.3), true);
  assert.equal(atLeast(null, 31814, 0.3), false);
  assert.equal(atLeast(9540, 0, 0.3), false);
  assert.equal(shown(0.3, 9540, 31814, 0.3, false), 0.2998);
  assert.equal(shown(0.3, 9546, 31814, 0.3, true), 0.3, 'a met target keeps its rounded figure');
  assert.equal(shown(0.29, 9200, 31814, 0.3, false), 0.29, 'a plain miss keeps its rounded figure');
});

test('bench targets: S4 from a stocked pool is met only when no take found the pool empty', () => {
  const check = { kind: 'stocked', config: 'production', min: 0.3 } as const;
  const of = { L: 50_000, P: 10_000, derivation: 3_000 };
  const stocked = (rps: number, missed: number): StockedResult => ({
    size: 100_000, workers: 2, amount: 34_000, rounds: 3, L: { runs: [], rps: 60_000 },
    configs: { production: { runs: [], rps, lRps: 40_000, vsL: Math.round((rps / 40_000) * 100) / 100, missed } },
  });
  // Decided against the L bursts between the configuration's own (40,000/s), not all of the
  // invocation's L bursts (60,000/s) nor L's full-speed runs (50,000/s).
  assert.deepEqual(evaluate(check, undefined, of, null, null, stocked(20_000, 0)),
    { label: 'production ÷ L while the pool keeps up (stocked pool, bursts)', measured: 0.5, target: '≥ 0.3', met: true });
  const missed = evaluate(check, undefined, of, null, null, stocked(20_000, 12));
  assert.equal(missed.met, false);
  assert.match(missed.label, /12 takes found it empty/);
  assert.equal(evaluate(check, undefined, of, null, null, stocked(11_990, 0)).measured, 0.2997);
  assert.equal(evaluate(check, undefined, of, null, null, stocked(11_990, 0)).met, false);
  assert.deepEqual(evaluate(check, undefined, of, null, null, null),
    { label: 'production ÷ L while the pool keeps up (stocked pool, bursts)', measured: null, target: '≥ 0.3', met: false });
});

test('bench targets: S6 ÷ B, an absolute rate, and S2c one configuration ÷ another', () => {
  const target = (config: string, rps: number, vsB: number | null = null) =>
    ({ id: `palisade:${config}`, kind: 'palisade', config, rps, vsB }) as unknown as Parameters<typeof evaluate>[1];
  const prod = target('production', 9_000);
  const fields = target('production-fields', 7_649);
  const of = { L: 40_000, P: null, B: 1_000, derivation: null, byConfig: (c: string) => (c === 'production' ? prod : c === 'production-fields' ? fields : undefined) };

  assert.deepEqual(evaluate({ kind: 'vsB', config: 'production', min: 2 }, target('production', 2_500, 2.5), of, null, null, null),
    { label: 'production ÷ B', measured: 2.5, target: '≥ 2', met: true });
  assert.equal(evaluate({ kind: 'vsB', config: 'production', min: 2 }, target('production', 2_500, 2.5), { ...of, B: null }, null, null, null).met, false);

  const rate = { kind: 'rps', config: 'production', min: 4_660, why: '5 × 932' } as const;
  assert.deepEqual(evaluate(rate, target('production', 4_659), of, null, null, null),
    { label: 'production req/s (5 × 932)', measured: 4_659, target: '≥ 4660', met: false });
  assert.equal(evaluate(rate, target('production', 4_660), of, null, null, null).met, true);
  assert.equal(evaluate(rate, undefined, of, null, null, null).met, false);

  // 7,649 ÷ 9,000 = 0.84989: shown as 0.8498, not met; 7,650 ÷ 9,000 = 0.85 is.
  const cost = { kind: 'vsConfig', config: 'production-fields', of: 'production', min: 0.85 } as const;
  assert.deepEqual(evaluate(cost, fields, of, null, null, null),
    { label: 'production-fields ÷ production', measured: 0.8498, target: '≥ 0.85', met: false });
  assert.equal(evaluate(cost, target('production-fields', 7_650), of, null, null, null).met, true);
  assert.equal(evaluate(cost, fields, { ...of, byConfig: () => undefined }, null, null, null).measured, null);
});
