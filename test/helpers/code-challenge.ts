// The documented test-only way to read a code challenge's code (docs/code-challenge.md): whoever
// holds CODE_CHALLENGE_SECRET can open the audio token in codeChallenge.audio, exactly as the audio
// route does. No endpoint or header reveals a code; tests start the service with a secret they know.
import { deriveCodeKeys } from '../../src/code-challenge/code.js';
import { openAudioToken } from '../../src/code-challenge/token.js';

/** The code of the challenge JSON `challenge` (GET /v1/challenge's body, parsed or not), issued to `apiKeyId`. */
export function readCode(secret: string, apiKeyId: string, challenge: string | { codeChallenge?: { audio?: string } }): string {
  const parsed = typeof challenge === 'string' ? (JSON.parse(challenge) as { codeChallenge?: { audio?: string } }) : challenge;
  const audio = parsed.codeChallenge?.audio;
  if (audio === undefined) throw new Error('the challenge carries no code challenge');
  const token = new URL(audio, 'http://x').searchParams.get('token') ?? '';
  const content = openAudioToken(deriveCodeKeys(secret), apiKeyId, token);
  if (content === null) throw new Error('the audio token does not open with this secret and key');
  return content.code;
}
