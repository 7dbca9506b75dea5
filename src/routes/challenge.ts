// GET /v1/challenge?apiKey=key_…[&params.<name>=<value>…]: a challenge under the key's policy,
// harder for a penalised client (PROTOCOL.md sections 1 and 2, DESIGN.md section 4), with a code
// challenge when the key's policy asks for one (docs/code-challenge.md: always, or above a risk score).
import type { Handler, RequestContext, Reply } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import {
  createChallengeV1, deriveChallenge, deriveChallengeSync, parseChallengeParams, signChallenge, v1Salt, type ChallengeContext,
  type DerivedChallenge,
} from '../pow/challenge.js';
import { isExpensive } from '../pow/derive.js';
import { resolvePolicy, scalePolicy, type ChallengePolicy, type PolicyLimits } from '../pow/policy.js';
import { isPooled, type ChallengePool } from '../pow/pool.js';
import type { PowSecrets } from '../pow/secrets.js';
import { CODE_POLICY_DEFAULTS, parseCodePolicy, type CodePolicy } from '../code-challenge/policy.js';
import type { CodeChallenges } from '../code-challenge/index.js';

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
  /**
   * What the widget must send to /v1/verify for this key (x-altcha-config `sentinel`: the form's
   * fields, the time zone), or null for nothing beyond the payload. Default: null for every key.
   */
  readonly sentinelConfig?: (key: ApiKey) => { readonly fields: boolean; readonly timeZone: boolean } | null;
  /** Code challenges; without them every key is served as codeChallenge "never". */
  readonly codeChallenges?: CodeChallenges;
  /**
   * The client's risk score (src/abuse/score.ts) given its penalty, for keys whose codeChallenge is
   * "auto"; asked only for those. Default: 0 (no client ever reaches a threshold above 0).
   */
  readonly risk?: (req: RequestContext, penalty: number) => number | Promise<number>;
}

export interface ChallengeRouteOptions {
  /**
   * BASE_URL + APP_BASE_PATH, the public prefix of verifyUrl. Default '' gives a relative
   * '/v1/verify?apiKey=…', which the widget resolves against the challenge URL.
   */
  readonly publicBaseUrl?: string;
  /** POW_MAX_MEMORY in bytes. Default 128 MiB. */
  readonly maxMemoryBytes?: number;
  /** CACHE_DURATION_USED_CHALLENGES minus CLAIM_CLOCK_SKEW: the longest expiry issued. Default: the policy's. */
  readonly maxExpiresMs?: number;
}

export const CHALLENGE_ROUTE_DEFAULTS = Object.freeze({ publicBaseUrl: '', maxMemoryBytes: 128 * 1024 * 1024 });

const HEADERS = Object.freeze({ 'cache-control': 'no-store' });

export function createChallengeHandler(deps: ChallengeRouteDeps, options: ChallengeRouteOptions = {}): Handler {
  const o = { ...CHALLENGE_ROUTE_DEFAULTS, ...options };
  const limits: PolicyLimits = { maxMemoryBytes: o.maxMemoryBytes, maxExpiresMs: options.maxExpiresMs };
  const verifyBase = `${o.publicBaseUrl.replace(/\/+$/, '')}/v1/verify?apiKey=`;
  // Keys are cached per worker, so their policy objects are stable: resolve each once.
  const policies = new WeakMap<object, ChallengePolicy>();
  let defaultPolicy: ChallengePolicy | undefined;
  // x-altcha-config for v1 keys (verifyUrl: their JSON has no `configuration`) and for keys that ask
  // the widget for more than the payload (sentinel), built once per cached key.
  const configured = new WeakMap<ApiKey, Readonly<Record<string, string>>>();
  const headersOf = (key: ApiKey, verifyUrl: string, v1: boolean): Readonly<Record<string, string>> => {
    const sentinel = deps.sentinelConfig?.(key) ?? null;
    if (sentinel === null && !v1) return HEADERS;
    let headers = configured.get(key);
    if (headers === undefined) {
      headers = Object.freeze({
        ...HEADERS, 'x-altcha-config': JSON.stringify(sentinel === null ? { verifyUrl } : { verifyUrl, sentinel }),
        'access-control-expose-headers': 'x-altcha-config',
      });
      configured.set(key, headers);
    }
    return headers;
  };

  // Code-challenge settings per stored policy, as the proof-of-work policy (a key without one: never).
  const codePolicies = new WeakMap<object, CodePolicy>();
  const codePolicyOf = (key: ApiKey): CodePolicy => {
    const stored = key.challengePolicy;
    if (stored === null || deps.codeChallenges === undefined) return CODE_POLICY_DEFAULTS;
    let code = codePolicies.get(stored);
    if (!code) codePolicies.set(stored, (code = parseCodePolicy(stored)));
    return code;
  };
  const codeChallenges = deps.codeChallenges;
  const risk = deps.risk ?? (() => 0);

  function policyOf(key: ApiKey): ChallengePolicy {
    const stored = key.challengePolicy;
    if (stored === null) return (defaultPolicy ??= resolvePolicy(null, limits));
    let policy = policies.get(stored);
    if (!policy) policies.set(stored, (policy = resolvePolicy(stored, limits)));
    return policy;
  }

  // Synchronous from start to end when every step can be (a cached key, the shared-memory store, a
  // cheap policy): the reply is written in the same uWS callback, with no Promise at all.
  const issue = (
    key: ApiKey, params: ChallengeContext['params'], penalty: number, salt: string | undefined, codeLength = 0,
  ): Reply | Promise<Reply> => {
    const policy = scalePolicy(policyOf(key), penalty);
    const verifyUrl = verifyBase + encodeURIComponent(key.id);
    const ctx: ChallengeContext = codeLength === 0
      ? { secrets: deps.secrets, apiKeyId: key.id, params, verifyUrl }
      : {
        secrets: deps.secrets, apiKeyId: key.id, params, verifyUrl,
        code: (nonce, expiresAt) => codeChallenges!.issue(key.id, nonce, expiresAt, codeLength),
      };
    if (policy.version === 1) {
      deps.onChallenge();
      // v1 JSON has no `configuration`; the widget reads verifyUrl from this header instead.
      return { status: 200, headers: headersOf(key, verifyUrl, true), body: createChallengeV1(policy, ctx, salt) };
    }
    // Probabilistic and cheap deterministic challenges are made inline; expensive ones come from
    // the pool (or, without one, are derived off the event loop per request).
    const headers = headersOf(key, verifyUrl, false);
    if (policy.mode === 'probabilistic' || !isExpensive(policy)) {
      return signed(policy, deriveChallengeSync(policy, deps.secrets), ctx, headers);
    }
    const derived = deps.pool && isPooled(policy) ? deps.pool.take(policy) : deriveChallenge(policy, deps.secrets);
    return derived.then((d) => signed(policy, d, ctx, headers));
  };

  const signed = (policy: ChallengePolicy, derived: DerivedChallenge, ctx: ChallengeContext, headers: Readonly<Record<string, string>>): Reply => {
    deps.onChallenge();
    return { status: 200, headers, body: signChallenge(policy, derived, ctx) };
  };

  const withKey = (req: RequestContext, key: ApiKey): Reply | Promise<Reply> => {
    // Parameters are checked before the penalty counts the request, a v1 salt's length with them.
    const params = parseChallengeParams(req.query);
    const policy = policyOf(key);
    const salt = policy.version === 1 ? v1Salt(policy, { apiKeyId: key.id, params }) : undefined;
    const penalty = deps.penalty(req);
    const code = codePolicyOf(key);
    if (code.mode === 'never') {
      return typeof penalty === 'number' ? issue(key, params, penalty, salt) : penalty.then((p) => issue(key, params, p, salt));
    }
    return typeof penalty === 'number' ? withCode(req, key, params, penalty, salt, code) : penalty.then((p) => withCode(req, key, params, p, salt, code));
  };

  // "always", or "auto" once the client's risk score reaches the key's threshold.
  const withCode = (
    req: RequestContext, key: ApiKey, params: ChallengeContext['params'], penalty: number, salt: string | undefined, code: CodePolicy,
  ): Reply | Promise<Reply> => {
    if (code.mode === 'always') return issue(key, params, penalty, salt, code.length);
    const score = risk(req, penalty);
    const decide = (s: number) => issue(key, params, penalty, salt, s >= code.threshold ? code.length : 0);
    return typeof score === 'number' ? decide(score) : score.then(decide);
  };

  return (req: RequestContext): Reply | Promise<Reply> => {
    const key = deps.authorizeBrowser(req);
    return key instanceof Promise ? key.then((k) => withKey(req, k)) : withKey(req, key);
  };
}
