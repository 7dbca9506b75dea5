import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { classifierDocWithRules, configurationMarkdown, errorsMarkdown } from '../../scripts/gen-docs.js';
import { ALL_RULES } from '../../src/classifier/classify.js';
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

test('docs/classifier.md lists every classifier rule with its score (run `npm run docs`)', () => {
  const doc = read('docs/classifier.md');
  assert.equal(doc, classifierDocWithRules(doc));
  for (const rule of ALL_RULES) assert.match(doc, new RegExp(`\\| \`${rule.name}\` \\| ${rule.score} \\|`));
});
