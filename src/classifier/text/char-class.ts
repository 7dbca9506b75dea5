// Per-code-unit classes and folds for the text scanner: one table lookup per character instead of
// a regular expression, so the scan stays a single linear pass. Built once, on first use (~45 ms:
// a Unicode property test and an NFKD per code point of the Basic Multilingual Plane).
//
// The fold is what vocabularies are matched against: lower case, compatibility decomposition
// (full-width and circled letters, ligatures), combining marks dropped ("é" → "e", "ß" → "ss").

export const LETTER = 1;
export const UPPER = 2;
export const LOWER = 4;
export const DIGIT = 8;
/** Combining mark: part of the word it follows, dropped from the fold. */
export const MARK = 16;
export const CURRENCY = 32;
/** Pictographic symbol of the BMP (☀, ✅, ⭐, …); astral emoji are recognised by range. */
export const EMOJI = 64;
export const SPACE = 128;

export interface CharTables {
  /** Class bits of each BMP code unit (surrogates are 0). */
  readonly cls: Uint8Array;
  /** First code unit of the fold of a letter or digit (0 for anything else). */
  readonly fold1: Uint16Array;
  /** Second code unit of the fold ("ß" → "ss", "æ" → "ae"), else 0. */
  readonly fold2: Uint16Array;
  /**
   * Mathematical alphanumerics U+1D400–1D7FF ("𝐯𝐢𝐚𝐠𝐫𝐚"), indexed from U+1D400: the ASCII letter or
   * digit each folds to (NFKC, lower case), else 0.
   */
  readonly mathFold: Uint8Array;
}

let tables: CharTables | null = null;

export function charTables(): CharTables {
  return tables ??= buildTables();
}

function buildTables(): CharTables {
  const cls = new Uint8Array(65536);
  const fold1 = new Uint16Array(65536);
  const fold2 = new Uint16Array(65536);
  const letter = /\p{L}/u;
  const upper = /\p{Lu}|\p{Lt}/u;
  const lower = /\p{Ll}/u;
  const digit = /\p{Nd}/u;
  const mark = /\p{M}/u;
  const currency = /\p{Sc}/u;
  const pictographic = /\p{Extended_Pictographic}/u;
  const space = /\s/u;
  for (let c = 0; c < 65536; c++) {
    if (c >= 0xd800 && c < 0xe000) continue;
    const s = String.fromCharCode(c);
    let bits = 0;
    if (letter.test(s)) {
      bits = LETTER;
      if (upper.test(s)) bits |= UPPER;
      else if (lower.test(s)) bits |= LOWER;
    } else if (digit.test(s)) bits = DIGIT;
    else if (mark.test(s)) bits = MARK;
    else if (currency.test(s)) bits = CURRENCY;
    // ©, ®, ™, ‼ and arrows are Extended_Pictographic too, but ordinary in text.
    else if (c >= 0x2300 && c !== 0x3030 && pictographic.test(s)) bits = EMOJI;
    else if (space.test(s)) bits = SPACE;
    cls[c] = bits;
    if ((bits & (LETTER | DIGIT)) !== 0) {
      const folded = foldString(s, mark);
      fold1[c] = folded.length > 0 ? folded.charCodeAt(0) : c;
      if (folded.length > 1) fold2[c] = folded.charCodeAt(1);
    }
  }
  // Letters NFKD leaves alone but readers see as two (or one) Latin letters.
  const extra: Record<string, string> = { 'ß': 'ss', 'ẞ': 'ss', 'æ': 'ae', 'Æ': 'ae', 'œ': 'oe', 'Œ': 'oe', 'ø': 'o', 'Ø': 'o', 'đ': 'd', 'Đ': 'd', 'ł': 'l', 'Ł': 'l', 'þ': 'th', 'Þ': 'th', 'ı': 'i', 'ð': 'd', 'Ð': 'd' };
  for (const [ch, to] of Object.entries(extra)) {
    const c = ch.charCodeAt(0);
    fold1[c] = to.charCodeAt(0);
    fold2[c] = to.length > 1 ? to.charCodeAt(1) : 0;
  }
  const mathFold = new Uint8Array(0x400);
  for (let i = 0; i < 0x400; i++) {
    const folded = String.fromCodePoint(0x1d400 + i).normalize('NFKC').toLowerCase();
    const c = folded.length === 1 ? folded.charCodeAt(0) : 0;
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) mathFold[i] = c;
  }
  return { cls, fold1, fold2, mathFold };
}

/** NFKD, lower case, marks dropped; at most two code units are kept ("ﬃ" keeps "ff"). */
function foldString(s: string, mark: RegExp): string {
  let out = '';
  for (const ch of s.normalize('NFKD').toLowerCase()) {
    if (!mark.test(ch)) out += ch;
    if (out.length >= 2) break;
  }
  return out;
}

/** Astral code points counted as emoji: the pictograph blocks, without skin-tone modifiers. */
export function isAstralEmoji(cp: number): boolean {
  return cp >= 0x1f000 && cp <= 0x1faff && !(cp >= 0x1f3fb && cp <= 0x1f3ff) && !isRegionalIndicator(cp);
}

/** Regional indicator letters: two of them make one flag. */
export function isRegionalIndicator(cp: number): boolean {
  return cp >= 0x1f1e6 && cp <= 0x1f1ff;
}
