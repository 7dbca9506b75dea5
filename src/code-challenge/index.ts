// Code challenges (issue 25, docs/code-challenge.md): a code to type from an image or audio clip,
// asked on top of the proof of work for keys whose policy says so (policy.ts), bound to the
// challenge without server state. What the challenge route and the verification need:
//   issue(...)     the code, its keyed hash for data.codeHash and the widget's codeChallenge JSON
//                  ({image, audio, length}); the audio URL carries the sealed token (token.ts)
//   check(...)     a typed code against the hash, constant time
//   openToken(...) the audio route's way back from the token to the code
import { checkCode, codeHash, deriveCodeKeys, generateCode, type CodeKeys } from './code.js';
import { createImageRenderer, type ImageRenderer } from './image.js';
import { openAudioToken, sealAudioToken, type AudioTokenContent } from './token.js';

export { CODE_ALPHABET, MAX_SUBMITTED_CODE } from './code.js';
export { CODE_POLICY_DEFAULTS, parseCodePolicy, type CodePolicy } from './policy.js';
export { createAudioSynthesizer, type AudioSynthesizer } from './audio.js';
export { audioLanguage } from './speech.js';

export interface CodeChallenges {
  /** For a challenge with `nonce` expiring at `expiresAt` (unix s): the hash to sign and the JSON for the widget. */
  issue(apiKeyId: string, nonce: string, expiresAt: number, length: number): { readonly hash: string; readonly json: string };
  check(nonce: string, hash: string, typed: string): boolean;
  openToken(apiKeyId: string, token: string): AudioTokenContent | null;
}

export interface CodeChallengeOptions {
  /** BASE_URL + APP_BASE_PATH, the prefix of the audio URL. Default '': a path the widget resolves against the challenge URL. */
  readonly publicBaseUrl?: string;
  /**
   * Renders the image; default createImageRenderer(), made now: the font is parsed once per
   * process (45–85 ms on the development machine), at start-up rather than in the first challenge that asks for a code.
   */
  readonly renderImage?: ImageRenderer;
}

/** The path of the audio route (registered in src/routes/api.ts). */
export const AUDIO_PATH = '/v1/challenge/audio';

export function createCodeChallenges(secret: string, options: CodeChallengeOptions = {}): CodeChallenges {
  const keys: CodeKeys = deriveCodeKeys(secret);
  const render = options.renderImage ?? createImageRenderer();
  const audioBase = `${(options.publicBaseUrl ?? '').replace(/\/+$/, '')}${AUDIO_PATH}?apiKey=`;
  return {
    issue(apiKeyId, nonce, expiresAt, length) {
      const code = generateCode(length);
      const token = sealAudioToken(keys, apiKeyId, { nonce, expiresAt, code });
      // Every part is base64, base64url or an encoded key id: no JSON escaping needed beyond the key id's.
      const audio = `${audioBase}${encodeURIComponent(apiKeyId)}&token=${token}`;
      return {
        hash: codeHash(keys, nonce, code),
        json: `{"audio":${JSON.stringify(audio)},"image":"${render(code)}","length":${length}}`,
      };
    },
    check: (nonce, hash, typed) => checkCode(keys, nonce, hash, typed),
    openToken: (apiKeyId, token) => openAudioToken(keys, apiKeyId, token),
  };
}
