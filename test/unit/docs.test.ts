import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { classifierDocWithRules, emlDocWithRules, configurationMarkdown, errorsMarkdown, readmeWithConfiguration } from '../../scripts/gen-docs.js';
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
  for (const name of Object.keys(VARIABLES)) assert.match(doc, new RegExp(`\\| \`${name}\` \\|`));
});

test('README configuration reference is the generated one and names every variable', () => {
  const readme = read('README.md');
  assert.equal(readme, readmeWithConfiguration(readme));
  const missing = Object.keys(VARIABLES).filter((n) => !readme.includes(`| \`${n}\` |`));
  assert.deepEqual(missing, []);
});

test('docs/classifier.md lists every classifier rule with its score (run `npm run docs`)', () => {
  const doc = read('docs/classifier.md');
  assert.equal(doc, classifierDocWithRules(doc));
  for (const rule of ALL_RULES) assert.match(doc, new RegExp(`\\| \`${rule.name}\` \\| ${rule.score} \\|`));
});

test('docs/eml.md lists every message rule with its score (run `npm run docs`)', () => {
  const doc = read('docs/eml.md');
  assert.equal(doc, emlDocWithRules(doc));
  for (const rule of MESSAGE_RULES) assert.match(doc, new RegExp(`\\| \`${rule.name}\` \\| ${rule.score} \\|`));
});
