// Everything the text rules look things up in, built once per process on first use (~60 ms:
// the character tables, the vocabularies, the letter trigrams, the shortener list).
// prepareTextAnalysis() builds it ahead of the first request.
import { readFileSync } from 'node:fs';
import { charTables } from './char-class.js';
import { buildLexicon, VOCABULARY_DIR, type Lexicon } from './lexicon.js';
import { loadShorteners, type Shorteners } from './links.js';
import { VOCABULARY_FAMILIES } from './text-rules.js';

export interface TextModel {
  readonly lexicon: Lexicon;
  /** Implausible letter trigrams, indexed (a << 10) | (b << 5) | c with letters 1–26 (0: none yet). */
  readonly rareTrigrams: Uint8Array;
  readonly shorteners: Shorteners;
}

let model: TextModel | null = null;

export function textModel(): TextModel {
  return model ??= buildModel();
}

/** Builds the tables, vocabularies and lists now instead of on the first analyzeText call. */
export function prepareTextAnalysis(): void {
  textModel();
}

function buildModel(): TextModel {
  charTables();
  return {
    lexicon: buildLexicon(VOCABULARY_FAMILIES.map((f) => f.file)),
    rareTrigrams: loadRareTrigrams(),
    shorteners: loadShorteners(),
  };
}

/**
 * The complement of vocabularies/letter-trigrams.txt: 1 for each trigram of three letters that
 * occurs in no word of the list's languages. Indexes holding a 0 (fewer than three letters read)
 * stay 0, so the scanner can shift letters in without counting them.
 */
function loadRareTrigrams(): Uint8Array {
  const rare = new Uint8Array(1 << 15);
  for (let a = 1; a <= 26; a++) for (let b = 1; b <= 26; b++) for (let c = 1; c <= 26; c++) rare[(a << 10) | (b << 5) | c] = 1;
  for (const line of readFileSync(new URL('letter-trigrams.txt', VOCABULARY_DIR), 'utf8').split('\n')) {
    if (line.startsWith('#')) continue;
    for (const t of line.split(' ')) {
      if (!/^[a-z]{3}$/.test(t)) continue;
      rare[((t.charCodeAt(0) - 96) << 10) | ((t.charCodeAt(1) - 96) << 5) | (t.charCodeAt(2) - 96)] = 0;
    }
  }
  return rare;
}
