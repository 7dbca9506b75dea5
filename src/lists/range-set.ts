// An immutable set of IP ranges answering "is this address listed?" in O(log n) with no allocation
// for IPv4: ranges sorted by start and merged (overlapping or adjacent ranges become one), kept in
// typed arrays, searched by bisection. IPv4 as two Uint32Arrays (start, end); IPv6 as big-endian
// 4×32-bit words (start, end), compared word by word, so a lookup needs no BigInt
// (bench/micro/ip-ranges.ts measures lookups and memory; numbers in docs/threats.md).
// Building sorts 1.5 million ranges in about a second: done in a worker thread
// (range-build-worker.ts), never on the request path.
import { ipv6Groups } from '../ip.js';
import { parseIPv4, type ParsedRanges } from './ip-ranges.js';

/** The typed arrays of a built set; transferable between threads. */
export interface RangeArrays {
  readonly v4Start: Uint32Array;
  readonly v4End: Uint32Array;
  /** 4 words per range. */
  readonly v6Start: Uint32Array;
  readonly v6End: Uint32Array;
}

export class RangeSet {
  readonly #a: RangeArrays;
  readonly #n4: number;
  readonly #n6: number;

  constructor(arrays: RangeArrays) {
    if (arrays.v4Start.length !== arrays.v4End.length || arrays.v6Start.length !== arrays.v6End.length || arrays.v6Start.length % 4 !== 0) {
      throw new RangeError('malformed range arrays');
    }
    this.#a = arrays;
    this.#n4 = arrays.v4Start.length;
    this.#n6 = arrays.v6Start.length / 4;
  }

  static readonly EMPTY = new RangeSet({ v4Start: new Uint32Array(0), v4End: new Uint32Array(0), v6Start: new Uint32Array(0), v6End: new Uint32Array(0) });

  /** Merged ranges held (after merging, fewer than the list's entries when they overlap). */
  get size(): number { return this.#n4 + this.#n6; }

  /** Bytes of the typed arrays. */
  get bytes(): number {
    const a = this.#a;
    return a.v4Start.byteLength + a.v4End.byteLength + a.v6Start.byteLength + a.v6End.byteLength;
  }

  get arrays(): RangeArrays { return this.#a; }

  /** `ip` as a uint32. */
  hasV4(ip: number): boolean {
    const found = lastAtOrBelow4(this.#a.v4Start, ip);
    return found >= 0 && this.#a.v4End[found]! >= ip;
  }

  /** `w` = 4 big-endian words. */
  hasV6(w: Uint32Array): boolean {
    const found = lastAtOrBelow6(this.#a.v6Start, w);
    return found >= 0 && compareWords(this.#a.v6End, found * 4, w) >= 0;
  }
}

/** Index of the last of the sorted `starts` at or below `x`, or -1 (binary search). */
export function lastAtOrBelow4(starts: Uint32Array, x: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= x) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
  }
  return found;
}

/** The same over sorted 4-word (IPv6) starts: index of the last at or below `w`, or -1. */
export function lastAtOrBelow6(starts: Uint32Array, w: Uint32Array): number {
  let lo = 0;
  let hi = starts.length / 4 - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compareWords(starts, mid * 4, w) <= 0) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
  }
  return found;
}

/** -1, 0, 1 as a[at..at+3] is below, equal to or above w. */
export function compareWords(a: Uint32Array, at: number, w: Uint32Array): number {
  for (let i = 0; i < 4; i++) {
    const x = a[at + i]!;
    const y = w[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * A client address in the form the sets search: `{family: 4, v4}` (IPv4 and IPv4-mapped IPv6),
 * `{family: 6}` with the words in `words`, or family 0 for text that is no address.
 */
export interface AddressKey {
  family: 0 | 4 | 6;
  v4: number;
  readonly words: Uint32Array;
}

export function newAddressKey(): AddressKey {
  return { family: 0, v4: 0, words: new Uint32Array(4) };
}

/** Fills `key` from `ip` (reused between lookups on one thread: no allocation for IPv4). */
export function addressKey(ip: string, key: AddressKey): AddressKey {
  const v4 = parseIPv4(ip);
  if (v4 >= 0) {
    key.family = 4;
    key.v4 = v4;
    return key;
  }
  const g = ipv6Groups(ip);
  if (g === null) {
    key.family = 0;
    return key;
  }
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) {
    key.family = 4;
    key.v4 = ((g[6]! << 16) | g[7]!) >>> 0;
    return key;
  }
  key.family = 6;
  for (let w = 0; w < 4; w++) key.words[w] = ((g[2 * w]! << 16) | g[2 * w + 1]!) >>> 0;
  return key;
}

/** Sorts and merges parsed ranges into the arrays of a RangeSet. */
export function buildRangeArrays(parsed: Pick<ParsedRanges, 'v4' | 'v6'>): RangeArrays {
  return { ...buildV4(parsed.v4), ...buildV6(parsed.v6) };
}

function buildV4(pairs: Uint32Array): Pick<RangeArrays, 'v4Start' | 'v4End'> {
  const n = pairs.length / 2;
  // One native numeric sort of start·64 + log2(size) (< 2^38, exact in a double): every parsed range
  // is a CIDR, so the size is a power of two and the key gives back both ends. No comparator calls.
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const start = pairs[2 * i]!;
    const size = pairs[2 * i + 1]! - start + 1;
    keys[i] = start * 64 + (31 - Math.clz32(size));
  }
  keys.sort();
  const starts = new Uint32Array(n);
  const ends = new Uint32Array(n);
  let m = -1;
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    const bits = k % 64;
    const start = (k - bits) / 64;
    const end = start + 2 ** bits - 1;
    if (m >= 0 && start <= ends[m]! + 1) {
      if (end > ends[m]!) ends[m] = end;
    } else {
      m++;
      starts[m] = start;
      ends[m] = end;
    }
  }
  return { v4Start: starts.slice(0, m + 1), v4End: ends.slice(0, m + 1) };
}

function buildV6(flat: Uint32Array): Pick<RangeArrays, 'v6Start' | 'v6End'> {
  const n = flat.length / 8;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((x, y) => {
    for (let w = 0; w < 4; w++) {
      const a = flat[8 * x + w]!;
      const b = flat[8 * y + w]!;
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  });
  const starts = new Uint32Array(n * 4);
  const ends = new Uint32Array(n * 4);
  const next = new Uint32Array(4);
  let m = -1;
  for (let j = 0; j < n; j++) {
    const i = order[j]!;
    const s = 8 * i;
    if (m >= 0 && adjacentOrOverlapping(ends, m * 4, flat, s)) {
      if (compareAt(flat, s + 4, ends, m * 4) > 0) ends.set(flat.subarray(s + 4, s + 8), m * 4);
      continue;
    }
    m++;
    next.set(flat.subarray(s, s + 4));
    starts.set(next, m * 4);
    ends.set(flat.subarray(s + 4, s + 8), m * 4);
  }
  return { v6Start: starts.slice(0, (m + 1) * 4), v6End: ends.slice(0, (m + 1) * 4) };
}

/** Does the range starting at flat[s..s+3] begin at or before end[at..at+3] + 1? */
function adjacentOrOverlapping(end: Uint32Array, at: number, flat: Uint32Array, s: number): boolean {
  if (compareAt(flat, s, end, at) <= 0) return true;
  // end + 1 == start: add one to end with carry and compare.
  let carry = 1;
  for (let w = 3; w >= 0; w--) {
    const sum = end[at + w]! + carry;
    const word = sum >>> 0;
    carry = sum > 0xffffffff ? 1 : 0;
    if (word !== flat[s + w]) return false;
  }
  return carry === 0;
}

function compareAt(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  for (let w = 0; w < 4; w++) {
    const x = a[i + w]!;
    const y = b[j + w]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
