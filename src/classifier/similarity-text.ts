// The text side of the similarity block (similarity.ts): the normalised form texts are compared
// in and their character trigrams, hashed to 32-bit integers. Normalisation: NFKD, lower case,
// combining marks dropped (é = e), every run of characters that are neither letters nor digits one
// space, and a space at each end, so word starts and ends make trigrams of their own. UTF-16 units
// outside the BMP (surrogates: emoji, rare scripts) count as letters. Each call walks the text once
// through a table of character classes built on first use (about 10 ms), without regular
// expressions (a Unicode-property regex costs ten times as much per character).
import { IntMap } from './int-map.js';

/** Characters of one text looked at (longer ones are cut). */
export const MAX_TEXT = 65_536;

/** The normalised form a text is compared in, without the spaces at the ends (for tests and docs). */
export function normalizeText(text: string): string {
  const length = normalize(text);
  let out = '';
  for (let i = 0; i < length; i += 4096) out += String.fromCharCode(...buffer.subarray(i, Math.min(length, i + 4096)));
  return out.trim();
}

/** Trigram hash → count, of ` normalised text ` (into `into`, cleared first). */
export function countTrigrams(text: string, into: IntMap): IntMap {
  into.clear();
  const length = normalize(text);
  const units = buffer;
  for (let i = 2; i < length; i++) into.add(trigramHash(units[i - 2]!, units[i - 1]!, units[i]!), 1);
  return into;
}

/** The UTF-16 units of the last normalize() (reused: the callers above read it at once). */
let buffer = new Uint16Array(0);

/** Writes ` normalised text ` into `buffer` and returns its length (0 for a text without letters or digits). */
function normalize(text: string): number {
  const classes = characterClasses();
  const s = text.slice(0, MAX_TEXT).normalize('NFKD').toLowerCase();
  if (buffer.length < s.length + 2) buffer = new Uint16Array(s.length + 2);
  const out = buffer;
  let n = 0;
  let space = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const kind = classes[c]!;
    if (kind === MARK) continue;
    if (kind === SEPARATOR) {
      if (!space) { out[n++] = 0x20; space = true; }
      continue;
    }
    if (n === 0) out[n++] = 0x20;
    out[n++] = c;
    space = false;
  }
  if (n > 0 && !space) out[n++] = 0x20;
  return n;
}

const SEPARATOR = 0;
const WORD = 1;
const MARK = 2;
let classTable: Uint8Array | undefined;

/** Per UTF-16 unit: letter or digit, combining mark, or neither; built once (about 10 ms). */
function characterClasses(): Uint8Array {
  if (classTable !== undefined) return classTable;
  const table = new Uint8Array(65_536);
  const word = /[\p{L}\p{N}]/u;
  const mark = /\p{M}/u;
  for (let c = 0; c < 65_536; c++) {
    if (c >= 0xd800 && c <= 0xdfff) { table[c] = WORD; continue; }
    const ch = String.fromCharCode(c);
    table[c] = word.test(ch) ? WORD : mark.test(ch) ? MARK : SEPARATOR;
  }
  classTable = table;
  return table;
}

/**
 * The three UTF-16 units hashed to 32 bits, never 0 (IntMap's empty key): the first two packed
 * exactly, the third multiplied in, then one multiply–xorshift round so every input bit reaches
 * the low bits IntMap probes with. About 3 ns; a collision only merges two trigrams' counts.
 */
export function trigramHash(a: number, b: number, c: number): number {
  let h = (a | (b << 16)) ^ Math.imul(c, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h ^= h >>> 13;
  return h === 0 ? 1 : h;
}
