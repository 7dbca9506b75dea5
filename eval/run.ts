// `npm run eval`: classifies the SpamAssassin public corpus (the test half by default) and the
// written form set, prints the markdown tables, writes eval/results/latest.json and, with --readme,
// the section of README.md between the eval markers.
//   node dist/eval/run.js [--readme] [--split test|tune|all] [--only spamassassin|forms]
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { classifier, classifierName } from './classifier.js';
import { evaluate, type EvalMessage, type SetResult } from './lib/evaluate.js';
import { loadForms } from './lib/forms.js';
import { renderMarkdown, replaceSection, SET_NAMES, type EvalReport, type SetName } from './lib/report.js';
import { loadSpamAssassin } from './lib/spam-assassin.js';

const root = new URL('../../', import.meta.url);

async function main(argv: string[]): Promise<void> {
  const split = option(argv, '--split', ['test', 'tune', 'all'] as const) ?? 'test';
  const only = option(argv, '--only', SET_NAMES);
  const sets: Partial<Record<SetName, EvalMessage[]>> = {};
  if (only !== 'forms') {
    sets.spamassassin = loadSpamAssassin()
      .filter((m) => split === 'all' || m.split === split)
      .map((m) => ({ id: m.id, language: 'en', family: m.group, label: m.label, text: m.text, email: m.email, expectedLanguages: ['en'] }));
  }
  if (only !== 'spamassassin') {
    sets.forms = loadForms().map((m) => ({
      id: m.id, language: m.language, family: m.family, label: m.label, text: m.text, email: m.email, expectedLanguages: [m.language],
    }));
  }
  const results: Partial<Record<SetName, SetResult>> = {};
  for (const name of SET_NAMES) {
    const messages = sets[name];
    if (messages) results[name] = await evaluate(messages, classifier);
  }
  const report: EvalReport = { date: new Date().toISOString(), classifier: classifierName, node: process.versions.node, split, sets: results };
  const markdown = renderMarkdown(report);
  process.stdout.write(`${markdown}\n`);
  mkdirSync(new URL('eval/results/', root), { recursive: true });
  writeFileSync(new URL('eval/results/latest.json', root), `${JSON.stringify(report, null, 2)}\n`);
  if (argv.includes('--readme')) {
    const readme = new URL('README.md', root);
    writeFileSync(readme, replaceSection(readFileSync(readme, 'utf8'), markdown));
    process.stdout.write(`\nwrote the eval section of ${fileURLToPath(readme)}\n`);
  }
}

function option<T extends string>(argv: string[], name: string, allowed: readonly T[]): T | null {
  const i = argv.indexOf(name);
  if (i < 0) return null;
  const value = argv[i + 1];
  if (!allowed.includes(value as T)) throw new Error(`${name} takes one of ${allowed.join(', ')}`);
  return value as T;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
