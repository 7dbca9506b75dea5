// What a classification's source changes: the score bands a key gets when its policy sets none,
// and how much each rule counts. The rules were written for form submissions; an e-mail message is
// longer, carries links and quotes as a matter of course, and is judged by other means besides
// (its message block), so mail has bands and weights of its own (docs/classifier.md, docs/eml.md).
//   form   POST /v1/classifier and the classification inside POST /v1/verify
//   mail   POST /v1/eml
import { round2 } from './block.js';
import type { Block } from './types.js';

export const SOURCES = ['form', 'mail'] as const;
export type ClassificationSource = (typeof SOURCES)[number];

/** The endpoints that classify as each source (docs/classifier.md lists them beside the bands and weights). */
export const SOURCE_ENDPOINTS: Readonly<Record<ClassificationSource, readonly string[]>> = Object.freeze({
  form: Object.freeze(['POST /v1/classifier', 'POST /v1/verify']),
  mail: Object.freeze(['POST /v1/eml']),
});

/** GOOD < neutralScore ≤ NEUTRAL < badScore ≤ BAD. */
export interface Bands {
  readonly neutralScore: number;
  readonly badScore: number;
}

/**
 * The bands of a key whose policy sets none.
 *
 * form: one strong signal makes a submission NEUTRAL, two make it BAD; chosen so that legitimate
 * form submissions stay BAD less than 1 % of the time (eval/README.md).
 *
 * mail: chosen on the tune half of the SpamAssassin corpus (`npm run bench:eml:bands`, the
 * held-out half left unread), 2,054 ham and 936 spam, as the e-mail comparison runs Palisade:
 *   badScore       1.5     1.75    2       2.25    2.5     3
 *   spam F1 %      73.2    69.8    65.6    60.8    56.0    46.2
 *   ham BAD %      6.2     5.1     4.2     3.5     2.9     2.6
 * badScore is the highest spam F1 at BAD that flags at most 5 % of ham (a BAD message goes to a
 * junk folder, where it can still be found; below 2 each step costs a point of ham for less F1).
 *   neutralScore           0.75    1       1.25    1.5
 *   spam F1 % (≥ NEUTRAL)  77.9    75.9    75.2    73.2
 *   ham ≥ NEUTRAL %        13.2    11.3    8.6     6.2
 * neutralScore is the highest spam F1 at NEUTRAL or worse that holds at most 10 % of ham for review.
 */
export const SOURCE_BANDS: Readonly<Record<ClassificationSource, Bands>> = Object.freeze({
  form: Object.freeze({ neutralScore: 1, badScore: 3 }),
  mail: Object.freeze({ neutralScore: 1.25, badScore: 2 }),
});

/**
 * How much a rule counts, by name; a rule not named counts fully (weight 1). Every form rule
 * counts fully.
 *
 * mail: measured on the tune half of the SpamAssassin corpus (eval/README.md), ham vs spam, some
 * text rules fire on legitimate messages as often as on spam: LINKS on 88 % vs 83 % (every
 * newsletter and list footer carries links), REPETITION on 8.5 % vs 6.8 % (quoted replies repeat),
 * PROFANITY on 8.0 % vs 1.3 %. With these weights the tune half's spam precision rose from 0.65 to
 * 0.81 at a recall of 0.62 instead of 0.69 (F1 0.67 → 0.70 at BAD from 2, the bands of the time).
 * The rules still run and are listed, with their weighted score.
 */
export const RULE_WEIGHTS: Readonly<Record<ClassificationSource, Readonly<Record<string, number>>>> = Object.freeze({
  form: Object.freeze({}),
  mail: Object.freeze({ LINKS: 0.5, REPETITION: 0, PROFANITY: 0 }),
});

/** `block` with each weighted rule's score multiplied by its weight and the block's score summed again; the block itself when no weighted rule fired. */
export function weighBlock<B extends Block>(block: B, weights: Readonly<Record<string, number>>): B {
  let rules: Record<string, { score: number }> | null = null;
  let score = block.score;
  for (const name in weights) {
    const rule = block.rules[name];
    if (rule === undefined || rule.score === 0) continue;
    const weighed = round2(rule.score * weights[name]!);
    rules ??= { ...block.rules };
    rules[name] = { score: weighed };
    score -= rule.score - weighed;
  }
  return rules === null ? block : { ...block, rules, score: round2(score) };
}
