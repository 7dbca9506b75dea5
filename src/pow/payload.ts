// Decoding of the base64 JSON payloads clients post (widget solutions and server-signature
// payloads), bounded before any work is done, and the canonical JSON both sides sign.

/** Default upper bound of a base64 payload: a v2 challenge with 10 custom params is about 3 KB. */
export const MAX_PAYLOAD_LENGTH = 16_384;
/** Deepest nesting a legitimate payload has is 3 ({challenge:{parameters:{data:{}}}}). */
const MAX_DEPTH = 6;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * base64 → JSON value, or undefined when the text is too long, not canonical padded base64, nested
 * deeper than MAX_DEPTH, or not JSON. Decoded as Latin-1: the widget encodes with btoa, which maps
 * characters to bytes one to one (and our payloads are ASCII, so a UTF-8 encoder agrees).
 * `__proto__` keys stay plain own properties (JSON.parse defines them; nothing here assigns them).
 */
export function decodePayload(text: string, maxLength = MAX_PAYLOAD_LENGTH): unknown {
  if (typeof text !== 'string' || text.length === 0 || text.length > maxLength) return undefined;
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  const json = Buffer.from(text, 'base64').toString('latin1');
  if (!withinDepth(json, MAX_DEPTH)) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

/** Linear scan: false when brackets outside strings nest deeper than `max`. */
function withinDepth(json: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return false;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return true;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * JSON.stringify(sortKeysDeep(value)) exactly as altcha-lib's canonicalJSON: object keys sorted
 * recursively, arrays kept in order, undefined members dropped; `__proto__` stays an own key.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeysDeep(value));
}

export function sortKeysDeep(value: unknown): unknown {
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value).sort().flatMap((key) => {
      const v = value[key];
      return v === undefined ? [] : [[key, sortKeysDeep(v)]];
    }),
  );
}

const LOWER_HEX = /^[0-9a-f]*$/;

/** Lowercase hex of exactly `chars` characters. */
export function isHex(v: unknown, chars: number): v is string {
  return typeof v === 'string' && v.length === chars && LOWER_HEX.test(v);
}
