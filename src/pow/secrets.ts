// The fixed HMAC keys of the proof-of-work protocol (PROTOCOL.md sections 1 and 2), prepared once at
// start-up from PALISADE_HMAC_SECRET: challenge signatures, derived-key signatures and v1 signatures.
import { hmac, prepareHmacKey, toHex, type HashAlgorithm, type PreparedHmacKey } from './crypto.js';

export interface PowSecrets {
  /** HMAC-SHA256 keyed with PALISADE_HMAC_SECRET: signs v2 challenge parameters. */
  readonly challenge: PreparedHmacKey;
  /** HMAC-SHA256 keyed with keySecret: signs (and checks) deterministic derived keys. */
  readonly keySignature: PreparedHmacKey;
  /** v1 challenges are signed with the challenge's own hash: one prepared key per algorithm. */
  readonly v1: Readonly<Record<HashAlgorithm, PreparedHmacKey>>;
}

/** At least this many characters: the spec asks 24 for the secrets it names. */
const MIN_SECRET_LENGTH = 24;

export function preparePowSecrets(hmacSecret: string): PowSecrets {
  if (typeof hmacSecret !== 'string' || hmacSecret.length < MIN_SECRET_LENGTH) {
    throw new Error(`PALISADE_HMAC_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  return Object.freeze({
    challenge: prepareHmacKey('sha256', hmacSecret),
    keySignature: prepareHmacKey('sha256', deriveKeySecret(hmacSecret)),
    v1: Object.freeze({
      sha256: prepareHmacKey('sha256', hmacSecret),
      sha384: prepareHmacKey('sha384', hmacSecret),
      sha512: prepareHmacKey('sha512', hmacSecret),
    }),
  });
}

/** keySecret = hex(HMAC-SHA256(key = "derived-secret", msg = PALISADE_HMAC_SECRET)), used as a UTF-8 key. */
export function deriveKeySecret(hmacSecret: string): string {
  return toHex(hmac('sha256', 'derived-secret', hmacSecret));
}
