// A map from 32-bit integer keys (never 0) to 32-bit integer values in two typed arrays, open
// addressing with linear probing: for the similarity index's trigram hashes, where a Map of
// numbers costs several times the memory and time.

export class IntMap {
  #keys: Int32Array;
  #values: Int32Array;
  #mask: number;
  #size = 0;

  /** `capacity`: expected keys (grows as needed). */
  constructor(capacity: number) {
    let cap = 16;
    while (cap < capacity * 2) cap *= 2;
    this.#keys = new Int32Array(cap);
    this.#values = new Int32Array(cap);
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

  /** The slots: key 0 = empty; for loops that must not pay for a callback. Invalidated by set/add. */
  get keys(): Int32Array { return this.#keys; }
  get values(): Int32Array { return this.#values; }

  forEach(fn: (key: number, value: number) => void): void {
    const keys = this.#keys;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== 0) fn(keys[i]!, this.#values[i]!);
  }

  clear(): void {
    if (this.#size === 0) return;
    this.#keys.fill(0);
    this.#values.fill(0);
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
    this.#size++;
    return i;
  }

  #grow(): void {
    const keys = this.#keys;
    const values = this.#values;
    this.#keys = new Int32Array(keys.length * 2);
    this.#values = new Int32Array(keys.length * 2);
    this.#mask = this.#keys.length - 1;
    this.#size = 0;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== 0) this.set(keys[i]!, values[i]!);
  }
}
