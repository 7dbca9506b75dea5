// The audio token: what the audio route needs to speak a challenge's code without server state.
// AES-256-GCM under a key derived from CODE_CHALLENGE_SECRET (code.ts), the API key id as additional
// data (a token works only with the key it was issued for):
//   token = base64url(iv[12] ‖ ciphertext ‖ tag[16]),  plaintext = nonce[16] ‖ expiresAt u32 BE ‖ code (ASCII)
// The nonce names the challenge (its claim, so the route can refuse a solved one); the expiry is the
// challenge's own. The client learns nothing from the token, and a changed byte fails the tag.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { pooledRandomBytes } from '../pow/random.js';
import { CODE_ALPHABET, MAX_CODE_LENGTH, MIN_CODE_LENGTH, type CodeKeys } from './code.js';

export interface AudioTokenContent {
  /** The challenge nonce, 32 lowercase hex characters. */
  readonly nonce: string;
  /** Unix seconds, as the challenge's expiresAt. */
  readonly expiresAt: number;
  readonly code: string;
}

const IV = 12;
const TAG = 16;
const FIXED = 16 + 4;
/** The longest token a well-formed request carries (base64url of the largest code's token). */
export const MAX_TOKEN_LENGTH = Math.ceil(((IV + FIXED + MAX_CODE_LENGTH + TAG) * 4) / 3);
const TOKEN = /^[A-Za-z0-9_-]+$/;
const CODE = new RegExp(`^[${CODE_ALPHABET}]{${MIN_CODE_LENGTH},${MAX_CODE_LENGTH}}$`);

export function sealAudioToken(keys: CodeKeys, apiKeyId: string, content: AudioTokenContent): string {
  const iv = pooledRandomBytes(IV);
  const plain = Buffer.allocUnsafe(FIXED + content.code.length);
  plain.write(content.nonce, 0, 16, 'hex');
  plain.writeUInt32BE(content.expiresAt, 16);
  plain.write(content.code, FIXED, 'latin1');
  const cipher = createCipheriv('aes-256-gcm', keys.token, iv);
  cipher.setAAD(Buffer.from(apiKeyId, 'utf8'));
  const body = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return body.toString('base64url');
}

/** The content of a token sealed for `apiKeyId`, or null when it is malformed, forged or another key's. */
export function openAudioToken(keys: CodeKeys, apiKeyId: string, token: string): AudioTokenContent | null {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !TOKEN.test(token)) return null;
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length < IV + FIXED + MIN_CODE_LENGTH + TAG) return null;
  const decipher = createDecipheriv('aes-256-gcm', keys.token, bytes.subarray(0, IV));
  decipher.setAAD(Buffer.from(apiKeyId, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG));
  let plain: Buffer;
  try {
    plain = Buffer.concat([decipher.update(bytes.subarray(IV, bytes.length - TAG)), decipher.final()]);
  } catch {
    return null;
  }
  const code = plain.toString('latin1', FIXED);
  // Only sealAudioToken wrote what authenticates, so this holds; checked anyway before it is spoken.
  if (!CODE.test(code)) return null;
  return { nonce: plain.toString('hex', 0, 16), expiresAt: plain.readUInt32BE(16), code };
}
