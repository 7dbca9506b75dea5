// Scores of the text rules from what the scan counted (text-rules.ts documents each formula).
import { mixWords } from './fold.js';
import type { Lexicon } from './lexicon.js';
import type { TextScan } from './scan-text.js';
import { ramp, VOCABULARY_FAMILIES } from './text-rules.js';

export function capitalizationScore(scan: TextScan): number {
  const cased = scan.upper + scan.lower;
  return cased < 20 ? 0 : 1.5 * ramp(scan.upper / cased, 0.4, 0.9);
}

export function currencyScore(scan: TextScan): number {
  return ramp(scan.currency, 2, 10);
}

export function emojiScore(scan: TextScan): number {
  return ramp(scan.emoji, 3, 15);
}

export function exclamationScore(scan: TextScan): number {
  const allowance = 3 + Math.floor(scan.nonSpace / 300);
  return ramp(scan.exclamations, allowance, allowance + 9);
}

export function hashtagScore(scan: TextScan): number {
  return ramp(scan.hashtags, 2, 8);
}

export function linksScore(scan: TextScan): number {
  if (scan.urls === 0) return 0;
  const dense = scan.nonSpace - scan.urlChars < 20 ? 0.75 : 0;
  const allowance = 1 + Math.floor(scan.words / 100);
  return Math.min(1.5, 0.1 + 0.2 * Math.max(0, scan.urls - allowance) + dense);
}

export function shortenerScore(shorteners: number): number {
  return shorteners === 0 ? 0 : Math.min(1.5, 0.8 + 0.35 * (shorteners - 1));
}

export function htmlScore(scan: TextScan): number {
  return Math.min(2, 0.2 * scan.tags + 0.8 * scan.linkMarkup);
}

/** SCRIPT_INJECTION and SQL_INJECTION: 3 for one kind of shape, 4 for more. */
export function injectionScore(kinds: number): number {
  if (kinds === 0) return 0;
  return (kinds & (kinds - 1)) === 0 ? 3 : 4;
}

export function gibberishScore(scan: TextScan): number {
  return scan.gibberish === 0 ? 0 : 4 * Math.min(1, (2 * scan.gibberish) / scan.words);
}

export function repetitionScore(scan: TextScan): number {
  const runs = scan.runs === 0 ? 0 : ramp(scan.longestRun, 9, 40) + 0.2 * (scan.runs - 1);
  const allowance = 1 + Math.floor(scan.words / 300);
  const adjacent = ramp(scan.adjacentRepeats, allowance, allowance + 6);
  const sequences = scan.keyCount >= 12 ? ramp(repeatedTrigramShare(scan.keys, scan.keyCount), 0.25, 0.7) : 0;
  return 1.5 * Math.min(1, runs + adjacent + sequences);
}

/** Slots kept allocated between calls; a larger table made for a huge text is dropped by the next call. */
const MAX_KEPT_SLOTS = 131_072;
let table = new Int32Array(0);
let used = new Uint8Array(0);

/** Share of the three-word sequences that occurred earlier in the text (open addressing, linear). */
export function repeatedTrigramShare(keys: Int32Array, count: number): number {
  const trigrams = count - 2;
  let size = 64;
  while (size < trigrams * 2) size <<= 1;
  if (table.length < size || table.length > Math.max(size, MAX_KEPT_SLOTS)) {
    table = new Int32Array(size);
    used = new Uint8Array(size);
  } else {
    used.fill(0, 0, size);
  }
  const mask = size - 1;
  let repeated = 0;
  for (let i = 0; i < trigrams; i++) {
    const key = mixWords(mixWords(keys[i]!, keys[i + 1]!), keys[i + 2]!);
    let slot = (Math.imul(key, 0x9e3779b1) >>> 0) & mask;
    for (;;) {
      if (used[slot] === 0) {
        used[slot] = 1;
        table[slot] = key;
        break;
      }
      if (table[slot] === key) {
        repeated++;
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
  return repeated / trigrams;
}

/** What a family's weak terms may add up to when none of its strong terms occurs. */
export const WEAK_ALONE_MAX = 0.5;

/**
 * Score of each vocabulary family (VOCABULARY_FAMILIES order) from the confirmed lexicon hits:
 * a term counts once, strong if any of its applicable postings is strong; postings of other
 * languages than `languages` and '*' are ignored.
 */
export function vocabularyScores(hits: readonly number[], lexicon: Lexicon, languages: readonly string[], maxima: readonly number[]): number[] {
  const strong = new Array<number>(VOCABULARY_FAMILIES.length).fill(0);
  const weak = new Array<number>(VOCABULARY_FAMILIES.length).fill(0);
  const seen = new Array<number>(VOCABULARY_FAMILIES.length);
  for (const id of hits) {
    seen.fill(0);
    for (const posting of lexicon.postings[id]!) {
      if (posting.language !== '*' && !languages.includes(posting.language)) continue;
      const level = posting.strong ? 2 : 1;
      if (level > seen[posting.family]!) seen[posting.family] = level;
    }
    for (let f = 0; f < seen.length; f++) {
      if (seen[f] === 2) strong[f]!++;
      else if (seen[f] === 1) weak[f]!++;
    }
  }
  return VOCABULARY_FAMILIES.map((family, f) => {
    const weakScore = weak[f]! * family.weak;
    return Math.min(maxima[f]!, strong[f]! * family.strong + (strong[f] === 0 ? Math.min(weakScore, WEAK_ALONE_MAX) : weakScore));
  });
}
