// The written form set (eval/forms/<language>.jsonl): every line is a valid message with a named
// source, every language has at least 30 ham and 30 spam and every family, and no text appears twice.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  FORM_LANGUAGES, FORM_SOURCE, formLineProblem, formsDir, HAM_FAMILIES, loadForms, SPAM_FAMILIES,
} from '../../eval/lib/forms.js';

test('eval forms: every line of every language file is a valid message', () => {
  const problems: string[] = [];
  for (const language of FORM_LANGUAGES) {
    const lines = readFileSync(join(formsDir(), `${language}.jsonl`), 'utf8').split('\n');
    assert.equal(lines.at(-1), '', `${language}.jsonl ends with a newline`);
    lines.slice(0, -1).forEach((line, i) => {
      const problem = formLineProblem(line);
      if (problem) problems.push(`${language}.jsonl:${i + 1}: ${problem}`);
    });
  }
  assert.deepEqual(problems, []);
});

test('eval forms: each language has at least 30 ham and 30 spam, every family, and every source named', () => {
  const messages = loadForms();
  for (const language of FORM_LANGUAGES) {
    const mine = messages.filter((m) => m.language === language);
    assert.ok(mine.filter((m) => m.label === 'ham').length >= 30, `${language}: ham`);
    assert.ok(mine.filter((m) => m.label === 'spam').length >= 30, `${language}: spam`);
    const families = new Set(mine.map((m) => m.family));
    for (const family of [...HAM_FAMILIES, ...SPAM_FAMILIES]) assert.ok(families.has(family), `${language}: ${family}`);
  }
  assert.deepEqual([...new Set(messages.map((m) => m.source))], [FORM_SOURCE]);
});

test('eval forms: no text appears twice, across all languages (case and spacing ignored)', () => {
  const seen = new Map<string, string>();
  const duplicates: string[] = [];
  for (const m of loadForms()) {
    const key = m.text.toLowerCase().replace(/\s+/g, ' ').trim();
    const first = seen.get(key);
    if (first) duplicates.push(`${m.id} repeats ${first}`);
    else seen.set(key, m.id);
  }
  assert.deepEqual(duplicates, []);
});

test('eval forms: a line with a wrong label, family, key, address or source is refused with its reason', () => {
  const ok = { text: 'Hello', label: 'ham', family: 'legit-short', source: FORM_SOURCE };
  const line = (patch: Record<string, unknown>) => JSON.stringify({ ...ok, ...patch });
  assert.equal(formLineProblem(line({})), null);
  assert.equal(formLineProblem(line({ email: 'a@b.example' })), null);
  assert.equal(formLineProblem('{"text": "x",'), 'not JSON');
  assert.equal(formLineProblem('["x"]'), 'not an object');
  assert.equal(formLineProblem(line({ lang: 'en' })), 'unknown key lang');
  assert.equal(formLineProblem(line({ text: '  ' })), 'text must be a non-empty string');
  assert.equal(formLineProblem(line({ label: 'maybe' })), 'label must be ham or spam');
  assert.equal(formLineProblem(line({ family: 'casino' })), 'family casino is not a ham family');
  assert.equal(formLineProblem(line({ label: 'spam' })), 'family legit-short is not a spam family');
  assert.equal(formLineProblem(line({ email: 'not an address' })), 'email must be an address');
  assert.equal(formLineProblem(line({ source: '' })), 'source must be named');
});
