// Runs a classifier over a set of labelled messages and tallies the outcome at two operating points:
// "bad" flags a message as spam when the classification is BAD, "neutral" when it is NEUTRAL or BAD.
// Tallies are kept for the whole set, per language, per family and per language and family; the time
// of each classify call is measured around it.
import { performance } from 'node:perf_hooks';
import { emptyConfusion, figures, quantile, record, type Confusion, type Figures, type Label } from './metrics.js';

export interface ClassifierInput {
  readonly texts: string[];
  readonly email?: string | null;
  readonly expectedLanguages?: string[] | null;
}

export interface ClassifierVerdict {
  readonly classification: 'GOOD' | 'NEUTRAL' | 'BAD';
  readonly score: number;
}

export type Classifier = (input: ClassifierInput) => ClassifierVerdict | Promise<ClassifierVerdict>;

export interface EvalMessage {
  readonly id: string;
  readonly language: string;
  readonly family: string;
  readonly label: Label;
  readonly text: string;
  readonly email: string | null;
  /** What the page would declare: the form's language, 'en' for the SpamAssassin corpus. */
  readonly expectedLanguages: string[];
}

export interface Cell {
  readonly count: number;
  /** BAD counts as spam. */
  readonly bad: Figures;
  /** NEUTRAL or BAD counts as spam. */
  readonly neutral: Figures;
}

export interface Mistake {
  readonly id: string;
  readonly label: Label;
  readonly family: string;
  readonly classification: ClassifierVerdict['classification'];
  readonly score: number;
}

export interface SetResult {
  readonly overall: Cell;
  readonly byLanguage: Record<string, Cell>;
  readonly byFamily: Record<string, Cell>;
  /** Keyed `<language>/<family>`. */
  readonly byLanguageFamily: Record<string, Cell>;
  /** Milliseconds per classify call. */
  readonly timeMs: { readonly median: number | null; readonly p99: number | null; readonly max: number | null };
  /** Ham flagged at either operating point, and spam not flagged even as NEUTRAL, by id. */
  readonly mistakes: Mistake[];
}

export interface EvaluateOptions {
  /** Messages classified once, untimed and uncounted, before the measured pass (default 100). */
  readonly warmup?: number;
}

const DEFAULTS = { warmup: 100 } as const;

export async function evaluate(messages: readonly EvalMessage[], classifier: Classifier, options: EvaluateOptions = {}): Promise<SetResult> {
  const warmup = Math.min(options.warmup ?? DEFAULTS.warmup, messages.length);
  for (let i = 0; i < warmup; i++) await classifier(inputOf(messages[i]!));

  const tallies = new Map<string, { count: number; bad: Confusion; neutral: Confusion }>();
  const tally = (key: string, label: Label, classification: ClassifierVerdict['classification']) => {
    let t = tallies.get(key);
    if (!t) tallies.set(key, (t = { count: 0, bad: emptyConfusion(), neutral: emptyConfusion() }));
    t.count++;
    record(t.bad, label, classification === 'BAD');
    record(t.neutral, label, classification !== 'GOOD');
  };
  const times: number[] = [];
  const mistakes: Mistake[] = [];
  for (const m of messages) {
    const input = inputOf(m);
    const started = performance.now();
    const verdict = await classifier(input);
    times.push(performance.now() - started);
    const { classification, score } = verdict;
    for (const key of ['*', `l:${m.language}`, `f:${m.family}`, `lf:${m.language}/${m.family}`]) tally(key, m.label, classification);
    if (m.label === 'ham' ? classification !== 'GOOD' : classification === 'GOOD') {
      mistakes.push({ id: m.id, label: m.label, family: m.family, classification, score });
    }
  }

  const cell = (key: string): Cell => {
    const t = tallies.get(key) ?? { count: 0, bad: emptyConfusion(), neutral: emptyConfusion() };
    return { count: t.count, bad: figures(t.bad), neutral: figures(t.neutral) };
  };
  const group = (prefix: string) =>
    Object.fromEntries([...tallies.keys()].filter((k) => k.startsWith(prefix)).sort().map((k) => [k.slice(prefix.length), cell(k)]));
  return {
    overall: cell('*'),
    byLanguage: group('l:'),
    byFamily: group('f:'),
    byLanguageFamily: group('lf:'),
    timeMs: { median: round3(quantile(times, 0.5)), p99: round3(quantile(times, 0.99)), max: round3(quantile(times, 1)) },
    mistakes,
  };
}

function inputOf(m: EvalMessage): ClassifierInput {
  return { texts: [m.text], email: m.email, expectedLanguages: m.expectedLanguages };
}

function round3(v: number | null): number | null {
  return v === null ? null : Math.round(v * 1000) / 1000;
}
