// The similarity block: the normalised text, exact cosines on tiny examples worked by hand, the
// pruned query against a brute-force TF-IDF cosine over a random corpus, scores from weights,
// thresholds, several texts, the cap of ten matches, disabled rules and invalid examples.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IntMap } from '../../src/classifier/int-map.js';
import { analyzeSimilarity, createSimilarityIndex, SIMILARITY_RULES, type TrainingExample } from '../../src/classifier/similarity.js';
import { normalizeText } from '../../src/classifier/similarity-text.js';

const NONE: ReadonlySet<string> = new Set();
const ex = (id: string, text: string, threshold = 0.5, weight = 1): TrainingExample => ({ id, text, threshold, weight });

test('normalisation: accents, case, compatibility forms and punctuation runs; emoji kept', () => {
  assert.equal(normalizeText('Ünïcödé  CAFÉ!!! crème—brûlée 😀 x'), 'unicode cafe creme brulee 😀 x');
  assert.equal(normalizeText('½ ﬁne ＦＵＬＬ'), '1 2 fine full');
  assert.equal(normalizeText(' --- '), '');
});

test('exact cosines worked by hand', () => {
  // One example "abc": trigrams " ab", "abc", "bc ", each df 1 of N 1 → idf 1 + ln(2/2) = 1.
  // Text "abcd": " ab", "abc" (idf 1) and "bcd", "cd " (unseen: idf 1 + ln 2). Cosine =
  // (1 + 1) / (√3 × √(2 + 2 (1 + ln 2)²)).
  const index = createSimilarityIndex([ex('a', 'abc', 0)]);
  const cosine = 2 / (Math.sqrt(3) * Math.sqrt(2 + 2 * (1 + Math.LN2) ** 2));
  assert.equal(cosine.toFixed(3), '0.415');
  const block = analyzeSimilarity(index, ['abcd'], { disabled: NONE });
  assert.deepEqual(block.matches, [{ id: 'a', similarity: 0.415 }]);
  assert.deepEqual(block.rules, { SIMILARITY: { score: 1.66 } }, '4 × 1 × 0.415');
  assert.equal(block.score, 1.66);

  // Term frequency: "aaaa" has " aa", "aa " once and "aaa" twice (weight 1 + ln 2); "aaa" has each once.
  const tf = createSimilarityIndex([ex('t', 'aaaa', 0)]);
  const w = 1 + Math.LN2;
  const expected = (1 + w + 1) / (Math.sqrt(1 + w * w + 1) * Math.sqrt(3));
  assert.equal(analyzeSimilarity(tf, ['AAA!'], { disabled: NONE }).matches[0]!.similarity, Math.round(expected * 1000) / 1000);

  // Two examples: "hello" trigrams are in both (idf 1), the rest in one (idf 1 + ln(3/2)).
  const two = createSimilarityIndex([ex('world', 'hello world', 0), ex('there', 'Hello, there!', 0)]);
  const copy = analyzeSimilarity(two, ['HELLO   world'], { disabled: NONE });
  assert.deepEqual(copy.matches[0], { id: 'world', similarity: 1 });
  assert.equal(copy.score, 4);
  const common = [' he', 'hel', 'ell', 'llo', 'lo '];
  const rare = 1 + Math.log(3 / 2);
  const worldOnly = 6; // 'o w', ' wo', 'wor', 'orl', 'rld', 'ld '
  const thereOnly = 6; // 'o t', ' th', 'the', 'her', 'ere', 're '
  const hw = Math.sqrt(common.length + worldOnly * rare * rare);
  const ht = Math.sqrt(common.length + thereOnly * rare * rare);
  assert.equal(copy.matches[1]!.similarity, Math.round((common.length / (hw * ht)) * 1000) / 1000);
});

test('the pruned query equals a brute-force TF-IDF cosine (random corpus, random thresholds)', () => {
  let seed = 42;
  const rnd = (n: number) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed % n; };
  const vocab = Array.from({ length: 300 }, (_, i) => `w${i.toString(36)}${'xyz'[i % 3]}${i % 7}`);
  const sentence = (words: number) => Array.from({ length: words }, () => vocab[Math.min(rnd(300), rnd(300))]!).join(' ');
  const examples = Array.from({ length: 150 }, (_, i) => ex(`e${i}`, sentence(5 + rnd(30)), (30 + rnd(66)) / 100, 1));
  const index = createSimilarityIndex(examples);
  const brute = bruteForce(examples);
  let compared = 0;
  let matched = 0;
  for (let q = 0; q < 120; q++) {
    // Half the texts are an example with words changed, half fresh sentences.
    const base = examples[rnd(examples.length)]!.text.split(' ');
    for (let k = rnd(4); k > 0; k--) base[rnd(base.length)] = vocab[rnd(300)]!;
    const text = q % 2 === 0 ? base.join(' ') : sentence(10 + rnd(200));
    const cosines = brute(text);
    const expected = examples.map((e, d) => ({ d, c: cosines[d]! })).filter(({ d, c }) => c >= examples[d]!.threshold && c > 0.0005);
    if (expected.length > 10 || expected.some(({ d, c }) => Math.abs(c - examples[d]!.threshold) < 1e-4)) continue;
    expected.sort((a, b) => b.c - a.c);
    const got = analyzeSimilarity(index, [text], { disabled: NONE }).matches;
    assert.deepEqual(got.map((m) => m.id).sort(), expected.map(({ d }) => `e${d}`).sort(), text);
    for (const m of got) assert.ok(Math.abs(m.similarity - cosines[Number(m.id.slice(1))]!) <= 0.0006, `${m.id} ${m.similarity}`);
    compared++;
    matched += got.length;
  }
  assert.ok(compared >= 100 && matched >= 40, `${compared} texts, ${matched} matches`);
});

test('long examples and short texts (the query walks on instead of completing the examples): exact', () => {
  // Each example: three words of its own and 60 drawn from 50 shared ones. A text of one example's
  // own words and one shared word leaves few postings to walk but long examples to complete.
  let seed = 9;
  const rnd = (n: number) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed % n; };
  const filler = Array.from({ length: 50 }, (_, i) => `f${i}${'aeiou'[i % 5]}n`);
  const own = (i: number) => `zq${i}kx vb${i}wj hy${i}pt`;
  const examples = Array.from({ length: 20 }, (_, i) => ex(`e${i}`, `${own(i)} ${Array.from({ length: 60 }, () => filler[rnd(50)]).join(' ')}`, 0.2));
  const index = createSimilarityIndex(examples);
  const brute = bruteForce(examples);
  let matched = 0;
  for (let k = 0; k < 20; k++) {
    const text = `${own(k)} ${filler[k]}`;
    const cosines = brute(text);
    const expected = examples.map((e, d) => ({ id: e.id, c: cosines[d]! })).filter(({ c }) => c >= 0.2).sort((a, b) => b.c - a.c);
    const got = analyzeSimilarity(index, [text], { disabled: NONE }).matches;
    assert.deepEqual(got.map((m) => m.id), expected.map((e) => e.id), text);
    got.forEach((m, i) => assert.ok(Math.abs(m.similarity - expected[i]!.c) <= 0.0006));
    matched += got.length;
  }
  assert.ok(matched >= 20);
});

test('scores: 4 × weight × similarity, the best match counting; weight 0 matches without score', () => {
  const index = createSimilarityIndex([
    ex('half', 'cheap watches for sale', 0.5, 0.5), ex('double', 'cheap watches for sale today', 0.5, 2), ex('zero', 'cheap watches', 0.1, 0),
  ]);
  const block = analyzeSimilarity(index, ['cheap watches for sale'], { disabled: NONE });
  const byId = Object.fromEntries(block.matches.map((m) => [m.id, m.similarity]));
  assert.equal(byId.half, 1);
  assert.ok(byId.double! < 1 && byId.double! > 0.5);
  assert.ok('zero' in byId);
  assert.equal(block.rules.SIMILARITY!.score, Math.max(2, Math.round(4 * 2 * byId.double! * 100) / 100));
  assert.deepEqual(block.matches.map((m) => m.id), ['half', 'double', 'zero']);
});

test('thresholds, several texts (the best counts), the cap of ten and the order of matches', () => {
  const index = createSimilarityIndex([ex('strict', 'buy followers now', 1), ex('loose', 'buy followers now', 0.2)]);
  const near = analyzeSimilarity(index, ['buy followers now!!'], { disabled: NONE });
  assert.deepEqual(near.matches.map((m) => m.id), ['strict', 'loose'], 'punctuation is no difference');
  const changed = analyzeSimilarity(index, ['buy many followers now'], { disabled: NONE });
  assert.deepEqual(changed.matches.map((m) => m.id), ['loose']);
  const texts = analyzeSimilarity(index, ['hello', 'buy followers now'], { disabled: NONE });
  assert.deepEqual(texts.matches.map((m) => m.similarity), [1, 1]);

  const many = createSimilarityIndex(Array.from({ length: 15 }, (_, i) => ex(`m${i}`, `promo code ${'x'.repeat(i)}`, 0.1)));
  const capped = analyzeSimilarity(many, ['promo code'], { disabled: NONE });
  assert.equal(capped.matches.length, 10);
  for (let i = 1; i < capped.matches.length; i++) assert.ok(capped.matches[i - 1]!.similarity >= capped.matches[i]!.similarity);
  assert.equal(capped.matches[0]!.id, 'm0');
});

test('no examples, no letters, disabled rule, foreign index, invalid examples', () => {
  assert.deepEqual(SIMILARITY_RULES.map((r) => [r.name, r.score, r.dimension]), [['SIMILARITY', 4, 'similarity']]);
  const empty = analyzeSimilarity(createSimilarityIndex([]), ['anything'], { disabled: NONE });
  assert.deepEqual([empty.rules, empty.score, empty.matches], [{ SIMILARITY: { score: 0 } }, 0, []]);
  const index = createSimilarityIndex([ex('a', 'spam spam spam', 0)]);
  assert.deepEqual(analyzeSimilarity(index, ['!!! ...', ''], { disabled: NONE }).matches, []);
  assert.deepEqual(analyzeSimilarity(index, [], { disabled: NONE }).matches, []);
  const off = analyzeSimilarity(index, ['spam spam spam'], { disabled: new Set(['SIMILARITY']) });
  assert.deepEqual([off.rules, off.score, off.matches], [{}, 0, []]);
  assert.throws(() => analyzeSimilarity({ size: 1 }, ['x'], { disabled: NONE }), TypeError);
  for (const bad of [ex('', 'x'), ex('a', 'x', 1.5), ex('a', 'x', -0.1), ex('a', 'x', 0.5, Number.NaN), ex('a', 'x', 0.5, 11),
    { id: 'a', text: 42, threshold: 0.5, weight: 1 } as unknown as TrainingExample]) {
    assert.throws(() => createSimilarityIndex([bad]), RangeError, JSON.stringify(bad));
  }
});

test('IntMap: counts survive the table growing during add() (every key kept with its count)', () => {
  const map = new IntMap(4);
  for (let round = 1; round <= 3; round++) for (let k = 1; k <= 5000; k++) map.add(k * 2654435761 | 0 || 1, 1);
  assert.equal(map.size, 5000);
  let total = 0;
  map.forEach((_, v) => { assert.equal(v, 3); total += v; });
  assert.equal(total, 15_000);
  assert.equal(map.get(12345), -1);
  assert.throws(() => map.add(0, 1), RangeError);
});

/** Cosines of a text against each example, from strings: no hashing, no pruning, float64 throughout. */
function bruteForce(examples: readonly TrainingExample[]): (text: string) => number[] {
  const grams = (text: string) => {
    const s = normalizeText(text);
    const counts = new Map<string, number>();
    if (s === '') return counts;
    const p = ` ${s} `;
    for (let i = 0; i + 3 <= p.length; i++) counts.set(p.slice(i, i + 3), (counts.get(p.slice(i, i + 3)) ?? 0) + 1);
    return counts;
  };
  const docs = examples.map((e) => grams(e.text));
  const df = new Map<string, number>();
  for (const d of docs) for (const g of d.keys()) df.set(g, (df.get(g) ?? 0) + 1);
  const n = examples.length;
  const idf = (g: string) => 1 + Math.log((n + 1) / ((df.get(g) ?? 0) + 1));
  const vector = (counts: Map<string, number>) => {
    const v = new Map<string, number>();
    for (const [g, tf] of counts) v.set(g, (1 + Math.log(tf)) * idf(g));
    return v;
  };
  const norm = (v: Map<string, number>) => Math.sqrt([...v.values()].reduce((a, w) => a + w * w, 0));
  const vectors = docs.map(vector);
  return (text) => {
    const q = vector(grams(text));
    const qn = norm(q);
    return vectors.map((v) => {
      let dot = 0;
      for (const [g, w] of q) dot += w * (v.get(g) ?? 0);
      return qn === 0 ? 0 : dot / (qn * norm(v));
    });
  };
}
