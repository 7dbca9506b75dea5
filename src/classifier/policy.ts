// A key's classification settings, stored in its challenge policy under "classification"
// (src/pow/policy.ts validates them when the policy is set; docs/classifier.md):
//   fields       the widget sends the form's text fields to /v1/verify, which classifies them
//                (x-altcha-config sentinel.fields); default false
//   timeZone     the widget sends the browser's time zone (sentinel.timeZone); default: as fields
//   blockBad     a BAD classification fails verification (verified:false, reason BAD_CLASSIFICATION)
//                instead of being signed for the site to judge; default false
//   neutralScore, badScore   the score bands: GOOD < neutralScore ≤ NEUTRAL < badScore ≤ BAD;
//                default: the source's (SOURCE_BANDS in sources.ts: forms 1 and 3, mail 1.25 and 2)
//   expectedLanguages, disableRules   as in a /v1/classifier request, for every classification of the key
import { PalisadeError } from '../errors.js';
import { SOURCE_BANDS, type Bands, type ClassificationSource } from './sources.js';

export interface ClassificationPolicy {
  readonly fields: boolean;
  readonly timeZone: boolean;
  readonly blockBad: boolean;
  /** As the policy sets them; null when it does not (the source's default applies). */
  readonly neutralScore: number | null;
  readonly badScore: number | null;
  /** The bands each source classifies with: the policy's where it sets them, else the source's (bandsOf). */
  readonly bands: Readonly<Record<ClassificationSource, Bands>>;
  readonly expectedLanguages: readonly string[] | null;
  readonly disableRules: ReadonlySet<string>;
  /** The x-altcha-config `sentinel` object the challenge route sends the widget. */
  readonly sentinel: { readonly fields: boolean; readonly timeZone: boolean };
}

export const DEFAULT_CLASSIFICATION_POLICY: ClassificationPolicy = Object.freeze({
  fields: false, timeZone: false, blockBad: false, neutralScore: null, badScore: null, bands: SOURCE_BANDS,
  expectedLanguages: null, disableRules: new Set<string>(), sentinel: Object.freeze({ fields: false, timeZone: false }),
});

const FIELDS = new Set(['fields', 'timeZone', 'blockBad', 'neutralScore', 'badScore', 'expectedLanguages', 'disableRules']);

/** The policy's classification settings (the defaults when it has none); POLICY_INVALID naming what is wrong. */
export function parseClassificationPolicy(stored: Readonly<Record<string, unknown>> | null, ruleNames: ReadonlySet<string>): ClassificationPolicy {
  const c = stored?.classification;
  if (c === undefined) return DEFAULT_CLASSIFICATION_POLICY;
  if (c === null || typeof c !== 'object' || Array.isArray(c)) invalid('classification must be an object');
  const s = c as Record<string, unknown>;
  for (const name of Object.keys(s)) if (!FIELDS.has(name)) invalid(`classification: unknown field "${name}"`);
  const fields = bool(s, 'fields') ?? false;
  const neutralScore = score(s, 'neutralScore') ?? null;
  const badScore = score(s, 'badScore') ?? null;
  if (neutralScore !== null && badScore !== null && badScore < neutralScore) invalid('classification: badScore must not be below neutralScore');
  let expectedLanguages: string[] | null = null;
  if (s.expectedLanguages !== undefined) {
    const v = s.expectedLanguages;
    if (!Array.isArray(v) || v.length > 50 || !v.every((l) => typeof l === 'string' && /^[a-z]{2}$/.test(l))) {
      invalid('classification: expectedLanguages must be an array of ISO 639-1 codes (lower case)');
    }
    expectedLanguages = v as string[];
  }
  const disableRules = new Set<string>();
  if (s.disableRules !== undefined) {
    const v = s.disableRules;
    if (!Array.isArray(v) || v.length > 200 || !v.every((r) => typeof r === 'string')) invalid('classification: disableRules must be an array of rule names');
    const unknown = (v as string[]).filter((r) => !ruleNames.has(r));
    if (unknown.length > 0) invalid(`classification: disableRules names unknown rules: ${unknown.slice(0, 10).map((r) => JSON.stringify(r.slice(0, 40))).join(', ')}`);
    for (const r of v as string[]) disableRules.add(r);
  }
  const timeZone = bool(s, 'timeZone') ?? fields;
  return Object.freeze({
    fields, timeZone, blockBad: bool(s, 'blockBad') ?? false, neutralScore, badScore,
    bands: Object.freeze({ form: bandsOf(neutralScore, badScore, 'form'), mail: bandsOf(neutralScore, badScore, 'mail') }), expectedLanguages, disableRules,
    sentinel: Object.freeze({ fields, timeZone }),
  });
}

/**
 * The bands of `source` under a policy's settings (null = unset): a band the policy sets is kept as
 * set; an unset one is the source's default, moved onto the set one when it would cross it
 * (badScore 1.5 alone: NEUTRAL from 1 for forms, from 1.25 for mail; badScore 0.8 alone: no
 * NEUTRAL band, BAD from 0.8).
 */
export function bandsOf(neutralScore: number | null, badScore: number | null, source: ClassificationSource): Bands {
  const defaults = SOURCE_BANDS[source];
  if (neutralScore === null && badScore === null) return defaults;
  return Object.freeze({
    neutralScore: neutralScore ?? Math.min(defaults.neutralScore, badScore!),
    badScore: badScore ?? Math.max(defaults.badScore, neutralScore!),
  });
}

/** The classification of `score` under the bands. */
export function band(score: number, p: Bands): 'GOOD' | 'NEUTRAL' | 'BAD' {
  return score < p.neutralScore ? 'GOOD' : score < p.badScore ? 'NEUTRAL' : 'BAD';
}

function bool(s: Record<string, unknown>, name: string): boolean | undefined {
  const v = s[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') invalid(`classification: ${name} must be true or false`);
  return v;
}

function score(s: Record<string, unknown>, name: string): number | undefined {
  const v = s[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > 100) invalid(`classification: ${name} must be a number in (0, 100]`);
  return v;
}

function invalid(detail: string): never {
  throw new PalisadeError('POLICY_INVALID', `challenge policy: ${detail}`);
}
