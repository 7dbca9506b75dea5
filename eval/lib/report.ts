// The evaluation's markdown: one table of precision, recall, F1 and false-positive rate per set and
// language at both operating points, one table of the share flagged per family (recall for a spam
// family, the false-positive rate for a ham family), and the classify time per message.
import type { Cell, SetResult } from './evaluate.js';
import type { Figures } from './metrics.js';
import { replaceBetween } from '../../bench/lib/markers.js';

export const SET_NAMES = ['spamassassin', 'forms'] as const;
export type SetName = (typeof SET_NAMES)[number];

export interface EvalReport {
  readonly date: string;
  readonly classifier: string;
  readonly node: string;
  /** Which half of the SpamAssassin corpus was classified; the forms set is always whole. */
  readonly split: 'test' | 'tune' | 'all';
  readonly sets: Partial<Record<SetName, SetResult>>;
}

export const README_START = '<!-- eval:start -->';
export const README_END = '<!-- eval:end -->';

const TITLES: Readonly<Record<SetName, string>> = { spamassassin: 'SpamAssassin', forms: 'forms' };

export function renderMarkdown(report: EvalReport): string {
  const lines: string[] = [];
  const sa = report.sets.spamassassin;
  const forms = report.sets.forms;
  const scope = [
    sa ? `SpamAssassin public corpus, ${report.split === 'all' ? 'every message' : `the ${report.split} half`} (${sa.overall.count} messages, body and sender)` : null,
    forms ? `the written form set (${forms.overall.count} messages in ${Object.keys(forms.byLanguage).length} languages)` : null,
  ].filter((s) => s !== null);
  lines.push(
    `Classifier: ${report.classifier}. Sets: ${scope.join('; ')}. Run ${report.date.slice(0, 10)} on Node ${report.node}.`,
    '"BAD" counts only BAD as spam; "≥ NEUTRAL" counts NEUTRAL or BAD. FPR is the share of legitimate messages flagged.',
    '',
    '| set | language | ham | spam | BAD precision | BAD recall | BAD F1 | BAD FPR | ≥ NEUTRAL precision | ≥ NEUTRAL recall | ≥ NEUTRAL F1 | ≥ NEUTRAL FPR |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const name of SET_NAMES) {
    const set = report.sets[name];
    if (!set) continue;
    const languages = Object.entries(set.byLanguage);
    for (const [language, cell] of languages) lines.push(languageRow(TITLES[name], language, cell));
    if (languages.length > 1) lines.push(languageRow(TITLES[name], '**all**', set.overall));
  }
  lines.push(
    '',
    'Share flagged per family: for a spam family that is its recall, for a ham family (legit-*, *-ham-*) its false-positive rate.',
    '',
    '| set | family | label | messages | flagged BAD | flagged ≥ NEUTRAL |',
    '|---|---|---|--:|--:|--:|',
  );
  for (const name of SET_NAMES) {
    const set = report.sets[name];
    if (!set) continue;
    const families = Object.entries(set.byFamily).sort(([a, x], [b, y]) => labelOf(x).localeCompare(labelOf(y)) || a.localeCompare(b));
    for (const [family, cell] of families) {
      const ham = labelOf(cell) === 'ham';
      const share = (f: Figures) => pct(ham ? f.fpr : f.recall, ham ? 2 : 1);
      lines.push(`| ${TITLES[name]} | ${family} | ${labelOf(cell)} | ${cell.count} | ${share(cell.bad)} | ${share(cell.neutral)} |`);
    }
  }
  const timings = SET_NAMES.flatMap((name) => {
    const t = report.sets[name]?.timeMs;
    return t ? [`${TITLES[name]} median ${ms(t.median)}, p99 ${ms(t.p99)}`] : [];
  });
  lines.push('', `Classify time per message: ${timings.join('; ')}.`);
  return lines.join('\n');
}

/** The README with the text between the eval markers replaced; throws when a marker is missing. */
export function replaceSection(readme: string, section: string): string {
  const next = replaceBetween(readme, README_START, README_END, section);
  if (next === null) throw new Error(`README.md lacks the ${README_START} … ${README_END} markers`);
  return next;
}

function languageRow(set: string, language: string, c: Cell): string {
  const four = (f: Figures) => [pct(f.precision, 1), pct(f.recall, 1), pct(f.f1, 1), pct(f.fpr, 2)];
  return `| ${set} | ${language} | ${c.bad.ham} | ${c.bad.spam} | ${[...four(c.bad), ...four(c.neutral)].join(' | ')} |`;
}

function labelOf(c: Cell): 'ham' | 'spam' | 'mixed' {
  return c.bad.spam === 0 ? 'ham' : c.bad.ham === 0 ? 'spam' : 'mixed';
}

/** A ratio as a percentage with the given decimals; "–" when it is undefined. */
export function pct(v: number | null, decimals: number): string {
  return v === null ? '–' : `${(v * 100).toFixed(decimals)}%`;
}

function ms(v: number | null): string {
  return v === null ? '–' : `${v.toFixed(v < 1 ? 3 : 1)} ms`;
}
