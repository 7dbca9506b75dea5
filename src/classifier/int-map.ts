// A map from 32-bit integer keys (never 0) to 32-bit integer values in typed arrays, open
// addressing with linear probing: for the similarity index's trigram hashes, where a Map of
// numbers costs several times the memory and time. The occupied slots are also listed in order of
// insertion, so iterating and clearing cost the keys held, not the table's size (a scratch map
// grown by one long text stays cheap for the short ones after it).

export class IntMap {
  #keys: Int32Array;
  #values: Int32Array;
  /** Slots in use, first `#size` of them. */
  #used: Int32Array;
  #mask: number;
  #size = 0;

  /** `capacity`: expected keys (grows as needed). */
  constructor(capacity: number) {
    let cap = 16;
    while (cap < capacity * 2) cap *= 2;
    this.#keys = new Int32Array(cap);
    this.#values = new Int32Array(cap);
    this.#used = new Int32Array(cap / 2);
    this.#mask = cap - 1;
  }

  get size(): number { return this.#size; }

  /** The value of `key`, or -1. */
  get(key: number): number {
    let i = key & this.#mask;
    for (;;) {
      const k = this.#keys[i]!;
      if (k === key) return this.#values[i]!;
      if (k === 0) return -1;
      i = (i + 1) & this.#mask;
    }
  }

  set(key: number, value: number): void {
    const i = this.#slot(key); // first: it may grow the arrays
    this.#values[i] = value;
  }

  /** Adds `delta` to the value of `key` (0 when absent). */
  add(key: number, delta: number): void {
    const i = this.#slot(key); // first: it may grow the arrays
    this.#values[i] += delta;
  }

  /** The n-th key inserted (0 ≤ n < size) and its value: a loop without a callback. */
  keyAt(n: number): number { return this.#keys[this.#used[n]!]!; }
  valueAt(n: number): number { return this.#values[this.#used[n]!]!; }

  forEach(fn: (key: number, value: number) => void): void {
    for (let n = 0; n < this.#size; n++) fn(this.#keys[this.#used[n]!]!, this.#values[this.#used[n]!]!);
  }

  clear(): void {
    for (let n = 0; n < this.#size; n++) {
      this.#keys[this.#used[n]!] = 0;
      this.#values[this.#used[n]!] = 0;
    }
    this.#size = 0;
  }

  /** The slot of `key`, inserted (value 0) when absent. */
  #slot(key: number): number {
    if (key === 0) throw new RangeError('IntMap keys are never 0');
    let i = key & this.#mask;
    for (;;) {
      const k = this.#keys[i]!;
      if (k === key) return i;
      if (k === 0) break;
      i = (i + 1) & this.#mask;
    }
    if ((this.#size + 1) * 2 > this.#keys.length) {
      this.#grow();
      return this.#slot(key);
    }
    this.#keys[i] = key;
    this.#used[this.#size++] = i;
    return i;
  }

  #grow(): void {
    const keys = this.#keys;
    const values = this.#values;
    const used = this.#used;
    const size = this.#size;
    this.#keys = new Int32Array(keys.length * 2);
    this.#values = new Int32Array(keys.length * 2);
    this.#used = new Int32Array(keys.length);
    this.#mask = this.#keys.length - 1;
    this.#size = 0;
    for (let n = 0; n < size; n++) this.set(keys[used[n]!]!, values[used[n]!]!);
  }
}
