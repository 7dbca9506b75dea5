// POST /challenge/verify (spec 4.3, server-side, authorised with the key's secret): body
// {payload, apiKey?}, where payload is a widget payload (v1 or v2) or a server-signature payload and
// apiKey names the issuing key when it is not the authorising one (same account only: a key of
// another account is answered 401 API_KEY_INVALID, like an unknown one, and its payload stays unspent).
// 200 {verified:true} or {verified:false, reason}; exactly once, like the other verifications.
// A widget payload is a request of the issuing key's plan and usage; a server payload was counted
// when POST /v1/verify issued it, so verifying it spends nothing and is never refused by the plan.
import { challengeVerifySpec } from '../api-schema/pow.js';
import { bodyCheck } from '../api-schema/validate.js';
import { PalisadeError } from '../errors.js';
import type { Handler, RequestContext, Reply } from '../http/types.js';
import { json } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import { decodePayload, MAX_PAYLOAD_LENGTH } from '../pow/payload.js';
import type { PowSecrets } from '../pow/secrets.js';
import { asServerPayload, isServerPayload, verifyServerPayload, type Classification } from '../pow/server-signature.js';
import { DEFAULT_CLOCK_SKEW_MS, verifyDecoded, type VerifyFailure } from '../pow/verify.js';
import { requestOrigin } from './verify.js';

export interface ChallengeVerifyRouteDeps {
  /** Bearer secret or HMAC-signed request → the authorising key; throws AUTHORIZATION_REQUIRED / API_KEY_INVALID / … */
  readonly authorizeServer: (req: RequestContext) => ApiKey | Promise<ApiKey>;
  /** The API key by id (cached), or null when there is none. */
  readonly findKey: (id: string) => ApiKey | null | Promise<ApiKey | null>;
  readonly secrets: PowSecrets;
  readonly claimOnce: (id: string, untilMs: number) => Promise<boolean>;
  /** `source`: which kind of payload it was (a forged server payload counts as tampered, a forged widget payload as an invalid signature). */
  readonly onVerify: (success: boolean, reason: VerifyFailure | null, req: RequestContext, source: 'widget' | 'server_payload') => void;
  /** Counted for widget payloads only: a server payload was already counted by POST /v1/verify. */
  readonly countUsage: (req: RequestContext, key: ApiKey, classification: Classification | null, origin: string | null) => void;
  /** Charges the plan for a widget payload before it is verified; throws PLAN_LIMIT_EXCEEDED (src/usage/plan-limit.ts). */
  readonly chargePlan: (key: ApiKey) => void | Promise<void>;
}

export interface ChallengeVerifyRouteOptions {
  /** CLAIM_CLOCK_SKEW: a claim is kept until the challenge or payload expires plus this. Default 60 s. */
  readonly clockSkewMs?: number;
  /** Longest base64 payload. Default 16 KiB. */
  readonly maxPayloadLength?: number;
}

export const CHALLENGE_VERIFY_ROUTE_DEFAULTS = Object.freeze({
  clockSkewMs: DEFAULT_CLOCK_SKEW_MS, maxPayloadLength: MAX_PAYLOAD_LENGTH,
});

const VERIFIED = json({ verified: true });
/** The body's schema of /v1/docs (src/api-schema/pow.ts): 400 INVALID_PAYLOAD, or INVALID_PARAMETER for apiKey. */
const checkBody = bodyCheck(challengeVerifySpec);

export function createChallengeVerifyHandler(deps: ChallengeVerifyRouteDeps, options: ChallengeVerifyRouteOptions = {}): Handler {
  const o = { ...CHALLENGE_VERIFY_ROUTE_DEFAULTS, ...options };
  const verifyDeps = {
    secrets: deps.secrets, claimOnce: deps.claimOnce, clockSkewMs: o.clockSkewMs, maxPayloadLength: o.maxPayloadLength,
  };

  return async (req: RequestContext): Promise<Reply> => {
    const auth = await deps.authorizeServer(req);
    const body = req.json();
    checkBody(body);
    const { payload, apiKey } = body as { payload: string; apiKey?: string };
    const key = apiKey === undefined || apiKey === auth.id ? auth : await deps.findKey(apiKey);
    // Another account's key is answered like an unknown one.
    if (!key || !key.enabled || key.accountId !== auth.accountId) throw new PalisadeError('API_KEY_INVALID');

    const decoded = decodePayload(payload, o.maxPayloadLength);
    let reason: VerifyFailure | null;
    const server = isServerPayload(decoded);
    if (server) {
      const payload = asServerPayload(decoded);
      if (!payload) reason = 'INVALID_PAYLOAD';
      else if (payload.apiKey !== key.id) reason = 'INVALID_SIGNATURE';
      else {
        const check = await verifyServerPayload(payload, key.secret, verifyDeps);
        reason = check.verified ? null : check.reason;
      }
    } else {
      await deps.chargePlan(key);
      const result = await verifyDecoded(decoded, verifyDeps, key.id);
      reason = result.verified ? null : result.reason;
      deps.countUsage(req, key, null, requestOrigin(req));
    }
    deps.onVerify(reason === null, reason, req, server ? 'server_payload' : 'widget');
    return reason === null ? VERIFIED : json({ verified: false, reason });
  };
}
