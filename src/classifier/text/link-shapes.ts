// Links as the scanner finds them: a scheme or "www." at a word start, or a bare "name.tld" after
// a word that ends at a dot. A link ends at white space or a character URLs cannot hold unescaped;
// trailing punctuation is left out. Each function reads forward from where it is called only.
import { DIGIT, LETTER, SPACE } from './char-class.js';
import { isBareDomainTld } from './markup-data.js';
import { isAsciiAlnum, startsWithLower } from './markup-shapes.js';

const URL_STOP = new Uint8Array(128);
for (const ch of '<>"\'`{}|\\^[]') URL_STOP[ch.charCodeAt(0)] = 1;
URL_STOP[0x7f] = 1;
const URL_TRAIL = new Uint8Array(0x10000);
for (const ch of '.,;:!?)*\'"') URL_TRAIL[ch.charCodeAt(0)] = 1;

/** "ht…", "ww…" or "ft…" in any case: the only word starts schemeHostStart needs to look at. */
export function mayStartUrl(c: number, next: number): boolean {
  const c1 = c | 0x20;
  const c2 = next | 0x20;
  return ((c1 === 0x68 || c1 === 0x66) && c2 === 0x74) || (c1 === 0x77 && c2 === 0x77);
}

/** Where the host starts after "https://", "http://", "www." or "ftp://" at text[i], else −1. */
export function schemeHostStart(text: string, i: number): number {
  if (startsWithLower(text, i, 'https://')) return i + 8;
  if (startsWithLower(text, i, 'http://')) return i + 7;
  if (startsWithLower(text, i, 'www.')) return i + 4;
  if (startsWithLower(text, i, 'ftp://')) return i + 6;
  return -1;
}

/** The end of a link whose host or path continues at `from`. */
export function urlEnd(text: string, from: number, cls: Uint8Array): number {
  const n = text.length;
  let j = from;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c <= 0x20 || (c < 0x80 && URL_STOP[c] === 1) || (c >= 0x80 && (cls[c]! & SPACE) !== 0)) break;
    j++;
  }
  while (j > from && URL_TRAIL[text.charCodeAt(j - 1)] === 1) j--;
  return j;
}

/** The end of the chain of host labels ".a.b-c.d" that starts at the dot text[dot]. */
export function domainChainEnd(text: string, dot: number): number {
  const n = text.length;
  let j = dot;
  while (j < n && text.charCodeAt(j) === 0x2e) {
    const labelStart = j + 1;
    let k = labelStart;
    while (k < n && k - labelStart < 63 && isHostChar(text.charCodeAt(k))) k++;
    if (k === labelStart) break;
    j = k;
  }
  return j;
}

/**
 * The start of a bare domain "name.tld" whose first dot is text[dot] and whose labels end at
 * chainEnd, or −1: the name runs from hostRun (skipping hyphens), is no e-mail address and follows
 * no '.', '/', '\' or ':'; the TLD is a common one, in lower case ("ASP.NET" is no link).
 */
export function bareDomainStart(text: string, dot: number, chainEnd: number, hostRun: number, cls: Uint8Array): number {
  const labelStart = text.lastIndexOf('.', chainEnd - 1) + 1;
  if (hostRun < 0 || labelStart <= dot || chainEnd - labelStart > 24) return -1;
  let start = hostRun;
  while (start < dot && text.charCodeAt(start) === 0x2d) start++;
  if (start >= dot) return -1;
  if (start > 0) {
    const before = text.charCodeAt(start - 1);
    if (before === 0x40 || before === 0x2e || before === 0x2f || before === 0x5c || before === 0x3a) return -1;
  }
  for (let k = start; k < dot; k++) if (text.charCodeAt(k) === 0x40) return -1; // an e-mail address
  if (chainEnd < text.length && (cls[text.charCodeAt(chainEnd)]! & (LETTER | DIGIT)) !== 0) return -1;
  for (let k = labelStart; k < chainEnd; k++) {
    const c = text.charCodeAt(k);
    if (c < 0x61 || c > 0x7a) return -1;
  }
  return isBareDomainTld(text.slice(labelStart, chainEnd)) ? start : -1;
}

function isHostChar(c: number): boolean {
  return isAsciiAlnum(c) || c === 0x2d;
}
