// The text block of a classification: every enabled text rule (text-rules.ts) scored from one
// linear scan of the texts, the detected language and the language model whose vocabularies were
// applied. Pure and synchronous; the only state is the lazily built model (text-model.ts) and the
// language detector the caller loaded (language.ts).
//
// `classifier`: the request's classifier when given (validated by the caller), else the detected
// language when vocabularies exist for it (en, de, fr, es, it, pt, nl), else 'en'. The vocabularies
// applied are those of the classifier, of the detected language (so English spam on a site that
// enforces 'de' is still caught) and the language-independent lists ('*': drug and brand names).
import type { PhishingMatcher, RuleScore, TextBlock } from '../types.js';
import type { LanguageDetector } from './language.js';
import { VOCABULARY_LANGUAGES } from './lexicon.js';
import { checkLinks } from './links.js';
import {
  capitalizationScore, currencyScore, emojiScore, exclamationScore, gibberishScore, hashtagScore, htmlScore, injectionScore,
  linksScore, repetitionScore, shortenerScore, vocabularyScores,
} from './rule-scores.js';
import { scanText } from './scan-text.js';
import { textModel } from './text-model.js';
import { round2, TEXT_RULES, VOCABULARY_FAMILIES } from './text-rules.js';

export interface TextInput {
  /** The request's `text` values and the values of its form `fields`, in order. */
  readonly texts: readonly string[];
  /** ISO 639-1 codes ("en", "de-CH" is read as "de"); UNEXPECTED_LANGUAGE needs a non-empty list. */
  readonly expectedLanguages?: readonly string[] | null;
  /** Enforced language model ("en"); default: see the file comment. */
  readonly classifier?: string | null;
}

export interface TextOptions {
  /** Rule names not to run: they are left out of `rules` and add nothing. */
  readonly disabled: ReadonlySet<string>;
  /** The phishing list for URL_PHISHING. Default null: the rule scores 0. */
  readonly phishing?: PhishingMatcher | null;
  /**
   * The detector from loadLanguageDetector(). Default null: `language` is null and
   * UNEXPECTED_LANGUAGE cannot fire.
   */
  readonly detector?: LanguageDetector | null;
}

/** Fewest words and letters of the sample for a detected language to be reported. */
const MIN_SAMPLE_WORDS = 3;
const MIN_SAMPLE_LETTERS = 15;

const ZERO: RuleScore = Object.freeze({ score: 0 });
const FAMILY_INDEX: ReadonlyMap<string, number> = new Map(VOCABULARY_FAMILIES.map((f, i) => [f.rule, i]));
const FAMILY_MAXIMA: readonly number[] = VOCABULARY_FAMILIES.map((f) => TEXT_RULES.find((r) => r.name === f.rule)!.score);

export function analyzeText(input: TextInput, options: TextOptions): TextBlock {
  const started = performance.now();
  const model = textModel();
  const { texts } = input;
  const { disabled } = options;
  const text = texts.length === 1 ? texts[0]! : texts.join('\n');

  // The language sample comes from the longest text (the message rather than a name field).
  let sampleStart = 0;
  let sampleEnd = 0;
  for (let i = 0, offset = 0; i < texts.length; offset += texts[i]!.length + 1, i++) {
    if (texts[i]!.length > sampleEnd - sampleStart) {
      sampleStart = offset;
      sampleEnd = offset + texts[i]!.length;
    }
  }
  const scan = scanText(text, sampleStart, sampleEnd, model);

  const detector = options.detector ?? null;
  const language = detector !== null && scan.sampleWords >= MIN_SAMPLE_WORDS && scan.sampleLetters >= MIN_SAMPLE_LETTERS
    ? detector.detect(scan.sample.join(' '))
    : null;
  scan.sample.length = 0; // slices of the text: do not keep a large text alive until the next call
  const classifier = input.classifier ?? (language !== null && VOCABULARY_LANGUAGES.includes(language) ? language : 'en');
  const languages = language === null || language === classifier ? [classifier] : [classifier, language];

  let links: { shorteners: number; phishing: number } | null = null;
  if (scan.urls > 0 && (!disabled.has('LINK_SHORTENER') || !disabled.has('URL_PHISHING'))) {
    links = checkLinks(text, scan.urlSpans, scan.urlBare, disabled.has('LINK_SHORTENER') ? null : model.shorteners,
      disabled.has('URL_PHISHING') ? null : options.phishing ?? null);
  }
  let families: number[] | null = null;

  const rules: Record<string, RuleScore> = {};
  let total = 0;
  for (const rule of TEXT_RULES) {
    const name = rule.name;
    if (disabled.has(name)) continue;
    let score: number;
    switch (name) {
      case 'CAPITALIZATION': score = capitalizationScore(scan); break;
      case 'CURRENCY': score = currencyScore(scan); break;
      case 'EMOJI': score = emojiScore(scan); break;
      case 'EXCLAMATION': score = exclamationScore(scan); break;
      case 'HASH_TAGS': score = hashtagScore(scan); break;
      case 'LINKS': score = linksScore(scan); break;
      case 'LINK_SHORTENER': score = shortenerScore(links?.shorteners ?? 0); break;
      case 'URL_PHISHING': score = (links?.phishing ?? 0) > 0 ? rule.score : 0; break;
      case 'UNEXPECTED_LANGUAGE': score = unexpectedLanguage(language, input.expectedLanguages) ? rule.score : 0; break;
      case 'HTML': score = htmlScore(scan); break;
      case 'SCRIPT_INJECTION': score = injectionScore(scan.script); break;
      case 'SQL_INJECTION': score = injectionScore(scan.sql); break;
      case 'GIBBERISH': score = gibberishScore(scan); break;
      case 'REPETITION': score = repetitionScore(scan); break;
      default:
        families ??= vocabularyScores(scan.hits, model.lexicon, languages, FAMILY_MAXIMA);
        score = families[FAMILY_INDEX.get(name)!]!;
    }
    score = round2(score);
    rules[name] = score === 0 ? ZERO : { score };
    total += score;
  }
  return {
    rules,
    score: round2(total),
    time: round2(performance.now() - started),
    language,
    classifier,
  };
}

function unexpectedLanguage(language: string | null, expected: readonly string[] | null | undefined): boolean {
  if (language === null || expected == null || expected.length === 0) return false;
  for (const code of expected) {
    const dash = code.indexOf('-');
    if ((dash < 0 ? code : code.slice(0, dash)).toLowerCase() === language) return false;
  }
  return true;
}
