// The vocabularies (vocabularies/*.json, one file per spam family, term lists per language) and the
// scanner's special words, as one map from a word or phrase key (fold.ts) to an entry. A phrase
// of n words also stores its n-1 prefixes, so the scanner extends a phrase one word at a time
// with one map lookup per word. Data files are read from the source tree, which `tsc` does not
// copy into dist (as src/intel/countries.json is).
import { readFileSync } from 'node:fs';
import { canonicalWords, hashString, mixWords } from './fold.js';

export const VOCABULARY_DIR = new URL('../../../../src/classifier/text/vocabularies/', import.meta.url);

/** The languages every vocabulary covers; '*' lists hold brand names and loanwords used in all. */
export const VOCABULARY_LANGUAGES: readonly string[] = Object.freeze(['en', 'de', 'fr', 'es', 'it', 'pt', 'nl']);

/** Entry flags. */
export const TERM = 1;
export const PREFIX = 2;

/** The scanner's special words (SQL and script shapes, currency codes), by code. */
export const SPECIAL_WORDS = {
  usd: 1, eur: 1, gbp: 1, chf: 1, jpy: 1, cny: 1, rub: 1, inr: 1, brl: 1, aud: 1, cad: 1,
  javascript: 2, vbscript: 2, livescript: 2, data: 3, document: 4,
  union: 10, select: 11, all: 12, distinct: 12, drop: 13, truncate: 13, alter: 13, delete: 14, insert: 15,
  exec: 16, execute: 16, shutdown: 17, table: 18, database: 18, schema: 18, from: 19, into: 20,
  sleep: 21, benchmark: 21, waitfor: 22, information: 23, xp: 24, sysobjects: 25, version: 26,
} as const;
export const SPECIAL = {
  CURRENCY_CODE: 1, SCRIPT_SCHEME: 2, DATA: 3, DOCUMENT: 4,
  UNION: 10, SELECT: 11, UNION_MODIFIER: 12, DROP: 13, DELETE: 14, INSERT: 15, EXEC: 16, SHUTDOWN: 17,
  DROP_TARGET: 18, FROM: 19, INTO: 20, SLEEP: 21, WAITFOR: 22, INFORMATION: 23, XP: 24, SYSOBJECTS: 25,
  VERSION: 26,
} as const;

export interface Posting {
  /** Index into the families the lexicon was built from. */
  readonly family: number;
  readonly strong: boolean;
  /** A language code, or '*' for every language. */
  readonly language: string;
}

export interface Lexicon {
  /** Word or phrase key → entry id as an open-addressing table (findEntry): keys, entry id + 1 (0 = empty slot). */
  readonly slotKeys: Int32Array;
  readonly slotIds: Int32Array;
  /** 32 − log2(slots): a key's home slot is the top bits of its multiplicative hash. */
  readonly shift: number;
  /** Folded text of each entry, to confirm a hit. */
  readonly canonical: readonly string[];
  readonly flags: Uint8Array;
  /** SPECIAL code of a single word, else 0. */
  readonly special: Uint8Array;
  readonly postings: readonly (readonly Posting[])[];
  /** Words in the longest phrase. */
  readonly maxWords: number;
}

interface VocabularyFile {
  readonly rule: string;
  readonly languages: Readonly<Record<string, { readonly strong: readonly string[]; readonly weak: readonly string[] }>>;
}

/** One vocabulary file: the rule it feeds and its terms. */
export function readVocabulary(file: string): VocabularyFile {
  return JSON.parse(readFileSync(new URL(file, VOCABULARY_DIR), 'utf8')) as VocabularyFile;
}

/** Builds the lexicon of the given vocabulary files (in family order) and the special words. */
export function buildLexicon(files: readonly string[]): Lexicon {
  const index = new Map<number, number>();
  const canonical: string[] = [];
  const flags: number[] = [];
  const special: number[] = [];
  const postings: Posting[][] = [];
  let maxWords = 1;

  const entryFor = (key: number, text: string): number => {
    let id = index.get(key);
    if (id === undefined) {
      id = canonical.length;
      index.set(key, id);
      canonical.push(text);
      flags.push(0);
      special.push(0);
      postings.push([]);
    } else if (canonical[id] !== text) {
      throw new Error(`vocabulary key collision: "${canonical[id]}" and "${text}"`);
    }
    return id;
  };

  files.forEach((file, family) => {
    const vocabulary = readVocabulary(file);
    for (const [language, lists] of Object.entries(vocabulary.languages)) {
      for (const [strong, terms] of [[true, lists.strong], [false, lists.weak]] as const) {
        for (const term of terms) {
          const words = canonicalWords(term, 0, term.length).split(' ').filter((w) => w !== '');
          if (words.length === 0) throw new Error(`${file}: empty term "${term}"`);
          maxWords = Math.max(maxWords, words.length);
          let key = 0;
          for (let i = 0; i < words.length; i++) {
            key = i === 0 ? hashString(words[0]!) : mixWords(key, hashString(words[i]!));
            const id = entryFor(key, words.slice(0, i + 1).join(' '));
            if (i < words.length - 1) flags[id]! |= PREFIX;
            else {
              flags[id]! |= TERM;
              const list = postings[id]!;
              if (!list.some((p) => p.family === family && p.language === language)) list.push({ family, strong, language });
            }
          }
        }
      }
    }
  });
  for (const [word, code] of Object.entries(SPECIAL_WORDS)) special[entryFor(hashString(word), word)] = code;

  let bits = 4;
  while (1 << bits < index.size * 2) bits++;
  const slotKeys = new Int32Array(1 << bits);
  const slotIds = new Int32Array(1 << bits);
  const shift = 32 - bits;
  for (const [key, id] of index) {
    let slot = Math.imul(key, 0x9e3779b1) >>> shift;
    while (slotIds[slot] !== 0) slot = (slot + 1) & (slotIds.length - 1);
    slotKeys[slot] = key;
    slotIds[slot] = id + 1;
  }
  return {
    slotKeys, slotIds, shift, canonical, flags: Uint8Array.from(flags), special: Uint8Array.from(special), postings, maxWords,
  };
}

/** The entry id of a word or phrase key, or -1. */
export function findEntry(lexicon: Lexicon, key: number): number {
  const { slotKeys, slotIds } = lexicon;
  const mask = slotIds.length - 1;
  let slot = Math.imul(key, 0x9e3779b1) >>> lexicon.shift;
  for (;;) {
    const id = slotIds[slot]!;
    if (id === 0) return -1;
    if (slotKeys[slot] === key) return id - 1;
    slot = (slot + 1) & mask;
  }
}
