// The text rules: names, scores at full strength and what each measures. A rule's score grows
// with the strength of its signal up to the score below; ramp(x, a, b) is 0 at or below a, 1 at
// or above b, linear between. The default bands (policy.ts) are GOOD < 1 ≤ NEUTRAL < 3 ≤ BAD: one
// mild signal on a legitimate message stays below 1, one strong vocabulary term makes a message
// NEUTRAL, and it takes two independent strong signals to reach BAD.
import type { RuleDefinition } from '../types.js';

/** A vocabulary family: its rule, its data file and the weight of a strong and a weak term. */
export interface VocabularyFamily {
  readonly rule: string;
  readonly file: string;
  readonly strong: number;
  readonly weak: number;
}

export const VOCABULARY_FAMILIES: readonly VocabularyFamily[] = Object.freeze([
  { rule: 'PHARMACY', file: 'pharmacy.json', strong: 1.5, weak: 0.25 },
  { rule: 'CASINO', file: 'casino.json', strong: 1.5, weak: 0.25 },
  { rule: 'LOANS', file: 'loans.json', strong: 1.5, weak: 0.25 },
  { rule: 'CRYPTO', file: 'crypto.json', strong: 1.5, weak: 0.25 },
  { rule: 'SEO', file: 'seo.json', strong: 1.5, weak: 0.25 },
  { rule: 'ADULT', file: 'adult.json', strong: 1.5, weak: 0.25 },
  { rule: 'PROFANITY', file: 'profanity.json', strong: 0.5, weak: 0.15 },
  { rule: 'SCAM', file: 'scam.json', strong: 1.5, weak: 0.25 },
  { rule: 'MARKETING', file: 'marketing.json', strong: 1, weak: 0.25 },
]);

const vocabulary = (family: VocabularyFamily, score: number, what: string): RuleDefinition => ({
  name: family.rule,
  dimension: 'text',
  score,
  description: `${what} (vocabularies/${family.file}): ${family.strong} per distinct strong term or phrase, ${family.weak} per `
    + `distinct weak one (weak terms alone add at most 0.5), at most ${score}. Terms of the classifier's language, of the detected language and of all languages count.`,
});

const family = (rule: string): VocabularyFamily => VOCABULARY_FAMILIES.find((f) => f.rule === rule)!;

export const TEXT_RULES: readonly RuleDefinition[] = Object.freeze([
  {
    name: 'CAPITALIZATION', dimension: 'text', score: 1.5,
    description: 'Share of capitals among the cased letters of words (links left out), from 20 such letters on: 1.5 × ramp(share, 0.4, 0.9).',
  },
  {
    name: 'CURRENCY', dimension: 'text', score: 1,
    description: 'Currency symbols ($, €, £, ¥, ₿, …) and ISO codes (USD, EUR, …): ramp(count, 2, 10); one or two prices score 0.',
  },
  {
    name: 'EMOJI', dimension: 'text', score: 1,
    description: 'Emoji (a flag counts once): ramp(count, 3, 15).',
  },
  {
    name: 'EXCLAMATION', dimension: 'text', score: 1,
    description: 'Exclamation marks beyond an allowance of 3 plus one per 300 non-space characters: ramp(count, allowance, allowance + 9).',
  },
  {
    name: 'HASH_TAGS', dimension: 'text', score: 1,
    description: 'Hashtags ("#word"; not "#123", "C#" or a colour like "#fff"): ramp(count, 2, 8).',
  },
  {
    name: 'LINKS', dimension: 'text', score: 1.5,
    description: 'Links (http://, https://, ftp://, www., bare domains with a common TLD): 0.1 when there is one, 0.2 per link '
      + 'beyond an allowance of one plus one per 100 words, 0.75 more when the text besides the links has fewer than 20 non-space characters; at most 1.5.',
  },
  {
    name: 'LINK_SHORTENER', dimension: 'text', score: 1.5,
    description: 'Links through a URL shortener or redirector (vocabularies/shorteners.txt): 0.8 for the first, 0.35 per further one, at most 1.5.',
  },
  {
    name: 'URL_PHISHING', dimension: 'text', score: 6,
    description: 'A link is on the phishing list: 6 (marks the input as spam). 0 when no phishing list is loaded.',
  },
  {
    name: 'UNEXPECTED_LANGUAGE', dimension: 'text', score: 1.5,
    description: 'expectedLanguages is given and the language detected with confidence is not among them: 1.5.',
  },
  {
    name: 'HTML', dimension: 'text', score: 2,
    description: 'HTML markup: 0.2 per known tag, 0.8 per link markup (<a href>, [url], [link]); at most 2.',
  },
  {
    name: 'SCRIPT_INJECTION', dimension: 'text', score: 4,
    description: 'Script shapes: <script>, frames and plug-ins (<iframe>, <object>, <embed>, …), on…= handlers in a tag, '
      + 'javascript:/vbscript:/data:text/html URLs, document.cookie or document.write(, ${jndi:. 3 for one kind, 4 for two or more.',
  },
  {
    name: 'SQL_INJECTION', dimension: 'text', score: 4,
    description: "SQL shapes: a quote then an OR/AND tautology (' OR 1=1) or a comment ('--, '#, '/*), UNION [ALL] SELECT, "
      + 'a statement after a value and ";" (1; DROP TABLE, \'; DELETE FROM, INSERT INTO, EXEC xp_, SHUTDOWN), '
      + 'SLEEP(n)/BENCHMARK( after a quote, ";", "(", ",", "=", "|" or AND/OR/SELECT (not a program\'s sleep(250)), WAITFOR DELAY, '
      + 'information_schema/xp_cmdshell/sysobjects/@@version. 3 for one kind, 4 for two or more.',
  },
  {
    name: 'GIBBERISH', dimension: 'text', score: 4,
    description: 'Random-letter words: Latin words of 6+ letters without digits where at least 3 and 30% of the letter trigrams '
      + 'occur in no Latin-script language (vocabularies/letter-trigrams.txt), or with case flipping inside (xKqZjW). '
      + '4 × min(1, 2 × share of such words among all words): a text of random strings is a bot\'s.',
  },
  {
    name: 'REPETITION', dimension: 'text', score: 1.5,
    description: 'Repeated text: a run of 10+ identical letters, digits or emoji (ramp(longest, 9, 40) + 0.2 per further run), '
      + 'the same word twice in a row (ramp(count, allowance, allowance + 6), allowance 1 plus one per 300 words), '
      + 'repeated three-word sequences from 12 words on '
      + '(ramp(share seen before, 0.25, 0.7)); 1.5 × min(1, sum).',
  },
  vocabulary(family('PHARMACY'), 5, 'Pharmacy spam: drug names, online pharmacies, "no prescription"'),
  vocabulary(family('CASINO'), 5, 'Gambling spam: online casinos, free spins, betting'),
  vocabulary(family('LOANS'), 5, 'Loan spam: payday and instant loans, "no credit check"'),
  vocabulary(family('CRYPTO'), 5, 'Crypto and investment scams: guaranteed returns, trading platforms, wallet recovery'),
  vocabulary(family('SEO'), 5, 'SEO and link selling: backlinks, guest posts, "first page of Google"'),
  vocabulary(family('ADULT'), 5, 'Adult content and dating spam'),
  vocabulary(family('PROFANITY'), 1.5, 'Profanity and slurs'),
  vocabulary(family('SCAM'), 5, 'Advance-fee, lottery and account scams: "next of kin", "you have won", Western Union'),
  vocabulary(family('MARKETING'), 3, 'Sales pitches: "click here", "limited time offer", "make money online"'),
]);

export const TEXT_RULE_NAMES: readonly string[] = Object.freeze(TEXT_RULES.map((r) => r.name));

/** 0 at or below `from`, 1 at or above `to`, linear between. */
export function ramp(x: number, from: number, to: number): number {
  return x <= from ? 0 : x >= to ? 1 : (x - from) / (to - from);
}

export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
