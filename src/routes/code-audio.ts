// GET /v1/challenge/audio?apiKey=key_…&token=…[&language=de]: the code of a code challenge spoken
// (docs/code-challenge.md). The widget takes the URL from codeChallenge.audio, resolves it against
// the challenge URL and sets ?language= (its audioChallengeLanguage, else its locale). 200
// audio/wav; 400 INVALID_PARAMETER without a token; 404 CODE_CHALLENGE_NOT_FOUND for a token that
// does not open under this key; 410 CODE_CHALLENGE_EXPIRED / CODE_CHALLENGE_SOLVED; 429 past
// AUDIO_CHALLENGE_RATE_LIMIT. The answer comes no sooner than AUDIO_CHALLENGE_DELAY after the request
// (synthesis runs meanwhile, off the event loop), so a bot gains nothing by asking for the clip.
import { setTimeout as sleep } from 'node:timers/promises';
import { PalisadeError } from '../errors.js';
import type { Handler, Reply, RequestContext } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import { audioLanguage, type AudioSynthesizer, type CodeChallenges } from '../code-challenge/index.js';

export interface AudioRouteDeps {
  /** Resolves ?apiKey= and checks Origin/Referer against the key's hostnames (as for the challenge). */
  readonly authorizeBrowser: (req: RequestContext) => ApiKey | Promise<ApiKey>;
  readonly codeChallenges: CodeChallenges;
  readonly synthesizer: AudioSynthesizer;
  /** AUDIO_CHALLENGE_RATE_LIMIT: nothing when allowed, else throws (or rejects) RATE_LIMITED with Retry-After. */
  readonly rateLimit: (req: RequestContext) => void | Promise<void>;
  /** True when the challenge with this nonce was already submitted to /v1/verify. */
  readonly spent: (nonce: string) => boolean | Promise<boolean>;
}

export interface AudioRouteOptions {
  /** AUDIO_CHALLENGE_DELAY in ms. Default 3,000. */
  readonly delayMs?: number;
  /** Epoch ms. Default Date.now. */
  readonly now?: () => number;
}

export const AUDIO_ROUTE_DEFAULTS = Object.freeze({ delayMs: 3_000 });

const HEADERS = Object.freeze({ 'content-type': 'audio/wav', 'cache-control': 'no-store' });

export function createAudioHandler(deps: AudioRouteDeps, options: AudioRouteOptions = {}): Handler {
  const delayMs = options.delayMs ?? AUDIO_ROUTE_DEFAULTS.delayMs;
  const now = options.now ?? Date.now;

  return async (req: RequestContext): Promise<Reply> => {
    const token = req.query.get('token');
    if (token === null || token === '') throw new PalisadeError('INVALID_PARAMETER', 'token is required');
    await deps.rateLimit(req);
    const key = await deps.authorizeBrowser(req);
    const content = deps.codeChallenges.openToken(key.id, token);
    if (content === null) throw new PalisadeError('CODE_CHALLENGE_NOT_FOUND');
    if (content.expiresAt * 1000 < now()) throw new PalisadeError('CODE_CHALLENGE_EXPIRED');
    if (await deps.spent(content.nonce)) throw new PalisadeError('CODE_CHALLENGE_SOLVED');
    const language = audioLanguage(req.query.get('language') ?? undefined);
    const wait = delayMs - (performance.now() - req.startedAt);
    const [wav] = await Promise.all([deps.synthesizer.speak(content.code, language), wait > 0 ? sleep(wait) : undefined]);
    return { status: 200, headers: { ...HEADERS, 'content-language': language }, body: wav };
  };
}
