// Decoding of the base64 JSON payloads clients post (widget solutions and server-signature
// payloads), bounded before any work is done, and the canonical JSON both sides sign.
import { nestsDeeper } from '../json-depth.js';

/** Default upper bound of a base64 payload: a v2 challenge with 10 custom params is about 3 KB. */
export const MAX_PAYLOAD_LENGTH = 16_384;
/** Deepest nesting a legitimate payload has is 3 ({challenge:{parameters:{data:{}}}}). */
const MAX_DEPTH = 6;

/**
 * base64 → JSON value, or undefined when the text is too long, not canonical padded base64, nested
 * deeper than MAX_DEPTH, or not JSON. Canonical means that encoding the decoded bytes gives the
 * text back: that refuses characters outside the standard alphabet (base64url's too), whitespace,
 * missing or misplaced padding and set bits after the last byte, none of which an encoder writes
 * (the widget's btoa, altcha-lib, Buffer), with one native call instead of a regular expression
 * over the text. Decoded as Latin-1: the widget encodes with btoa, which maps characters to bytes one to one
 * (and our payloads are ASCII, so a UTF-8 encoder agrees).
 * `__proto__` keys stay plain own properties (JSON.parse defines them; nothing here assigns them).
 */
export function decodePayload(text: string, maxLength = MAX_PAYLOAD_LENGTH): unknown {
  if (typeof text !== 'string' || text.length === 0 || text.length > maxLength || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) return undefined;
  const json = bytes.toString('latin1');
  if (nestsDeeper(json, MAX_DEPTH)) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * JSON.stringify of `value` with its object keys sorted recursively, exactly as altcha-lib's canonicalJSON: object keys sorted
 * recursively, arrays kept in order (and as they are), undefined members dropped; `__proto__` stays
 * an own key. Written directly rather than through sorted copies: half the time, and it runs on every
 * challenge and every verification.
 */
export function canonicalJson(value: unknown): string {
  if (!isObject(value)) return JSON.stringify(value);
  // The parameters of a payload come back in the order they were issued in, which is sorted: then
  // JSON.stringify already writes the canonical bytes, in less than half the time.
  if (inCanonicalOrder(value)) return JSON.stringify(value);
  const keys = Object.keys(value);
  // altcha-lib rebuilds each object from its sorted entries, and a JavaScript object lists
  // array-index keys ("0", "17") first in numeric order whatever the insertion order: Object.keys
  // gives those first already, so only the keys after them are sorted.
  let indexKeys = 0;
  while (indexKeys < keys.length && isArrayIndex(keys[indexKeys]!)) indexKeys++;
  if (indexKeys === 0) keys.sort();
  else keys.splice(indexKeys, keys.length - indexKeys, ...keys.slice(indexKeys).sort());
  let out = '{';
  for (const key of keys) {
    const v = value[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/**
 * True when JSON.stringify(value) writes what canonicalJson would: a plain object (no toJSON, no
 * other prototype, as JSON.parse makes them) whose keys after its array-index keys are in ascending
 * order, and the same for every object among its values. Arrays are written as they are either way.
 */
function inCanonicalOrder(value: Record<string, unknown>): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  if ((proto !== Object.prototype && proto !== null) || typeof value.toJSON === 'function') return false;
  const keys = Object.keys(value);
  let first = 0;
  while (first < keys.length && isArrayIndex(keys[first]!)) first++;
  for (let i = first + 1; i < keys.length; i++) if (keys[i]! <= keys[i - 1]!) return false;
  for (const key of keys) {
    const v = value[key];
    if (isObject(v) && !inCanonicalOrder(v)) return false;
  }
  return true;
}

/** "0", "1", … "4294967294": the keys JavaScript orders numerically, before all others. */
function isArrayIndex(key: string): boolean {
  const c = key.charCodeAt(0);
  if (c < 0x30 || c > 0x39) return false;
  return /^(?:0|[1-9][0-9]{0,9})$/.test(key) && Number(key) < 4_294_967_295;
}

const LOWER_HEX = /^[0-9a-f]*$/;

/** Lowercase hex of exactly `chars` characters. */
export function isHex(v: unknown, chars: number): v is string {
  return typeof v === 'string' && v.length === chars && LOWER_HEX.test(v);
}
