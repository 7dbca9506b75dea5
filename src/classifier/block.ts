// One dimension's answer from the strengths of its rules: every rule that ran is listed with its
// score (0 when it did not fire), disabled rules are left out, and the block's score is the sum.
import type { Block, RuleDefinition } from './types.js';

/**
 * `strengths` maps rule names to how strongly each fired: 1 = the rule's full score, 0.5 = half,
 * absent = 0. Scores are rounded to two decimals, the time (from `startedAt`, performance.now())
 * to two.
 */
export function ruleBlock(
  rules: readonly RuleDefinition[], strengths: Readonly<Record<string, number>>, disabled: ReadonlySet<string>, startedAt: number,
): Block {
  const out: Record<string, { score: number }> = {};
  let total = 0;
  for (const rule of rules) {
    if (disabled.has(rule.name)) continue;
    const s = strengths[rule.name] ?? 0;
    const score = round2(rule.score * Math.min(1, Math.max(0, s)));
    out[rule.name] = { score };
    total += score;
  }
  return { rules: out, score: round2(total), time: round2(performance.now() - startedAt) };
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
