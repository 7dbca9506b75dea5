// Argument checks of the addon's wrappers: every argument is checked before it crosses into C++, so
// the C++ side can trust types and lengths. Wrong types throw a TypeError (code
// ERR_INVALID_ARG_TYPE), out-of-range numbers a RangeError (ERR_OUT_OF_RANGE); messages never
// contain argument values, which may be secrets.

/** Bytes for keys, passwords and salts: strings become their UTF-8 encoding. */
export function bytes(name: string, value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  throw argType(name, 'a Buffer, Uint8Array or string');
}

/** Message data crosses as is: the addon encodes strings as UTF-8 without a JS-side copy. */
export function checkData(name: string, value: unknown): Uint8Array | string {
  if (typeof value === 'string' || value instanceof Uint8Array) return value;
  throw argType(name, 'a Buffer, Uint8Array or string');
}

export function count(name: string, value: unknown, max: number): number {
  if (typeof value !== 'number') throw argType(name, 'a number');
  if (!Number.isInteger(value) || value < 1 || value > max) throw argRange(name, `an integer from 1 to ${max}`);
  return value;
}

/** An integer from `min` to `max`. */
export function checkInt(name: string, value: number, min: number, max: number): number {
  if (typeof value !== 'number') throw argType(name, 'a number');
  if (!Number.isInteger(value) || value < min || value > max) throw argRange(name, `an integer from ${min} to ${max}`);
  return value;
}

export function argType(name: string, expected: string): TypeError {
  return Object.assign(new TypeError(`The "${name}" argument must be ${expected}.`), { code: 'ERR_INVALID_ARG_TYPE' });
}

export function argRange(name: string, expected: string): RangeError {
  return Object.assign(new RangeError(`The "${name}" argument must be ${expected}.`), { code: 'ERR_OUT_OF_RANGE' });
}
