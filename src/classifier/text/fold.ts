// How a word becomes a key: the folded code units of its characters (char-class.ts) hashed with
// 32-bit FNV-1a, and words of a phrase combined with mixWords. The scanner computes the same
// hash inline while it reads; canonicalWords rebuilds the folded text of a span so that a hash
// hit is confirmed against the vocabulary's own string (no false match from a hash collision).
//
// Token rule (shared by the scanner, canonicalWords and the vocabularies): a word is a run of
// letters, digits and combining marks; '@' and '$' between two letters stay inside it ("vi@gra").
// A word that mixes letters with digits or '@'/'$' is read through LEET ("v1agra" → "viagra").
import { charTables, DIGIT, LETTER, MARK } from './char-class.js';

export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;

/** Look-alike digits and symbols inside a word, as the letters they stand for (0 when none). */
export const LEET = new Uint8Array(128);
for (const [from, to] of [['0', 'o'], ['1', 'i'], ['3', 'e'], ['4', 'a'], ['5', 's'], ['7', 't'], ['8', 'b'], ['@', 'a'], ['$', 's']] as const) {
  LEET[from.charCodeAt(0)] = to.charCodeAt(0);
}

/** The key of a phrase: the key of its first words combined with the hash of the next word. */
export function mixWords(prefix: number, word: number): number {
  return (Math.imul(prefix ^ 0x5bd1e995, 0x9e3779b1) ^ word) | 0;
}

export function hashString(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

/** True for '@' or '$' between two letters (`prevCls`, `nextCls`: classes of the code units around it). */
export function isInnerSymbol(c: number, prevCls: number, nextCls: number): boolean {
  return (c === 0x40 || c === 0x24) && (prevCls & LETTER) !== 0 && (nextCls & LETTER) !== 0;
}

/**
 * The folded words of text[start, end), joined by single spaces: what a vocabulary phrase must
 * equal. `joined` concatenates the letters instead ("c a s i n o" → "casino").
 */
export function canonicalWords(text: string, start: number, end: number, joined = false): string {
  const { cls, fold1, fold2, mathFold } = charTables();
  const words: string[] = [];
  let word: number[] = [];
  let letters = false;
  let mixed = false;
  const flush = (): void => {
    if (word.length === 0) return;
    if (letters && mixed) word = word.map((u) => (u < 128 && LEET[u] !== 0 ? LEET[u]! : u));
    words.push(String.fromCharCode(...word));
    word = [];
    letters = false;
    mixed = false;
  };
  for (let i = start; i < end; i++) {
    let c = text.charCodeAt(i);
    let bits = cls[c]!;
    let f1 = fold1[c]!;
    let f2 = fold2[c]!;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        const cp = ((c - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
        i++;
        const m = cp >= 0x1d400 && cp <= 0x1d7ff ? mathFold[cp - 0x1d400]! : 0;
        c = m;
        bits = m === 0 ? 0 : m >= 0x61 ? LETTER : DIGIT;
        f1 = m;
        f2 = 0;
      }
    }
    if ((bits & (LETTER | DIGIT)) !== 0) {
      if (joined && (bits & LETTER) === 0) continue;
      if ((bits & LETTER) !== 0) letters = true;
      else mixed = true;
      word.push(f1);
      if (f2 !== 0) word.push(f2);
    } else if ((bits & MARK) !== 0 && word.length > 0) {
      continue;
    } else if (!joined && word.length > 0 && i + 1 < end && isInnerSymbol(c, cls[text.charCodeAt(i - 1)]!, cls[text.charCodeAt(i + 1)]!)) {
      mixed = true;
      word.push(c);
    } else if (!joined) {
      flush();
    }
  }
  flush();
  return words.join(joined ? '' : ' ');
}
