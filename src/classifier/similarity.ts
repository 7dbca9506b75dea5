// The similarity block: how close the submitted texts are to an account's training examples
// (spam it has seen before). ALTCHA Sentinel compares MiniLM embeddings (SENTINEL-NOTES.md 1.7);
// Palisade compares character trigrams in process, without a model: TF-IDF vectors and their
// cosine. Trigrams catch what spam does to repeated text (reordered, reflowed, a word changed,
// accents, case or punctuation changed) though not paraphrase.
//
// Term weight = (1 + ln tf) × idf, idf = 1 + ln((N + 1) / (df + 1)) over the N examples (a trigram
// no example has: df = 0). The text's norm counts every trigram of it, so a long text that merely
// contains an example scores below 1. Texts: similarity-text.ts.
//
// An index is immutable and built once per set of examples (the caller caches it). A query is
// exact but does not compute every cosine: it walks the inverted index from the rarest trigram of
// the text on, and once the trigrams left could not lift an example the walk has not met to the
// lowest threshold (Cauchy–Schwarz: their share of the text's norm is below it), it stops; the
// examples met that can still reach their own threshold get the rest of their dot product from
// their own term lists, or, when that would read more, the walk goes on to the end (the prefix
// filter of Bayardo et al., "Scaling up all pairs similarity search", WWW 2007). Figures:
// bench/micro/classifier.ts.
import { IntMap } from './int-map.js';
import { countTrigrams } from './similarity-text.js';
import type { RuleDefinition, SimilarityBlock, SimilarityMatch } from './types.js';

export interface TrainingExample {
  readonly id: string;
  readonly text: string;
  /** Least cosine (0..1) at which the example matches. */
  readonly threshold: number;
  /** Multiplier of the score of a match (0..10; 1 = up to SIMILARITY's 4 points). */
  readonly weight: number;
}

export const SIMILARITY_RULES: readonly RuleDefinition[] = Object.freeze([{
  name: 'SIMILARITY', dimension: 'similarity', score: 4,
  description: 'A text is as similar as an example\'s threshold or more to one of the account\'s training examples (cosine of character-trigram TF-IDF vectors): 4 × the example\'s weight × the similarity (three decimals); the best match counts. An exact copy of an example of weight 1 scores 4, a similarity of 0.8 scores 3.2.',
}]);

const SCORE = 4;
const MAX_MATCHES = 10;
/** Float32 weights: a cosine may come out this much below its exact value. */
const EPSILON = 1e-6;

export interface SimilarityIndex {
  /** Examples in the index. */
  readonly size: number;
}

class Index implements SimilarityIndex {
  readonly size: number;
  readonly ids: readonly string[];
  readonly thresholds: Float64Array;
  readonly weights: Float64Array;
  readonly minThreshold: number;
  /** Trigram hash → term number; terms are numbered rarest first (by df, then first seen). */
  readonly terms: IntMap;
  readonly idf: Float64Array;
  /** Term t's postings: examples docs[termStart[t]..termStart[t+1]), weights divided by the example's norm. */
  readonly termStart: Int32Array;
  readonly docs: Int32Array;
  readonly docWeights: Float32Array;
  /** Example d's terms in ascending order: termsOf[docStart[d]..docStart[d+1]), weights as above. */
  readonly docStart: Int32Array;
  readonly termsOf: Int32Array;
  readonly termWeights: Float32Array;
  /** Σ termWeights² from each position to the end of its example: bounds what the terms not walked can add. */
  readonly suffixSq: Float32Array;
  /** idf of a trigram no example has. */
  readonly unseenIdf: number;

  constructor(examples: readonly TrainingExample[]) {
    const n = examples.length;
    this.size = n;
    this.thresholds = new Float64Array(n);
    this.weights = new Float64Array(n);
    const ids: string[] = [];
    const counted: IntMap[] = [];
    const first = new IntMap(1024); // hash → provisional number (order first seen)
    const df: number[] = [];
    examples.forEach((e, d) => {
      if (typeof e.id !== 'string' || e.id === '') throw new RangeError(`example ${d}: no id`);
      if (!(e.threshold >= 0 && e.threshold <= 1)) throw new RangeError(`example ${e.id}: threshold must be 0..1`);
      if (!(e.weight >= 0 && e.weight <= 10)) throw new RangeError(`example ${e.id}: weight must be 0..10`);
      if (typeof e.text !== 'string') throw new RangeError(`example ${e.id}: text must be a string`);
      ids.push(e.id);
      this.thresholds[d] = e.threshold;
      this.weights[d] = e.weight;
      const counts = countTrigrams(e.text, new IntMap(64));
      counted.push(counts);
      counts.forEach((hash) => {
        let t = first.get(hash);
        if (t < 0) { t = df.length; first.set(hash, t); df.push(0); }
        df[t]!++;
      });
    });
    this.ids = Object.freeze(ids);
    this.minThreshold = n === 0 ? 1 : Math.min(...this.thresholds);
    const byRarity = Array.from(df.keys()).sort((a, b) => df[a]! - df[b]! || a - b);
    const rank = new Int32Array(df.length);
    byRarity.forEach((provisional, t) => { rank[provisional] = t; });
    this.terms = new IntMap(df.length);
    first.forEach((hash, provisional) => this.terms.set(hash, rank[provisional]!));
    this.idf = new Float64Array(df.length);
    this.termStart = new Int32Array(df.length + 1);
    byRarity.forEach((provisional, t) => {
      this.idf[t] = 1 + Math.log((n + 1) / (df[provisional]! + 1));
      this.termStart[t + 1] = this.termStart[t]! + df[provisional]!;
    });
    const total = this.termStart[df.length]!;
    this.docs = new Int32Array(total);
    this.docWeights = new Float32Array(total);
    this.docStart = new Int32Array(n + 1);
    this.termsOf = new Int32Array(total);
    this.termWeights = new Float32Array(total);
    this.suffixSq = new Float32Array(total);
    const fill = this.termStart.slice(0, df.length);
    counted.forEach((counts, d) => {
      const own: [number, number][] = [];
      let norm = 0;
      counts.forEach((hash, tf) => {
        const t = this.terms.get(hash);
        const w = (1 + Math.log(tf)) * this.idf[t]!;
        own.push([t, w]);
        norm += w * w;
      });
      norm = Math.sqrt(norm);
      own.sort((a, b) => a[0] - b[0]);
      let at = this.docStart[d]!;
      for (const [t, w] of own) {
        const p = fill[t]!++;
        this.docs[p] = d;
        this.docWeights[p] = w / norm;
        this.termsOf[at] = t;
        this.termWeights[at] = w / norm;
        at++;
      }
      this.docStart[d + 1] = at;
      let sq = 0;
      for (let p = at - 1; p >= this.docStart[d]!; p--) {
        sq += this.termWeights[p]! * this.termWeights[p]!;
        this.suffixSq[p] = sq;
      }
    });
    this.unseenIdf = 1 + Math.log(n + 1);
    Object.freeze(this);
  }
}

/** Throws RangeError for an example without an id or text, or with a threshold or weight out of range. */
export function createSimilarityIndex(examples: readonly TrainingExample[]): SimilarityIndex {
  return new Index(examples);
}

export interface SimilarityOptions {
  /** Rule names not to run (the request's disableRules). */
  readonly disabled: ReadonlySet<string>;
}

/** Each text against every example; an example's similarity is its best over the texts. */
export function analyzeSimilarity(index: SimilarityIndex, texts: readonly string[], options: SimilarityOptions): SimilarityBlock {
  const started = performance.now();
  if (!(index instanceof Index)) throw new TypeError('not an index made by createSimilarityIndex');
  if (options.disabled.has('SIMILARITY')) return { rules: {}, score: 0, time: round2(performance.now() - started), matches: [] };
  const best = new Map<number, number>();
  if (index.size > 0) for (const text of texts) query(index, text, best);
  const found: { d: number; similarity: number }[] = [];
  for (const [d, cosine] of best) {
    const similarity = Math.min(1, Math.round(cosine * 1000) / 1000);
    if (similarity > 0) found.push({ d, similarity });
  }
  let score = 0;
  for (const f of found) score = Math.max(score, round2(SCORE * index.weights[f.d]! * f.similarity));
  found.sort((a, b) => b.similarity - a.similarity || a.d - b.d);
  const matches: SimilarityMatch[] = found.slice(0, MAX_MATCHES).map((f) => ({ id: index.ids[f.d]!, similarity: f.similarity }));
  return { rules: { SIMILARITY: { score } }, score, time: round2(performance.now() - started), matches };
}

/** 1 + ln(count) for the counts most trigrams of a text have: the same doubles, without a Math.log per trigram. */
const TF_TABLE_SIZE = 256;
const TF = Float64Array.from({ length: TF_TABLE_SIZE }, (_, c) => (c === 0 ? 0 : 1 + Math.log(c)));

// Scratch space of query(), allocated on first use and reused (a query runs to its end synchronously).
let counts: IntMap | null = null;
let queryTerms = new Int32Array(0);
let queryWeight = new Float64Array(0); // by term number; 0 = not in the text
let scores = new Float64Array(0); // by example; 0 = not met
let met = new Int32Array(0); // the examples met, in the order met
let metFrom = new Int32Array(0); // per example met: where its terms not walked start, -1 = it cannot match

/** Records in `best` each example that `text` matches, with its cosine when higher than before. */
function query(ix: Index, text: string, best: Map<number, number>): void {
  counts ??= new IntMap(4096);
  countTrigrams(text, counts);
  if (counts.size === 0) return;
  if (queryWeight.length < ix.idf.length) queryWeight = new Float64Array(ix.idf.length);
  if (scores.length < ix.size) { scores = new Float64Array(ix.size); met = new Int32Array(ix.size); metFrom = new Int32Array(ix.size); }
  if (queryTerms.length < counts.size) queryTerms = new Int32Array(counts.size * 2);
  let known = 0;
  let normSq = 0;
  let knownSq = 0;
  for (let n = 0; n < counts.size; n++) {
    const t = ix.terms.get(counts.keyAt(n));
    const c = counts.valueAt(n);
    const w = (c < TF_TABLE_SIZE ? TF[c]! : 1 + Math.log(c)) * (t < 0 ? ix.unseenIdf : ix.idf[t]!);
    normSq += w * w;
    if (t < 0) continue;
    queryTerms[known++] = t;
    queryWeight[t] = w;
    knownSq += w * w;
  }
  const terms = queryTerms.subarray(0, known).sort();
  const norm = Math.sqrt(normSq);
  const { termStart, thresholds } = ix;
  const sc = scores;
  const mt = met;
  const qw = queryWeight;
  const from = metFrom;
  let metCount = 0;
  // Walk the postings rarest term first while the terms left could still lift an example not met
  // yet to the lowest threshold (at most by their part of the text's norm: Cauchy–Schwarz).
  const lowest = (ix.minThreshold - EPSILON) * norm;
  let remainingSq = knownSq;
  let i = 0;
  for (; i < known; i++) {
    if (Math.sqrt(Math.max(0, remainingSq)) * (1 + EPSILON) < lowest) break;
    metCount = walk(ix, terms[i]!, metCount);
    remainingSq -= qw[terms[i]!]! * qw[terms[i]!]!;
  }
  if (i < known) {
    // The examples met that the terms left could still lift to their own threshold (at most by
    // |their part of the text| × |their part of the example|) need those terms: either from their
    // own term lists (from[m] on), or by walking the rest of the postings, whichever reads less.
    const cut = terms[i]!;
    const left = Math.sqrt(Math.max(0, remainingSq));
    let completing = 0;
    for (let m = 0; m < metCount; m++) {
      const d = mt[m]!;
      const at = firstAtOrAbove(ix, d, cut);
      const end = ix.docStart[d + 1]!;
      const open = at < end && sc[d]! + left * Math.sqrt(ix.suffixSq[at]!) * (1 + EPSILON) >= (thresholds[d]! - EPSILON) * norm;
      from[m] = open ? at : -1;
      if (open) completing += end - at;
    }
    let rest = 0;
    for (let k = i; k < known; k++) rest += termStart[terms[k]! + 1]! - termStart[terms[k]!]!;
    if (completing <= rest) {
      for (let m = 0; m < metCount; m++) if (from[m]! >= 0) sc[mt[m]!] += restOfDot(ix, from[m]!, ix.docStart[mt[m]! + 1]!);
    } else {
      for (; i < known; i++) metCount = walk(ix, terms[i]!, metCount);
    }
  }
  for (let m = 0; m < metCount; m++) {
    const d = mt[m]!;
    const dot = sc[d]!;
    sc[d] = 0;
    if (dot < (thresholds[d]! - EPSILON) * norm) continue;
    const cosine = dot / norm;
    if (cosine > (best.get(d) ?? 0)) best.set(d, cosine);
  }
  for (let k = 0; k < known; k++) qw[terms[k]!] = 0;
}

/** Adds term t's part to the scores of its examples, listing those met for the first time; returns the new count. */
function walk(ix: Index, t: number, metCount: number): number {
  const { termStart, docs, docWeights } = ix;
  const sc = scores;
  const mt = met;
  const w = queryWeight[t]!;
  let count = metCount;
  for (let p = termStart[t]!, end = termStart[t + 1]!; p < end; p++) {
    const d = docs[p]!;
    if (sc[d] === 0) mt[count++] = d;
    sc[d] += w * docWeights[p]!;
  }
  return count;
}

/** The position of example d's first term numbered `cut` or more (docStart[d + 1] when none is). */
function firstAtOrAbove(ix: Index, d: number, cut: number): number {
  const { termsOf } = ix;
  let lo = ix.docStart[d]!;
  let hi = ix.docStart[d + 1]!;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (termsOf[mid]! < cut) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Σ text weight × example weight over the example's terms at positions from..end (the terms not walked). */
function restOfDot(ix: Index, from: number, end: number): number {
  const { termsOf, termWeights } = ix;
  let dot = 0;
  for (let p = from; p < end; p++) dot += queryWeight[termsOf[p]!]! * termWeights[p]!;
  return dot;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
