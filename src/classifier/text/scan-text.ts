// One pass over the text, code unit by code unit, with a table lookup per character and no regular
// expression on the text: what every text rule needs is counted here (letters by case, '!',
// currency, emoji, hashtags, links, tags, injection shapes, words and their vocabulary hits,
// gibberish words, repeated characters and words, the sample for language detection). Look-aheads
// are bounded (a tag's attributes stop at the next '<' or after 2,048 characters, a quote's
// tautology window is 48 characters) or never revisit a character (a rejected domain chain is
// not parsed again), so the work is linear in the length of the text whatever it holds.
import { charTables, CURRENCY, DIGIT, EMOJI, isAstralEmoji, isRegionalIndicator, LETTER, LOWER, MARK, SPACE, UPPER } from './char-class.js';
import { canonicalWords, FNV_OFFSET, FNV_PRIME, LEET, mixWords } from './fold.js';
import { findEntry, PREFIX, SPECIAL, TERM, type Lexicon } from './lexicon.js';
import { bareDomainStart, domainChainEnd, mayStartUrl, schemeHostStart, urlEnd } from './link-shapes.js';
import {
  afterValueSemicolon, isBbLink, isDigitOrQuote, isHexColor, quoteShapes, SCRIPT, SQL, sqlContextBefore, startsWithLower, tagShapes,
} from './markup-shapes.js';

export { SCRIPT, SQL } from './markup-shapes.js';

/** Characters of the language sample (30–40 words): eld reads at most ~350 bytes, and its cost grows with them. */
const SAMPLE_CHARS = 200;
/** URLs whose host is looked at (shorteners, phishing); LINKS counts them all. */
export const MAX_CHECKED_URLS = 100;
const RUN_MIN = 10;
/** Word keys kept allocated between calls (256 KiB); a longer text grows the buffer for itself only. */
const MAX_KEPT_KEYS = 65_536;

export interface ScanModel {
  readonly lexicon: Lexicon;
  /** 1 for a letter trigram found in no Latin-script language, index (a << 10) | (b << 5) | c, letters 1–26. */
  readonly rareTrigrams: Uint8Array;
}

/** What one scan found. Fields are reset by scanText; read them before the next call. */
export class TextScan {
  upper = 0;
  lower = 0;
  exclamations = 0;
  currency = 0;
  emoji = 0;
  regional = 0;
  hashtags = 0;
  nonSpace = 0;
  /** Links (URLs with a scheme, www. hosts, bare domains with a common TLD). */
  urls = 0;
  urlChars = 0;
  /** Start and end of the first MAX_CHECKED_URLS links, and whether each lacks a scheme. */
  readonly urlSpans: number[] = [];
  readonly urlBare: boolean[] = [];
  tags = 0;
  linkMarkup = 0;
  script = 0;
  sql = 0;
  words = 0;
  gibberish = 0;
  runs = 0;
  longestRun = 0;
  adjacentRepeats = 0;
  /** Keys of the words, in order (the first `keyCount`). */
  keys = new Int32Array(1024);
  keyCount = 0;
  /** Lexicon entries confirmed in the text, each once. */
  readonly hits: number[] = [];
  readonly sample: string[] = [];
  sampleLength = 0;
  sampleWords = 0;
  sampleLetters = 0;

  reset(): void {
    this.upper = this.lower = this.exclamations = this.currency = this.emoji = this.regional = 0;
    this.hashtags = this.nonSpace = this.urls = this.urlChars = this.tags = this.linkMarkup = 0;
    this.script = this.sql = this.words = this.gibberish = this.runs = this.longestRun = 0;
    this.adjacentRepeats = this.keyCount = this.sampleLength = this.sampleWords = this.sampleLetters = 0;
    if (this.keys.length > MAX_KEPT_KEYS) this.keys = new Int32Array(1024); // let a huge text's buffer go
    this.urlSpans.length = 0;
    this.urlBare.length = 0;
    this.hits.length = 0;
    this.sample.length = 0;
  }
}

let stamps = new Uint32Array(0);
let call = 0;

/**
 * Scans `text`; words inside [sampleStart, sampleEnd) feed the language sample. The returned
 * object is reused by the next call.
 */
export function scanText(text: string, sampleStart: number, sampleEnd: number, model: ScanModel): TextScan {
  scanner.run(text, sampleStart, sampleEnd, model);
  return scanner.out;
}

class Scanner {
  readonly out = new TextScan();
  private text = '';
  private n = 0;
  private lexicon!: Lexicon;
  private cls: Uint8Array = new Uint8Array(0);
  private sampleStart = 0;
  private sampleEnd = 0;

  // The word that just ended (copied from run's locals before endWord).
  private wordStart = 0;
  private hash = 0;
  private letters = 0;
  private digits = 0;
  private symbols = 0;
  private transitions = 0;
  private units = 0;
  private badTrigrams = 0;
  private nonLatin = false;
  private firstUnit1 = 0;
  private firstUnit2 = 0;

  // Context across words.
  private prevKey = 0;
  private prevSpecial = 0;
  private prevSpecial2 = 0;
  private pendingStacked = 0;
  private active = new Int32Array(8);
  private activeStart = new Int32Array(8);
  private activeCount = 0;
  private nextActive = new Int32Array(8);
  private nextActiveStart = new Int32Array(8);
  private spacedLength = 0;
  private spacedStart = 0;
  private spacedEnd = 0;
  private spacedHash = 0;
  private chainEnd = 0;
  private afterUrl = 0;

  run(text: string, sampleStart: number, sampleEnd: number, model: ScanModel): void {
    const out = this.out;
    out.reset();
    this.text = text;
    this.n = text.length;
    this.lexicon = model.lexicon;
    this.sampleStart = sampleStart;
    this.sampleEnd = sampleEnd;
    this.prevKey = this.prevSpecial = this.prevSpecial2 = this.pendingStacked = 0;
    this.activeCount = this.spacedLength = this.chainEnd = 0;
    const entries = model.lexicon.canonical.length;
    if (stamps.length < entries) stamps = new Uint32Array(entries);
    if (this.active.length < model.lexicon.maxWords) {
      this.active = new Int32Array(model.lexicon.maxWords);
      this.activeStart = new Int32Array(model.lexicon.maxWords);
      this.nextActive = new Int32Array(model.lexicon.maxWords);
      this.nextActiveStart = new Int32Array(model.lexicon.maxWords);
    }
    call = (call + 1) >>> 0;
    if (call === 0) {
      stamps.fill(0);
      call = 1;
    }

    const { cls, fold1, fold2, mathFold } = charTables();
    this.cls = cls;
    const rare = model.rareTrigrams;
    const n = this.n;
    // Hot state lives in locals; a word's state is copied to fields when it ends.
    let inWord = false;
    let wordStart = 0;
    let hash = 0;
    let asciiLower = 0;
    let letters = 0;
    let units = 0;
    let digits = 0;
    let symbols = 0;
    let wordUpper = 0;
    let wordLower = 0;
    let transitions = 0;
    let trigram = 0;
    let badTrigrams = 0;
    let nonLatin = false;
    let firstUnit1 = 0;
    let firstUnit2 = 0;
    let hostRun = -1;
    let runCp = -1;
    let runLength = 0;
    let spaces = 0;
    let i = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      let bits: number;
      let u1: number;
      let u2 = 0;
      let width = 1;
      let cp = c;
      if (c < 0xd800 || c > 0xdfff) {
        bits = cls[c]!;
        u1 = fold1[c]!;
        if (u1 !== 0) u2 = fold2[c]!;
      } else {
        const lo = c <= 0xdbff && i + 1 < n ? text.charCodeAt(i + 1) : 0;
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          width = 2;
          cp = ((c - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
          u1 = cp >= 0x1d400 && cp <= 0x1d7ff ? mathFold[cp - 0x1d400]! : 0;
          bits = u1 === 0 ? (isAstralEmoji(cp) ? EMOJI : 0) : u1 >= 0x61 ? LETTER : DIGIT;
          if (isRegionalIndicator(cp)) out.regional++;
        } else {
          bits = 0; // a lone surrogate
          u1 = 0;
        }
      }

      if ((bits & (LETTER | DIGIT)) !== 0) {
        if (!inWord) {
          if (mayStartUrl(c, i + 1 < n ? text.charCodeAt(i + 1) : 0) && this.schemeUrl(i)) {
            i = this.afterUrl;
            hostRun = runCp = -1;
            continue;
          }
          inWord = true;
          wordStart = i;
          hash = FNV_OFFSET;
          asciiLower = letters = units = digits = symbols = wordUpper = wordLower = transitions = trigram = badTrigrams = 0;
          nonLatin = false;
          if (hostRun < 0) hostRun = i;
        }
        if ((bits & LETTER) !== 0) {
          letters++;
          if ((bits & UPPER) !== 0) {
            wordUpper++;
            if (i > wordStart && (cls[text.charCodeAt(i - 1)]! & LOWER) !== 0) {
              // camelCase: trigrams restart at each inner capital ("MsgChange" is "msg" + "change").
              transitions++;
              trigram = 0;
            }
          } else if ((bits & LOWER) !== 0) {
            wordLower++;
          }
          if (letters === 1 && asciiLower === 0 && digits === 0) {
            firstUnit1 = u1;
            firstUnit2 = u2;
          }
          hash = Math.imul(hash ^ u1, FNV_PRIME);
          if (u1 >= 0x61 && u1 <= 0x7a) {
            units++;
            trigram = ((trigram << 5) | (u1 - 0x60)) & 0x7fff;
            badTrigrams += rare[trigram]!;
          } else {
            nonLatin = true;
          }
          if (u2 !== 0) {
            hash = Math.imul(hash ^ u2, FNV_PRIME);
            units++;
            trigram = ((trigram << 5) | (u2 - 0x60)) & 0x7fff;
            badTrigrams += rare[trigram]!;
          }
        } else {
          digits++;
          hash = Math.imul(hash ^ u1, FNV_PRIME);
          trigram = 0;
        }
        i += width;
        // The lower-case ASCII letters that follow in the same word take this short loop: count,
        // hash, shift into the trigram index (most of the characters of most texts).
        while (i < n) {
          const d = text.charCodeAt(i);
          if (d < 0x61 || d > 0x7a) break;
          asciiLower++;
          hash = Math.imul(hash ^ d, FNV_PRIME);
          trigram = ((trigram << 5) | (d - 0x60)) & 0x7fff;
          badTrigrams += rare[trigram]!;
          i++;
        }
        continue;
      }
      if (inWord && (bits & MARK) !== 0) {
        i++;
        continue;
      }
      if (inWord && (c === 0x40 || c === 0x24) && (cls[text.charCodeAt(i - 1)]! & LETTER) !== 0 && i + 1 < n && (cls[text.charCodeAt(i + 1)]! & LETTER) !== 0) {
        // '@' or '$' inside a word ("vi@gra", "ca$ino").
        symbols++;
        hash = Math.imul(hash ^ c, FNV_PRIME);
        trigram = 0;
        i++;
        continue;
      }

      // Outside a word.
      if (inWord) {
        inWord = false;
        if (c === 0x2e && i >= this.chainEnd && hostRun >= 0 && this.bareDomain(i, hostRun)) {
          i = this.afterUrl;
          hostRun = runCp = -1;
          continue;
        }
        this.wordStart = wordStart;
        this.hash = hash;
        this.letters = letters + asciiLower;
        this.units = units + asciiLower;
        this.digits = digits;
        this.symbols = symbols;
        this.transitions = transitions;
        this.badTrigrams = badTrigrams;
        this.nonLatin = nonLatin;
        this.firstUnit1 = firstUnit1;
        this.firstUnit2 = firstUnit2;
        out.upper += wordUpper;
        out.lower += wordLower + asciiLower;
        this.endWord(i);
      }
      if (c !== 0x2d && c !== 0x2e) hostRun = -1;
      if (c <= 0x20 || (bits & SPACE) !== 0) {
        spaces++;
      } else if (c !== 0x2d && c !== 0x2e) {
        this.other(c, i, bits);
      }
      // Runs of one repeated emoji or symbol (letters and digits: endWord).
      if ((bits & (EMOJI | CURRENCY)) !== 0) {
        if (cp === runCp) runLength++;
        else {
          if (runLength >= RUN_MIN) this.endRun(runLength);
          runCp = cp;
          runLength = 1;
        }
      } else if (runCp >= 0) {
        if (runLength >= RUN_MIN) this.endRun(runLength);
        runCp = -1;
      }
      i += width;
    }
    if (inWord) {
      this.wordStart = wordStart;
      this.hash = hash;
      this.letters = letters + asciiLower;
      this.units = units + asciiLower;
      this.digits = digits;
      this.symbols = symbols;
      this.transitions = transitions;
      this.badTrigrams = badTrigrams;
      this.nonLatin = nonLatin;
      this.firstUnit1 = firstUnit1;
      this.firstUnit2 = firstUnit2;
      out.upper += wordUpper;
      out.lower += wordLower + asciiLower;
      this.endWord(n);
    }
    this.flushSpaced();
    if (runCp >= 0 && runLength >= RUN_MIN) this.endRun(runLength);
    out.nonSpace = n - spaces;
    out.emoji += out.regional >> 1;
    this.text = '';
  }

  private endWord(end: number): void {
    const out = this.out;
    const start = this.wordStart;
    const letters = this.letters;
    const leet = letters > 0 && (this.digits > 0 || this.symbols > 0);
    const key = leet ? this.leetKey(start, end) : this.hash;

    if (letters > 0) {
      out.words++;
      if (letters >= 6 && !leet && !this.nonLatin) {
        const bad = this.badTrigrams;
        const trigrams = this.units - 2 * (1 + this.transitions);
        if ((bad >= 3 && bad * 10 >= trigrams * 3) || (this.transitions >= 3 && this.transitions * 4 >= letters)) out.gibberish++;
      }
      if (key === this.prevKey && end - start >= 2) out.adjacentRepeats++;
      if (out.keyCount === out.keys.length) {
        const grown = new Int32Array(out.keys.length * 2);
        grown.set(out.keys);
        out.keys = grown;
      }
      out.keys[out.keyCount++] = key;
      if (out.sampleLength < SAMPLE_CHARS && !leet && this.digits === 0 && start >= this.sampleStart && end <= this.sampleEnd) {
        out.sample.push(this.text.slice(start, end));
        out.sampleLength += end - start + 1;
        out.sampleWords++;
        out.sampleLetters += letters;
      }
    }

    if (end - start >= RUN_MIN) this.wordRuns(start, end);
    if (letters === 1 && this.digits === 0 && end - start <= 2) this.spaced(start, end);
    else if (this.spacedLength !== 0) this.flushSpaced();

    this.prevKey = key;

    const lexicon = this.lexicon;
    const flags = lexicon.flags;
    let next = 0;
    let id = findEntry(lexicon, key);
    let code = 0;
    if (id >= 0) {
      const f = flags[id]!;
      if ((f & TERM) !== 0) this.confirm(id, start, end, false);
      if ((f & PREFIX) !== 0) {
        this.nextActive[next] = key;
        this.nextActiveStart[next++] = start;
      }
      code = lexicon.special[id]!;
    }
    for (let a = 0; a < this.activeCount; a++) {
      const phrase = mixWords(this.active[a]!, key);
      id = findEntry(lexicon, phrase);
      if (id < 0) continue;
      const f = flags[id]!;
      if ((f & TERM) !== 0) this.confirm(id, this.activeStart[a]!, end, false);
      if ((f & PREFIX) !== 0 && next < this.nextActive.length) {
        this.nextActive[next] = phrase;
        this.nextActiveStart[next++] = this.activeStart[a]!;
      }
    }
    if (next !== 0 || this.activeCount !== 0) {
      const swap = this.active;
      const swapStart = this.activeStart;
      this.active = this.nextActive;
      this.activeStart = this.nextActiveStart;
      this.nextActive = swap;
      this.nextActiveStart = swapStart;
      this.activeCount = next;
    }

    if (code !== 0 || this.pendingStacked !== 0) this.specialWord(code, start, end);
    this.prevSpecial2 = this.prevSpecial;
    this.prevSpecial = code;
  }

  /** The key of a word that mixes letters with digits, '@' or '$': those read through LEET. */
  private leetKey(start: number, end: number): number {
    const text = this.text;
    const { fold1, fold2, mathFold } = charTables();
    const cls = this.cls;
    let h = FNV_OFFSET;
    for (let k = start; k < end; k++) {
      const c = text.charCodeAt(k);
      let u1: number;
      let u2 = 0;
      if (c >= 0xd800 && c <= 0xdbff && k + 1 < end) {
        const cp = ((c - 0xd800) << 10) + (text.charCodeAt(k + 1) - 0xdc00) + 0x10000;
        k++;
        u1 = cp >= 0x1d400 && cp <= 0x1d7ff ? mathFold[cp - 0x1d400]! : 0;
        if (u1 === 0) continue;
      } else if ((cls[c]! & (LETTER | DIGIT)) !== 0) {
        u1 = fold1[c]!;
        u2 = fold2[c]!;
      } else if (c === 0x40 || c === 0x24) {
        u1 = c;
      } else {
        continue; // a combining mark
      }
      const leet = u1 < 128 ? LEET[u1]! : 0;
      h = Math.imul(h ^ (leet === 0 ? u1 : leet), FNV_PRIME);
      if (u2 !== 0) h = Math.imul(h ^ u2, FNV_PRIME);
    }
    return h;
  }

  /** Counts lexicon entry `id` once per scan, after checking the span really spells it. */
  private confirm(id: number, start: number, end: number, joined: boolean): void {
    if (stamps[id] === call) return;
    if (canonicalWords(this.text, start, end, joined) !== this.lexicon.canonical[id]) return;
    stamps[id] = call;
    this.out.hits.push(id);
  }

  /** Single letters a few characters apart are read as one word as well ("c a s i n o"). */
  private spaced(start: number, end: number): void {
    if (this.spacedLength > 0 && start - this.spacedEnd <= 3) {
      for (let k = this.spacedEnd; k < start; k++) {
        const c = this.text.charCodeAt(k);
        if (c === 0x0a || c === 0x0d) {
          this.flushSpaced();
          break;
        }
      }
    } else {
      this.flushSpaced();
    }
    if (this.spacedLength === 0) {
      this.spacedStart = start;
      this.spacedHash = FNV_OFFSET;
    }
    this.spacedHash = Math.imul(this.spacedHash ^ this.firstUnit1, FNV_PRIME);
    if (this.firstUnit2 !== 0) this.spacedHash = Math.imul(this.spacedHash ^ this.firstUnit2, FNV_PRIME);
    this.spacedLength++;
    this.spacedEnd = end;
  }

  private flushSpaced(): void {
    if (this.spacedLength >= 4) {
      const id = findEntry(this.lexicon, this.spacedHash);
      if (id >= 0 && (this.lexicon.flags[id]! & TERM) !== 0) this.confirm(id, this.spacedStart, this.spacedEnd, true);
    }
    this.spacedLength = 0;
  }

  private specialWord(code: number, start: number, end: number): void {
    const out = this.out;
    const text = this.text;
    const pending = this.pendingStacked;
    this.pendingStacked = 0;
    if (pending !== 0) {
      if ((pending === SPECIAL.DROP && code === SPECIAL.DROP_TARGET) || (pending === SPECIAL.DELETE && code === SPECIAL.FROM)
        || (pending === SPECIAL.INSERT && code === SPECIAL.INTO) || (pending === SPECIAL.EXEC && code === SPECIAL.XP)) {
        out.sql |= SQL.STACKED;
      }
    }
    switch (code) {
      case SPECIAL.CURRENCY_CODE:
        out.currency++;
        break;
      case SPECIAL.SCRIPT_SCHEME:
        if (end + 1 < this.n && text.charCodeAt(end) === 0x3a && text.charCodeAt(end + 1) > 0x20) out.script |= SCRIPT.SCHEME;
        break;
      case SPECIAL.DATA:
        if (startsWithLower(text, end, ':text/html')) out.script |= SCRIPT.SCHEME;
        break;
      case SPECIAL.DOCUMENT:
        if (startsWithLower(text, end, '.cookie') || startsWithLower(text, end, '.write(')) out.script |= SCRIPT.COOKIE;
        break;
      case SPECIAL.SELECT:
        if (this.prevSpecial === SPECIAL.UNION || (this.prevSpecial === SPECIAL.UNION_MODIFIER && this.prevSpecial2 === SPECIAL.UNION)) out.sql |= SQL.UNION;
        break;
      case SPECIAL.DROP:
      case SPECIAL.DELETE:
      case SPECIAL.INSERT:
      case SPECIAL.EXEC:
      case SPECIAL.SHUTDOWN:
        if (afterValueSemicolon(this.text, start)) {
          if (code === SPECIAL.SHUTDOWN) out.sql |= SQL.STACKED;
          else this.pendingStacked = code;
        }
        break;
      case SPECIAL.SLEEP:
        if (end + 1 < this.n && text.charCodeAt(end) === 0x28 && isDigitOrQuote(text.charCodeAt(end + 1)) && sqlContextBefore(text, start)) {
          out.sql |= SQL.TIME;
        }
        break;
      case SPECIAL.WAITFOR:
        if (startsWithLower(text, end, ' delay')) out.sql |= SQL.TIME;
        break;
      case SPECIAL.INFORMATION:
        if (startsWithLower(text, end, '_schema')) out.sql |= SQL.PROBE;
        break;
      case SPECIAL.XP:
        if (startsWithLower(text, end, '_cmdshell')) out.sql |= SQL.PROBE;
        break;
      case SPECIAL.SYSOBJECTS:
        out.sql |= SQL.PROBE;
        break;
      case SPECIAL.VERSION:
        if (start >= 2 && text.charCodeAt(start - 1) === 0x40 && text.charCodeAt(start - 2) === 0x40) out.sql |= SQL.PROBE;
        break;
    }
  }

  /** A statement start after a value: "1; DROP", "'; EXEC", ");DELETE" (not "the list; insert"). */
  /** Characters outside words. */
  private other(c: number, i: number, bits: number): void {
    const out = this.out;
    const text = this.text;
    if ((bits & EMOJI) !== 0) {
      out.emoji++;
      return;
    }
    if ((bits & CURRENCY) !== 0) {
      out.currency++;
      if (c === 0x24 && i + 6 < this.n && text.charCodeAt(i + 1) === 0x7b && startsWithLower(text, i + 2, 'jndi:')) out.script |= SCRIPT.JNDI;
      return;
    }
    switch (c) {
      case 0x21: // !
      case 0xff01:
        out.exclamations++;
        break;
      case 0x203c: // ‼
        out.exclamations += 2;
        break;
      case 0x23: // #
      case 0xff03:
        if (i + 1 < this.n && (this.cls[text.charCodeAt(i + 1)]! & LETTER) !== 0) {
          const before = i > 0 ? text.charCodeAt(i - 1) : 0x20;
          if (before !== 0x26 && (this.cls[before]! & (LETTER | DIGIT)) === 0 && !isHexColor(text, i + 1, this.cls)) out.hashtags++;
        }
        break;
      case 0x3c: // <
        tagShapes(text, i, out);
        break;
      case 0x5b: // [
        if (isBbLink(text, i)) out.linkMarkup++;
        break;
      case 0x27: // '
      case 0x22: // "
      case 0x60: // `
        out.sql |= quoteShapes(text, i);
        break;
    }
  }

  /** Runs of one repeated letter or digit inside a word ("aaaaaaaaaaaa", "0000000000"). */
  private wordRuns(start: number, end: number): void {
    const text = this.text;
    let run = 1;
    for (let k = start + 1; k < end; k++) {
      if (text.charCodeAt(k) === text.charCodeAt(k - 1)) run++;
      else {
        if (run >= RUN_MIN) this.endRun(run);
        run = 1;
      }
    }
    if (run >= RUN_MIN) this.endRun(run);
  }

  /** At a word start: http://, https://, ftp:// or www. links. */
  private schemeUrl(i: number): boolean {
    const text = this.text;
    const hostStart = schemeHostStart(text, i);
    if (hostStart < 0) return false;
    const end = urlEnd(text, hostStart, this.cls);
    if (end <= hostStart || text.charCodeAt(hostStart) === 0x2f) return false;
    this.addUrl(i, end, text.charCodeAt(i + 3) === 0x2e);
    return true;
  }

  /** After a word ending at '.': a bare domain with a common TLD; the chain of labels is read once. */
  private bareDomain(dot: number, hostRun: number): boolean {
    this.chainEnd = domainChainEnd(this.text, dot);
    const start = bareDomainStart(this.text, dot, this.chainEnd, hostRun, this.cls);
    if (start < 0) return false;
    const text = this.text;
    const j = this.chainEnd;
    const end = j < this.n && (text.charCodeAt(j) === 0x2f || text.charCodeAt(j) === 0x3a) ? urlEnd(text, j, this.cls) : j;
    this.addUrl(start, end, true);
    return true;
  }

  private addUrl(start: number, end: number, bare: boolean): void {
    const out = this.out;
    out.urls++;
    out.urlChars += end - start;
    if (out.urlBare.length < MAX_CHECKED_URLS) {
      out.urlSpans.push(start, end);
      out.urlBare.push(bare);
    }
    this.afterUrl = end;
    this.activeCount = 0;
    this.flushSpaced();
  }

  private endRun(length: number): void {
    this.out.runs++;
    if (length > this.out.longestRun) this.out.longestRun = length;
  }
}

const scanner = new Scanner();
