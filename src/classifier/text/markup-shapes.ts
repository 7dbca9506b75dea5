// Markup and injection shapes read at one character of the text: an HTML tag at '<', an SQL
// comment or tautology at a quote, a statement after "value;". Each look-ahead is bounded (a tag's
// attributes stop at the next '<' or after 2,048 characters, a tautology window is 48 characters),
// so the scanner that calls these stays linear in the length of the text.
import { DIGIT, LETTER } from './char-class.js';
import { KNOWN_TAGS, SCRIPT_TAGS } from './markup-data.js';
import type { TextScan } from './scan-text.js';

/** Script-injection shapes (TextScan.script bits). */
export const SCRIPT = { TAG: 1, FRAME: 2, HANDLER: 4, SCHEME: 8, COOKIE: 16, JNDI: 32 } as const;
/** SQL-injection shapes (TextScan.sql bits). */
export const SQL = { TAUTOLOGY: 1, COMMENT: 2, UNION: 4, STACKED: 8, TIME: 16, PROBE: 32 } as const;

const MAX_TAG_ATTRIBUTES = 2048;
const TAUTOLOGY_WINDOW = 48;
// After "' OR": a = a with equal operands, quoted or not (the last quote is the application's own),
// or TRUE. Every quantifier is bounded and none is nested: a match attempt is a few hundred steps.
const TAUTOLOGY = /^\s{0,4}(?:(['"`]?)([a-z0-9_]{1,16})\1\s{0,4}(?:=|like)\s{0,4}['"`]?([a-z0-9_]{1,16})|true\b)/;

/** An HTML tag at text[i] === '<': counts known tags and link markup, sets script shapes. */
export function tagShapes(text: string, i: number, out: TextScan): void {
  const n = text.length;
  let j = i + 1;
  const closing = j < n && text.charCodeAt(j) === 0x2f;
  if (closing) j++;
  const nameStart = j;
  while (j < n && j - nameStart <= 10 && isAsciiAlnum(text.charCodeAt(j))) j++;
  if (j === nameStart || !isAsciiLetter(text.charCodeAt(nameStart))) return;
  if (j < n) {
    const after = text.charCodeAt(j);
    if (after !== 0x3e && after !== 0x2f && after !== 0x20 && after !== 0x09 && after !== 0x0a && after !== 0x0d && after !== 0x0c) return;
  }
  const name = text.slice(nameStart, j).toLowerCase();
  if (KNOWN_TAGS.has(name)) out.tags++;
  if (closing) return;
  const shape = SCRIPT_TAGS.get(name);
  if (shape !== undefined) out.script |= shape;
  // Attributes, up to the tag's end, the next '<' or the bound: href, and on…= handlers.
  const limit = Math.min(n, j + MAX_TAG_ATTRIBUTES);
  let href = false;
  for (let k = j; k < limit; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x3e || c === 0x3c) break;
    if (c !== 0x6f && c !== 0x4f && c !== 0x68 && c !== 0x48) continue;
    const before = text.charCodeAt(k - 1);
    if (before !== 0x20 && before !== 0x2f && before !== 0x22 && before !== 0x27 && before !== 0x09 && before !== 0x0a && before !== 0x0d) continue;
    if ((c | 0x20) === 0x68) {
      if (startsWithLower(text, k, 'href')) href = true;
      continue;
    }
    if (k + 1 >= limit || (text.charCodeAt(k + 1) | 0x20) !== 0x6e) continue;
    let m = k + 2;
    while (m < limit && isAsciiLetter(text.charCodeAt(m))) m++;
    if (m - k - 2 >= 3) {
      let e = m;
      while (e < limit && (text.charCodeAt(e) === 0x20 || text.charCodeAt(e) === 0x09)) e++;
      if (e < limit && text.charCodeAt(e) === 0x3d) out.script |= SCRIPT.HANDLER;
    }
    k = m - 1;
  }
  if (href && name === 'a') out.linkMarkup++;
}

/** SQL bits of a quote at text[i]: a comment after a value ("admin'--") or a tautology ("' OR 1=1"). */
export function quoteShapes(text: string, i: number): number {
  const n = text.length;
  if (text.charCodeAt(i) === 0x27 && i > 0) {
    const before = text.charCodeAt(i - 1);
    const c1 = i + 1 < n ? text.charCodeAt(i + 1) : 0;
    const c2 = i + 2 < n ? text.charCodeAt(i + 2) : 0;
    const c3 = i + 3 < n ? text.charCodeAt(i + 3) : 0x20;
    if ((isAsciiAlnum(before) || before === 0x29)
      && ((c1 === 0x2d && c2 === 0x2d && c3 <= 0x20) || (c1 === 0x2f && c2 === 0x2a) || (c1 === 0x23 && c2 <= 0x20))) {
      return SQL.COMMENT;
    }
  }
  let k = i + 1;
  while (k < n && k - i <= 4 && text.charCodeAt(k) === 0x20) k++;
  let after: number;
  if (startsWithLower(text, k, 'or')) after = k + 2;
  else if (startsWithLower(text, k, 'and')) after = k + 3;
  else if (startsWithLower(text, k, '||')) after = k + 2;
  else return 0;
  if (after < n && isAsciiAlnum(text.charCodeAt(after))) return 0;
  const m = TAUTOLOGY.exec(text.slice(after, Math.min(n, after + TAUTOLOGY_WINDOW)).toLowerCase());
  return m !== null && (m[2] === undefined || m[2] === m[3]) ? SQL.TAUTOLOGY : 0;
}

/** A statement after a value and ';' before text[start]: "1; DROP", "'; EXEC", ");DELETE" (not "the list; insert"). */
export function afterValueSemicolon(text: string, start: number): boolean {
  let k = start - 1;
  while (k >= 0 && k >= start - 8 && isBlank(text.charCodeAt(k))) k--;
  if (k < 0 || text.charCodeAt(k) !== 0x3b) return false;
  k--;
  while (k >= 0 && isBlank(text.charCodeAt(k))) {
    if (k < start - 16) return false;
    k--;
  }
  if (k < 0) return true;
  const c = text.charCodeAt(k);
  return (c >= 0x30 && c <= 0x39) || c === 0x27 || c === 0x22 || c === 0x60 || c === 0x29;
}

/**
 * A time-based probe's context before text[start] ("' AND SLEEP(5)", "1 OR SLEEP(5)", "'; SELECT
 * SLEEP(5)", "(SELECT … BENCHMARK(", "=SLEEP(", "'||SLEEP("): a quote, ';', '(', ',', '=' or '|' just
 * before, or the word AND, OR or SELECT; not a program's "await sleep(250)". Looks back at most 16
 * characters.
 */
export function sqlContextBefore(text: string, start: number): boolean {
  let k = start - 1;
  while (k >= 0 && k >= start - 8 && isBlank(text.charCodeAt(k))) k--;
  if (k < 0) return false;
  const c = text.charCodeAt(k);
  if (c === 0x27 || c === 0x22 || c === 0x3b || c === 0x28 || c === 0x2c || c === 0x3d || c === 0x7c) return true;
  const wordEnd = k + 1;
  while (k >= 0 && wordEnd - k <= 6 && isAsciiLetter(text.charCodeAt(k))) k--;
  if (k >= 0 && isAsciiAlnum(text.charCodeAt(k))) return false;
  const word = text.slice(k + 1, wordEnd).toLowerCase();
  return word === 'and' || word === 'or' || word === 'select';
}

/** A BBCode link at '[': "[url]", "[url=", "[link]", "[link=" in any case. */
export function isBbLink(text: string, i: number): boolean {
  return (startsWithLower(text, i + 1, 'url') && isAny(text.charCodeAt(i + 4), 0x3d, 0x5d))
    || (startsWithLower(text, i + 1, 'link') && isAny(text.charCodeAt(i + 5), 0x3d, 0x5d));
}

/** "#fff", "#FF00AA", "#ff00aa80" from text[from] on: a colour, no hashtag. */
export function isHexColor(text: string, from: number, cls: Uint8Array): boolean {
  const n = text.length;
  let j = from;
  while (j < n && j - from <= 8 && isHexDigit(text.charCodeAt(j))) j++;
  const length = j - from;
  if (length !== 3 && length !== 4 && length !== 6 && length !== 8) return false;
  return j >= n || (cls[text.charCodeAt(j)]! & (LETTER | DIGIT)) === 0;
}

/** Whether text[i…] starts with `lower` (ASCII, given in lower case), ignoring ASCII case. */
export function startsWithLower(text: string, i: number, lower: string): boolean {
  if (i < 0 || i + lower.length > text.length) return false;
  for (let k = 0; k < lower.length; k++) {
    let c = text.charCodeAt(i + k);
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== lower.charCodeAt(k)) return false;
  }
  return true;
}

export function isAsciiLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

export function isAsciiAlnum(c: number): boolean {
  return isAsciiLetter(c) || (c >= 0x30 && c <= 0x39);
}

export function isDigitOrQuote(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x27 || c === 0x22;
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function isHexDigit(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}

function isAny(c: number, a: number, b: number): boolean {
  return c === a || c === b;
}
