// Language: eld detects the language of a sample of plain words from the longest text; short or
// ambiguous texts get null. UNEXPECTED_LANGUAGE needs expectedLanguages and a detected language.
// `classifier`: the request's, else the detected language when vocabularies exist for it, else 'en'.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { loadLanguageDetector, type LanguageDetector } from '../../src/classifier/text/index.js';
import { analyze, ruleScore } from '../helpers/classifier-text.js';

let detector: LanguageDetector;
before(async () => {
  detector = await loadLanguageDetector();
});

const MESSAGES: Record<string, string> = {
  en: 'Hello, I ordered a blue jacket last week and it has not arrived yet. Could you tell me where my parcel is?',
  de: 'Guten Tag, ich habe letzte Woche eine blaue Jacke bestellt und sie ist noch nicht angekommen. Wo ist mein Paket?',
  fr: "Bonjour, j'ai commandé une veste bleue la semaine dernière et elle n'est pas encore arrivée. Où est mon colis ?",
  es: 'Hola, pedí una chaqueta azul la semana pasada y todavía no ha llegado. ¿Podrían decirme dónde está mi paquete?',
  it: "Buongiorno, la settimana scorsa ho ordinato una giacca blu e non è ancora arrivata. Dove si trova il mio pacco?",
  pt: 'Olá, encomendei um casaco azul na semana passada e ainda não chegou. Podem dizer-me onde está a minha encomenda?',
  nl: 'Hallo, ik heb vorige week een blauwe jas besteld en die is nog steeds niet aangekomen. Waar is mijn pakket?',
};

test('detects en, de, fr, es, it, pt and nl in ordinary support messages and picks their vocabularies', () => {
  for (const [language, message] of Object.entries(MESSAGES)) {
    const block = analyze(message, {}, { detector });
    assert.equal(block.language, language, message);
    assert.equal(block.classifier, language);
  }
});

test('links, numbers and markup do not sway the detection; the longest field is the sample', () => {
  const message = `${MESSAGES.de} https://example.com/en/the/english/path?this=is&english=words 12345 <b>x</b>`;
  assert.equal(analyze(message, {}, { detector }).language, 'de');
  assert.equal(analyze(['John Smith', 'London', MESSAGES.fr], {}, { detector }).language, 'fr');
});

test('short texts, lists of numbers and no detector: language null, classifier en', () => {
  for (const text of ['ok thanks!!', 'Danke schön', 'Merci', '12345 67890', '', 'https://example.com/about-us-and-more']) {
    const block = analyze(text, {}, { detector });
    assert.deepEqual([block.language, block.classifier], [null, 'en'], text);
  }
  assert.deepEqual([analyze(MESSAGES.de).language, analyze(MESSAGES.de).classifier], [null, 'en']);
});

test('classifier: the request wins; a detected language without vocabularies falls back to en', () => {
  const forced = analyze(MESSAGES.de, { classifier: 'fr' }, { detector });
  assert.deepEqual([forced.language, forced.classifier], ['de', 'fr']);
  const russian = analyze('Здравствуйте, я заказал синюю куртку на прошлой неделе, но она до сих пор не пришла.', {}, { detector });
  assert.deepEqual([russian.language, russian.classifier], ['ru', 'en']);
});

test("the detected language's vocabularies apply next to the enforced classifier's", () => {
  const spam = 'Hello, I came across your website and noticed it is not on the first page of Google. We offer SEO services.';
  assert.equal(ruleScore('SEO', spam, { classifier: 'de' }, { detector }), 4.75); // 3 strong phrases and "seo"
  assert.equal(ruleScore('SEO', spam, { classifier: 'de' }), 0.25); // without detection only 'de' and '*' ("seo")
});

test('UNEXPECTED_LANGUAGE: 1.5 when the detected language is not expected; region subtags and case are ignored', () => {
  assert.equal(ruleScore('UNEXPECTED_LANGUAGE', MESSAGES.de, { expectedLanguages: ['en'] }, { detector }), 1.5);
  assert.equal(ruleScore('UNEXPECTED_LANGUAGE', MESSAGES.de, { expectedLanguages: ['en', 'DE-ch'] }, { detector }), 0);
  assert.equal(ruleScore('UNEXPECTED_LANGUAGE', MESSAGES.de, { expectedLanguages: [] }, { detector }), 0);
  assert.equal(ruleScore('UNEXPECTED_LANGUAGE', MESSAGES.de, { expectedLanguages: null }, { detector }), 0);
  assert.equal(ruleScore('UNEXPECTED_LANGUAGE', 'Danke schön', { expectedLanguages: ['en'] }, { detector }), 0); // too short to tell
  assert.equal(ruleScore('UNEXPECTED_LANGUAGE', MESSAGES.de, { expectedLanguages: ['en'] }), 0); // no detector
});
