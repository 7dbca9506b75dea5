// Confusion counts and the figures derived from them, with spam as the positive class: precision =
// TP / (TP + FP), recall = TP / (TP + FN), F1 their harmonic mean, false-positive rate = FP / (FP +
// TN), the share of legitimate messages flagged. A ratio whose denominator is 0 is null ("no data"),
// never 0 or NaN: a set without ham has no false-positive rate, not a perfect one.

export type Label = 'ham' | 'spam';

export interface Confusion {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}

export interface Figures {
  readonly ham: number;
  readonly spam: number;
  readonly tp: number;
  readonly fp: number;
  readonly tn: number;
  readonly fn: number;
  readonly precision: number | null;
  readonly recall: number | null;
  readonly f1: number | null;
  readonly fpr: number | null;
}

export function emptyConfusion(): Confusion {
  return { tp: 0, fp: 0, tn: 0, fn: 0 };
}

/** Counts one message: its true label and whether the classifier flagged it as spam. */
export function record(confusion: Confusion, label: Label, flagged: boolean): void {
  if (label === 'spam') {
    if (flagged) confusion.tp++;
    else confusion.fn++;
  } else if (flagged) {
    confusion.fp++;
  } else {
    confusion.tn++;
  }
}

export function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator;
}

export function figures(c: Confusion): Figures {
  const precision = ratio(c.tp, c.tp + c.fp);
  const recall = ratio(c.tp, c.tp + c.fn);
  const f1 = precision === null || recall === null ? null : precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return {
    ham: c.fp + c.tn, spam: c.tp + c.fn, tp: c.tp, fp: c.fp, tn: c.tn, fn: c.fn,
    precision, recall, f1, fpr: ratio(c.fp, c.fp + c.tn),
  };
}

/** The q-quantile (0..1) of the values by the nearest-rank method; null for no values. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}
