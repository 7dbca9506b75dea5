// Every hashing primitive the proof-of-work code uses, behind one narrow surface: the native
// addon's wrappers (src/native/). Keys that never change (the challenge-signing secret, the
// key-signature secret) are prepared once: the precomputed inner/outer midstates are where the
// 6.8x of DESIGN.md section 9 comes from.
import * as native from '../native/index.js';

export type { HashAlgorithm, PreparedHmacKey } from '../native/index.js';
export { hmac, hmacPrepared, hmacPreparedHex, hmacPreparedVerifyHex, prepareHmacKey, sha, timingSafeEqual, toHex } from '../native/index.js';

/** Decodes hex the caller has already validated (isHex); throws on anything else rather than returning a partial key. */
export function fromHex(hex: string): Buffer {
  const out = native.fromHex(hex);
  if (out === null) throw new TypeError('fromHex: not hex');
  return out;
}
