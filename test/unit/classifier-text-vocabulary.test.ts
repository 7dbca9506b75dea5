// Vocabularies: one data file per spam family with strong and weak terms per language; matched on
// folded words (case, diacritics, full-width and mathematical letters) and phrases, through
// look-alike digits ("v1agra"), '@'/'$' inside words and spaced letters ("c a s i n o").
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { analyzeText } from '../../src/classifier/text/index.js';
import { buildLexicon, readVocabulary, VOCABULARY_DIR, VOCABULARY_LANGUAGES } from '../../src/classifier/text/lexicon.js';
import { VOCABULARY_FAMILIES } from '../../src/classifier/text/text-rules.js';
import { analyze, fired, only, ruleScore } from '../helpers/classifier-text.js';

test('every family file has strong and weak lists for en, de, fr, es, it, pt, nl and *, and SOURCES.md names it', () => {
  const sources = readFileSync(new URL('SOURCES.md', VOCABULARY_DIR), 'utf8');
  for (const family of VOCABULARY_FAMILIES) {
    const vocabulary = readVocabulary(family.file);
    assert.equal(vocabulary.rule, family.rule);
    assert.deepEqual(Object.keys(vocabulary.languages).sort(), ['*', ...VOCABULARY_LANGUAGES].sort(), family.file);
    for (const language of VOCABULARY_LANGUAGES) {
      const lists = vocabulary.languages[language]!;
      assert.ok(lists.strong.length + lists.weak.length >= 5, `${family.file} ${language}`);
    }
    assert.match(sources, new RegExp(`\`${family.file.replace('.', '\\.')}\``));
  }
  for (const file of ['shorteners.txt', 'letter-trigrams.txt']) {
    assert.ok(existsSync(new URL(file, VOCABULARY_DIR)), file);
    assert.match(sources, new RegExp(`\`${file.replace('.', '\\.')}\``));
  }
  assert.doesNotThrow(() => buildLexicon(VOCABULARY_FAMILIES.map((f) => f.file))); // no key collides with another
});

test('every term of every language is found in a sentence, with at least its weight', () => {
  for (const family of VOCABULARY_FAMILIES) {
    const vocabulary = readVocabulary(family.file);
    for (const [language, lists] of Object.entries(vocabulary.languages)) {
      const classifier = language === '*' ? 'nl' : language;
      for (const [strong, terms] of [[true, lists.strong], [false, lists.weak]] as const) {
        for (const term of terms) {
          const block = analyzeText({ texts: [`Re: ${term.toUpperCase()}, ok`], classifier }, { disabled: only(family.rule) });
          const score = block.rules[family.rule]!.score;
          assert.ok(score >= (strong ? family.strong : family.weak), `${family.file} ${language} "${term}" scored ${score}`);
        }
      }
    }
  }
});

test('scores: a term counts once however often it occurs; strong and weak weights add up to the maximum', () => {
  assert.equal(ruleScore('PHARMACY', 'viagra'), 1.5);
  assert.equal(ruleScore('PHARMACY', 'viagra viagra VIAGRA Viagra'), 1.5);
  assert.equal(ruleScore('PHARMACY', 'my pills'), 0.25);
  // Weak terms alone add at most 0.5 (WEAK_ALONE_MAX): a legitimate question about medication stays mild.
  assert.equal(ruleScore('PHARMACY', 'my pills, the prescription, the meds and the tablets from the drugstore'), 0.5);
  assert.equal(ruleScore('PHARMACY', 'viagra and cialis pills'), 3.25);
  assert.equal(ruleScore('PHARMACY', 'buy viagra'), 3); // the drug and the phrase
  assert.equal(ruleScore('PHARMACY', 'viagra cialis levitra xanax valium tramadol'), 5); // at most 5
  assert.equal(ruleScore('PROFANITY', 'this damn thing'), 0.15);
  assert.equal(ruleScore('PROFANITY', 'this fucking shit'), 1);
  assert.equal(ruleScore('MARKETING', 'click here for a discount'), 1.25);
  assert.equal(ruleScore('SEO', 'We sell high DA backlinks and guest posts'), 4.5);
});

test('obfuscations: case, diacritics, full-width and mathematical letters, look-alike digits, @ and $, spaced letters', () => {
  for (const text of [
    'VIAGRA', 'Viágra', 'ＶＩＡＧＲＡ', '𝐯𝐢𝐚𝐠𝐫𝐚', '𝕍𝕀𝔸𝔾ℝ𝔸', 'v1agra', 'V14GR4', 'vi@gra', 'v i a g r a', 'V.I.A.G.R.A', 'v-i-a-g-r-a', 'v i a g r a!',
  ]) assert.equal(ruleScore('PHARMACY', text), 1.5, text);
  assert.equal(ruleScore('CASINO', 'ca$ino'), 0.25);
  assert.equal(ruleScore('CASINO', 'c a s\ni n o'), 0); // a line break ends spaced letters
  assert.equal(ruleScore('CASINO', 'b e s t c a s i n o'), 0); // spaced runs are whole words only
  assert.equal(ruleScore('CASINO', 'FREE  SPINS'), 1.5);
  assert.equal(ruleScore('CASINO', 'free-spins'), 1.5);
  assert.equal(ruleScore('PHARMACY', 'specialist, specialised, "Cialis"'), 1.5); // only the whole word
});

test('languages: the classifier language and the detected one apply, other languages do not', () => {
  // "kredit" is German; "lenen" Dutch; "slot" (a lock in Dutch) is on no list.
  assert.equal(ruleScore('LOANS', 'Sofortkredit ohne Schufa', { classifier: 'de' }), 1.75); // strong and weak
  assert.equal(ruleScore('LOANS', 'Sofortkredit ohne Schufa', { classifier: 'en' }), 0);
  assert.equal(ruleScore('LOANS', 'snel geld lenen', { classifier: 'nl' }), 1.75);
  assert.equal(ruleScore('CASINO', 'het slot van de deur', { classifier: 'nl' }), 0);
  // Language-independent names apply whatever the classifier.
  assert.equal(ruleScore('CASINO', 'bet365 und 1xbet', { classifier: 'de' }), 3);
  // A weak word in one language can be strong in another: each language decides for itself.
  assert.equal(ruleScore('ADULT', 'sexo', { classifier: 'es' }), 0.25);
  assert.equal(ruleScore('ADULT', 'sexo', { classifier: 'en' }), 0);
});

test('several fields are read as one text; phrases may span them', () => {
  const block = analyze(['John', 'buy', 'viagra'], {}, { disabled: only('PHARMACY') });
  assert.deepEqual(fired(block), { PHARMACY: 3 });
});
