// The evaluation's arithmetic: precision, recall, F1 and false-positive rate from exact confusion
// counts, null (not 0, not NaN) where a denominator is zero, nearest-rank quantiles, the tallies of a
// classification pass at both operating points, and the README section written between its markers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluate, type ClassifierInput, type EvalMessage } from '../../eval/lib/evaluate.js';
import { emptyConfusion, figures, quantile, record } from '../../eval/lib/metrics.js';
import { pct, README_END, README_START, renderMarkdown, replaceSection } from '../../eval/lib/report.js';

test('eval metrics: a 3/1/5/2 confusion matrix gives precision 3/4, recall 3/5, F1 2/3, FPR 1/6', () => {
  const c = emptyConfusion();
  for (let i = 0; i < 3; i++) record(c, 'spam', true);
  record(c, 'ham', true);
  for (let i = 0; i < 5; i++) record(c, 'ham', false);
  for (let i = 0; i < 2; i++) record(c, 'spam', false);
  assert.deepEqual(c, { tp: 3, fp: 1, tn: 5, fn: 2 });
  const f = figures(c);
  assert.equal(f.ham, 6);
  assert.equal(f.spam, 5);
  assert.equal(f.precision, 0.75);
  assert.equal(f.recall, 0.6);
  assert.ok(Math.abs(f.f1! - 2 / 3) < 1e-12);
  assert.equal(f.fpr, 1 / 6);
});

test('eval metrics: a zero denominator gives null, not 0 or NaN', () => {
  // Only ham, none flagged: nothing to be precise or to recall about; the FPR is a true 0.
  assert.deepEqual(figures({ tp: 0, fp: 0, tn: 4, fn: 0 }), {
    ham: 4, spam: 0, tp: 0, fp: 0, tn: 4, fn: 0, precision: null, recall: null, f1: null, fpr: 0,
  });
  // Only spam, none flagged: recall 0, no precision, no FPR.
  assert.deepEqual(figures({ tp: 0, fp: 0, tn: 0, fn: 3 }), {
    ham: 0, spam: 3, tp: 0, fp: 0, tn: 0, fn: 3, precision: null, recall: 0, f1: null, fpr: null,
  });
  // Flags that are all wrong: precision and recall 0, so F1 is 0 (not 0/0).
  const wrong = figures({ tp: 0, fp: 2, tn: 0, fn: 3 });
  assert.equal(wrong.precision, 0);
  assert.equal(wrong.recall, 0);
  assert.equal(wrong.f1, 0);
  assert.equal(wrong.fpr, 1);
  assert.deepEqual(figures(emptyConfusion()), {
    ham: 0, spam: 0, tp: 0, fp: 0, tn: 0, fn: 0, precision: null, recall: null, f1: null, fpr: null,
  });
});

test('eval metrics: quantiles by nearest rank', () => {
  assert.equal(quantile([5, 1, 3, 2, 4], 0.5), 3);
  assert.equal(quantile([5, 1, 3, 2, 4], 0.99), 5);
  assert.equal(quantile([5, 1, 3, 2, 4], 0), 1);
  assert.equal(quantile([4, 1, 3, 2], 0.5), 2);
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.equal(quantile(hundred, 0.99), 99);
  assert.equal(quantile(hundred, 1), 100);
  assert.equal(quantile([], 0.5), null);
});

const message = (id: string, language: string, family: string, label: 'ham' | 'spam'): EvalMessage => ({
  id, language, family, label, text: id, email: `${id}@example.org`, expectedLanguages: [language],
});

test('eval: a pass tallies per language and family at both operating points and lists the mistakes', async () => {
  const verdicts: Record<string, 'GOOD' | 'NEUTRAL' | 'BAD'> = {
    h1: 'GOOD', h2: 'NEUTRAL', h3: 'BAD', h4: 'GOOD', s1: 'BAD', s2: 'NEUTRAL', s3: 'GOOD', s4: 'BAD',
  };
  const seen: ClassifierInput[] = [];
  const classifier = async (input: ClassifierInput) => {
    seen.push(input);
    return { classification: verdicts[input.texts[0]!]!, score: input.texts[0]!.length };
  };
  const messages = [
    message('h1', 'en', 'legit-short', 'ham'), message('h2', 'en', 'legit-short', 'ham'),
    message('h3', 'de', 'legit-sales', 'ham'), message('h4', 'de', 'legit-sales', 'ham'),
    message('s1', 'en', 'seo', 'spam'), message('s2', 'en', 'seo', 'spam'),
    message('s3', 'de', 'casino', 'spam'), message('s4', 'de', 'casino', 'spam'),
  ];
  const result = await evaluate(messages, classifier, { warmup: 2 });
  assert.equal(seen.length, 10, 'two warm-up calls, then one per message');
  assert.deepEqual(seen[2], { texts: ['h1'], email: 'h1@example.org', expectedLanguages: ['en'] });

  const all = result.overall;
  assert.equal(all.count, 8);
  assert.deepEqual([all.bad.tp, all.bad.fp, all.bad.tn, all.bad.fn], [2, 1, 3, 2]);
  assert.deepEqual([all.neutral.tp, all.neutral.fp, all.neutral.tn, all.neutral.fn], [3, 2, 2, 1]);
  assert.equal(all.bad.fpr, 0.25);
  assert.equal(all.neutral.fpr, 0.5);
  assert.equal(all.neutral.recall, 0.75);

  assert.deepEqual(Object.keys(result.byLanguage), ['de', 'en']);
  assert.deepEqual(Object.keys(result.byFamily), ['casino', 'legit-sales', 'legit-short', 'seo']);
  assert.equal(result.byLanguage.en!.bad.fpr, 0);
  assert.equal(result.byLanguage.en!.neutral.fpr, 0.5);
  assert.equal(result.byLanguage.de!.bad.precision, 0.5);
  assert.equal(result.byFamily.seo!.bad.recall, 0.5);
  assert.equal(result.byFamily.seo!.neutral.recall, 1);
  assert.equal(result.byFamily['legit-sales']!.bad.fpr, 0.5);
  assert.equal(result.byLanguageFamily['de/casino']!.count, 2);
  assert.deepEqual(result.mistakes, [
    { id: 'h2', label: 'ham', family: 'legit-short', classification: 'NEUTRAL', score: 2 },
    { id: 'h3', label: 'ham', family: 'legit-sales', classification: 'BAD', score: 2 },
    { id: 's3', label: 'spam', family: 'casino', classification: 'GOOD', score: 2 },
  ]);
  assert.equal(typeof result.timeMs.median, 'number');
  assert.ok(result.timeMs.p99! >= result.timeMs.median!);
  assert.ok(result.timeMs.max! >= result.timeMs.p99!);
});

test('eval: the markdown shows "–" for undefined ratios and the share flagged per family', async () => {
  const sync = (input: ClassifierInput) => ({ classification: input.texts[0] === 's1' ? 'BAD' as const : 'GOOD' as const, score: 0 });
  const forms = await evaluate([message('h1', 'fr', 'legit-short', 'ham'), message('s1', 'fr', 'seo', 'spam')], sync, { warmup: 0 });
  const text = renderMarkdown({ date: '2026-11-25T10:00:00.000Z', classifier: 'test', node: '20.20.2', split: 'test', sets: { forms } });
  const lines = text.split('\n');
  assert.ok(lines.includes('| forms | fr | 1 | 1 | 100.0% | 100.0% | 100.0% | 0.00% | 100.0% | 100.0% | 100.0% | 0.00% |'));
  assert.ok(lines.includes('| forms | legit-short | ham | 1 | 0.00% | 0.00% |'));
  assert.ok(lines.includes('| forms | seo | spam | 1 | 100.0% | 100.0% |'));
  assert.ok(!lines.some((l) => l.includes('**all**')), 'one language: no total row');
  assert.equal(pct(null, 1), '–');
  assert.equal(pct(1 / 3, 2), '33.33%');
});

test('eval: the README section is replaced between its markers, and a README without them is refused', () => {
  const readme = `# T\n\nintro\n\n${README_START}\nold table\n${README_END}\n\n## Next\n`;
  const once = replaceSection(readme, '| new |');
  assert.equal(once, `# T\n\nintro\n\n${README_START}\n| new |\n${README_END}\n\n## Next\n`);
  assert.equal(replaceSection(once, '| new |'), once);
  assert.throws(() => replaceSection('# T\n', 'x'), /lacks the <!-- eval:start -->/);
  assert.throws(() => replaceSection(`${README_END}\n${README_START}\n`, 'x'), /lacks/);
});
