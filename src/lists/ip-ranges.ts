// Lists of one IP address or CIDR per line (FireHOL .netset/.ipset, plain .txt): `#` starts a
// comment (whole line or after the entry), blank lines are skipped, anything else that is not an
// address or CIDR is a bad line (counted, skipped). A CIDR whose host bits are set is taken as its
// network (1.2.3.4/24 = 1.2.3.0/24), as ipset does. A /0 would list every address: refused as bad.
// IPv4-mapped IPv6 (::ffff:a.b.c.d, /96 or longer) is stored as the IPv4 range it names.
import { ipv6Groups } from '../ip.js';

/** Parsed ranges, before sorting: IPv4 as start/end pairs, IPv6 as start(4 words)/end(4 words) octets. */
export interface ParsedRanges {
  /** [start0, end0, start1, end1, …], uint32 each. */
  readonly v4: Uint32Array;
  /** [s0w0..s0w3, e0w0..e0w3, …], big-endian 32-bit words. */
  readonly v6: Uint32Array;
  /** Lines that named an address or CIDR. */
  readonly entries: number;
  /** Lines skipped as neither comment, blank, address nor CIDR (or a /0). */
  readonly bad: number;
}

/** Parses a whole list. Allocation is proportional to the entries, not the lines. */
export function parseIpRanges(text: string): ParsedRanges {
  let v4 = new Uint32Array(1024);
  let v6 = new Uint32Array(64);
  let n4 = 0;
  let n6 = 0;
  let bad = 0;
  const words = new Uint32Array(8);
  let pos = 0;
  while (pos < text.length) {
    let eol = text.indexOf('\n', pos);
    if (eol < 0) eol = text.length;
    let line = text.slice(pos, eol);
    pos = eol + 1;
    const hash = line.indexOf('#');
    if (hash >= 0) line = line.slice(0, hash);
    line = line.trim();
    if (line === '') continue;
    const family = parseRangeInto(line, words);
    if (family === 4) {
      if (n4 + 2 > v4.length) v4 = grow(v4);
      v4[n4++] = words[0]!;
      v4[n4++] = words[1]!;
    } else if (family === 6) {
      if (n6 + 8 > v6.length) v6 = grow(v6);
      v6.set(words, n6);
      n6 += 8;
    } else {
      bad++;
    }
  }
  return { v4: v4.slice(0, n4), v6: v6.slice(0, n6), entries: n4 / 2 + n6 / 8, bad };
}

/** Counts the lines that are neither blank nor comments (the entry limit of a download). */
export function countListLines(text: string): number {
  let count = 0;
  let pos = 0;
  while (pos < text.length) {
    let eol = text.indexOf('\n', pos);
    if (eol < 0) eol = text.length;
    let i = pos;
    while (i < eol && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 13)) i++;
    if (i < eol && text.charCodeAt(i) !== 35 /* # */) count++;
    pos = eol + 1;
  }
  return count;
}

/**
 * One entry into `out`: IPv4 → out[0] start, out[1] end, returns 4; IPv6 → out[0..3] start,
 * out[4..7] end, returns 6; not an entry (or a /0) → 0.
 */
export function parseRangeInto(entry: string, out: Uint32Array): 0 | 4 | 6 {
  const slash = entry.indexOf('/');
  const addr = slash < 0 ? entry : entry.slice(0, slash);
  let bits: number;
  if (addr.includes(':')) {
    const groups = ipv6Groups(addr);
    if (groups === null) return 0;
    bits = slash < 0 ? 128 : prefixLength(entry.slice(slash + 1), 128);
    if (bits <= 0) return 0;
    const mapped = groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff;
    if (mapped && bits >= 96) {
      return v4Range(((groups[6]! << 16) | groups[7]!) >>> 0, bits - 96, out);
    }
    for (let w = 0; w < 4; w++) {
      const word = ((groups[2 * w]! << 16) | groups[2 * w + 1]!) >>> 0;
      const keep = Math.max(0, Math.min(32, bits - 32 * w));
      const mask = keep === 0 ? 0 : keep === 32 ? 0xffffffff : (0xffffffff << (32 - keep)) >>> 0;
      out[w] = (word & mask) >>> 0;
      out[4 + w] = (out[w]! | (~mask >>> 0)) >>> 0;
    }
    return 6;
  }
  const ip = parseIPv4(addr);
  if (ip < 0) return 0;
  bits = slash < 0 ? 32 : prefixLength(entry.slice(slash + 1), 32);
  return v4Range(ip, bits, out);
}

function v4Range(ip: number, bits: number, out: Uint32Array): 0 | 4 {
  if (bits <= 0) return 0;
  const mask = bits === 32 ? 0xffffffff : (0xffffffff << (32 - bits)) >>> 0;
  out[0] = (ip & mask) >>> 0;
  out[1] = (out[0]! | (~mask >>> 0)) >>> 0;
  return 4;
}

/** 0..max from decimal digits only; -1 otherwise. */
function prefixLength(text: string, max: number): number {
  if (text.length === 0 || text.length > 3) return -1;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n <= max ? n : -1;
}

/** Dotted-quad IPv4 (no leading zeros beyond a lone 0) as a uint32, or -1. Allocates nothing. */
export function parseIPv4(text: string): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return -1;
      octet = octet * 10 + (c - 48);
      if (octet > 255 || ++digits > 3) return -1;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + octet;
}

function grow(a: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(a.length * 2);
  b.set(a);
  return b;
}
