// GET /v1/challenge?apiKey=key_…[&params.<name>=<value>…]: a challenge under the key's policy,
// harder for a penalised client (PROTOCOL.md sections 1 and 2, DESIGN.md section 4).
import type { Handler, RequestContext, Reply } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import {
  createChallengeV1, deriveChallenge, deriveChallengeSync, parseChallengeParams, signChallenge, type ChallengeContext,
} from '../pow/challenge.js';
import { isExpensive } from '../pow/derive.js';
import { resolvePolicy, scalePolicy, type ChallengePolicy, type PolicyLimits } from '../pow/policy.js';
import { isPooled, type ChallengePool } from '../pow/pool.js';
import type { PowSecrets } from '../pow/secrets.js';

export interface ChallengeRouteDeps {
  /** Resolves ?apiKey= and checks Origin/Referer against the key's hostnames; throws API_KEY_* / ORIGIN_NOT_ALLOWED. */
  readonly authorizeBrowser: (req: RequestContext) => ApiKey | Promise<ApiKey>;
  readonly secrets: PowSecrets;
  /**
   * The client's penalty score for adaptive difficulty (src/abuse: may refuse a blocked client); 0
   * when none. A number when it could be had without waiting (the shared-memory store).
   */
  readonly penalty: (req: RequestContext) => number | Promise<number>;
  /** Counts palisade_api_challenges_total. */
  readonly onChallenge: () => void;
  /** Ready challenges for expensive deterministic policies; without it they are derived per request. */
  readonly pool?: ChallengePool | null;
}

export interface ChallengeRouteOptions {
  /**
   * BASE_URL + APP_BASE_PATH, the public prefix of verifyUrl. Default '' gives a relative
   * '/v1/verify?apiKey=…', which the widget resolves against the challenge URL.
   */
  readonly publicBaseUrl?: string;
  /** POW_MAX_MEMORY in bytes. Default 128 MiB. */
  readonly maxMemoryBytes?: number;
}

export const CHALLENGE_ROUTE_DEFAULTS = Object.freeze({ publicBaseUrl: '', maxMemoryBytes: 128 * 1024 * 1024 });

const HEADERS = Object.freeze({ 'cache-control': 'no-store' });

export function createChallengeHandler(deps: ChallengeRouteDeps, options: ChallengeRouteOptions = {}): Handler {
  const o = { ...CHALLENGE_ROUTE_DEFAULTS, ...options };
  const limits: PolicyLimits = { maxMemoryBytes: o.maxMemoryBytes };
  const verifyBase = `${o.publicBaseUrl.replace(/\/+$/, '')}/v1/verify?apiKey=`;
  // Keys are cached per worker, so their policy objects are stable: resolve each once.
  const policies = new WeakMap<object, ChallengePolicy>();
  let defaultPolicy: ChallengePolicy | undefined;

  function policyOf(key: ApiKey): ChallengePolicy {
    const stored = key.challengePolicy;
    if (stored === null) return (defaultPolicy ??= resolvePolicy(null, limits));
    let policy = policies.get(stored);
    if (!policy) policies.set(stored, (policy = resolvePolicy(stored, limits)));
    return policy;
  }

  return async (req: RequestContext): Promise<Reply> => {
    const key = await deps.authorizeBrowser(req);
    const params = parseChallengeParams(req.query);
    const penalty = deps.penalty(req);
    const policy = scalePolicy(policyOf(key), typeof penalty === 'number' ? penalty : await penalty);
    const verifyUrl = verifyBase + encodeURIComponent(key.id);
    const ctx: ChallengeContext = { secrets: deps.secrets, apiKeyId: key.id, params, verifyUrl };
    let reply: Reply;
    if (policy.version === 1) {
      // v1 JSON has no `configuration`; the widget reads verifyUrl from this header instead.
      reply = {
        status: 200,
        headers: {
          ...HEADERS,
          'x-altcha-config': JSON.stringify({ verifyUrl }),
          'access-control-expose-headers': 'x-altcha-config',
        },
        body: createChallengeV1(policy, ctx),
      };
    } else {
      // Probabilistic and cheap deterministic challenges are made inline; expensive ones come
      // from the pool (or, without one, are derived off the event loop per request).
      const derived = policy.mode === 'probabilistic' || !isExpensive(policy)
        ? deriveChallengeSync(policy, deps.secrets)
        : deps.pool && isPooled(policy) ? await deps.pool.take(policy) : await deriveChallenge(policy, deps.secrets);
      reply = { status: 200, headers: HEADERS, body: signChallenge(policy, derived, ctx) };
    }
    deps.onChallenge();
    return reply;
  };
}
