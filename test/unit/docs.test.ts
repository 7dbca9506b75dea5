import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { END_MARKER, latestResults, renderSection, renderSummary, START_MARKER } from '../../bench/lib/report.js';
import { README_END, README_START } from '../../eval/lib/report.js';
import { classifierDocWithRules, configurationMarkdown, emlDocWithRules, errorsMarkdown, sourcesTable } from '../../scripts/gen-docs.js';
import { ALL_RULES } from '../../src/classifier/classify.js';
import { MESSAGE_RULES } from '../../src/classifier/eml/message-rules.js';
import { ERRORS } from '../../src/errors.js';
import { VARIABLES } from '../../src/config/index.js';

const read = (p: string) => readFileSync(new URL(`../../../${p}`, import.meta.url), 'utf8');

test('docs/errors.md lists exactly the catalogue (run `npm run docs` after changing src/errors.ts)', () => {
  const doc = read('docs/errors.md');
  assert.equal(doc, errorsMarkdown());
  for (const [code, e] of Object.entries(ERRORS)) assert.match(doc, new RegExp(`\\| \`${code}\` \\| ${e.status} \\|`));
});

test('docs/configuration.md lists every variable with its default (run `npm run docs`)', () => {
  const doc = read('docs/configuration.md');
  assert.equal(doc, configurationMarkdown());
  for (const name of Object.keys(VARIABLES)) assert.match(doc, new RegExp(`\\| \`${name}\` \\| [^|]+ \\| (implemented|planned: [^|]+|ignored: [^|]+) \\|`), name);
});

test('docs/classifier.md lists every classifier rule with its score and each source\'s bands and weights (run `npm run docs`)', () => {
  const doc = read('docs/classifier.md');
  assert.equal(doc, classifierDocWithRules(doc));
  for (const rule of ALL_RULES) assert.match(doc, new RegExp(`\\| \`${rule.name}\` \\| ${rule.score} \\|`));
  assert.ok(doc.includes(sourcesTable()));
});

test('docs/eml.md lists every message rule with its score and each source\'s bands and weights (run `npm run docs`)', () => {
  const doc = read('docs/eml.md');
  assert.equal(doc, emlDocWithRules(doc));
  for (const rule of MESSAGE_RULES) assert.match(doc, new RegExp(`\\| \`${rule.name}\` \\| ${rule.score} \\|`));
  assert.ok(doc.includes(sourcesTable()));
});

test('the sources table: forms 1 and 3 with every rule at 1, mail 1.25 and 2 with LINKS at half', () => {
  assert.equal(sourcesTable(), [
    '| source | endpoints | `neutralScore` | `badScore` | rule weights |',
    '|---|---|--:|--:|---|',
    '| `form` | `POST /v1/classifier`, `POST /v1/verify` | 1 | 3 | every rule 1 |',
    '| `mail` | `POST /v1/eml` | 1.25 | 2 | `LINKS` 0.5, `REPETITION` 0, `PROFANITY` 0; every other rule 1 |',
    '',
  ].join('\n'));
});

const root = new URL('../../../', import.meta.url);
const PAGES = ['README.md', 'src/README.md', 'bench/README.md', 'bench/micro/README.md', 'eval/README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

test('every relative link of the documentation names a file that exists, and an anchor that one of its headings has', () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    const text = read(page).replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = m[1]!;
      if (/^[a-z]+:/.test(link)) continue;
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? new URL(page, root) : new URL(path, new URL(page, root));
      if (!existsSync(target)) { broken.push(`${page}: ${link}`); continue; }
      if (anchor === undefined || !target.pathname.endsWith('.md')) continue;
      const headings = readFileSync(target, 'utf8').replace(/```[\s\S]*?```/g, '').split('\n')
        .filter((l) => /^#{1,6} /.test(l)).map((l) => anchorOf(l.replace(/^#+ /, '')));
      if (!headings.includes(anchor)) broken.push(`${page}: ${link} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test('docs/README.md links every page of docs/', () => {
  const index = read('docs/README.md');
  const missing = readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md') && f !== 'README.md' && !index.includes(`](${f})`));
  assert.deepEqual(missing, []);
});

test('the README stays short (at most 250 lines) and keeps one pair of eval markers', () => {
  const readme = read('README.md');
  assert.ok(readme.split('\n').length <= 250);
  assert.equal(readme.split(README_START).length, 2);
  assert.equal(readme.split(README_END).length, 2);
  assert.ok(readme.indexOf(README_START) < readme.indexOf(README_END));
});

test('the bench tables are what `npm run bench -- --report` writes from bench/results, once per page', () => {
  const latest = latestResults(new URL('bench/results/', root).pathname);
  for (const [page, section] of [['README.md', renderSummary(latest)], ['bench/README.md', renderSection(latest)]] as const) {
    const text = read(page);
    assert.equal(text.split(START_MARKER).length, 2, `${page}: one ${START_MARKER}`);
    assert.equal(text.split(END_MARKER).length, 2, `${page}: one ${END_MARKER}`);
    assert.equal(text.slice(text.indexOf(START_MARKER) + START_MARKER.length, text.indexOf(END_MARKER)), `\n${section}\n`, page);
  }
});
