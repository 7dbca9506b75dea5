// POST /v1/verify/signature (PROTOCOL.md section 3): online check of a server payload, as
// altcha-lib's verifyServer calls it. Body {payload, secret?} → 200 {verified, apiKey,
// verificationData (nested object), reason?}; each payload is accepted once; bad input is 400 INVALID_PAYLOAD.
import { verifySignatureSpec } from '../api-schema/pow.js';
import { bodyCheck } from '../api-schema/validate.js';
import { PalisadeError } from '../errors.js';
import type { Handler, RequestContext, Reply } from '../http/types.js';
import { json } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import { sha, timingSafeEqual } from '../pow/crypto.js';
import { decodePayload, MAX_PAYLOAD_LENGTH } from '../pow/payload.js';
import { asServerPayload, verifyServerPayload, type ServerPayloadDeps } from '../pow/server-signature.js';
import { DEFAULT_CLOCK_SKEW_MS } from '../pow/verify.js';

export interface VerifySignatureRouteDeps {
  /** The API key by id (cached), or null when there is none. */
  readonly findKey: (id: string) => ApiKey | null | Promise<ApiKey | null>;
  /** StateStore.claimOnce. */
  readonly claimOnce: (id: string, untilMs: number) => Promise<boolean>;
}

export interface VerifySignatureRouteOptions {
  /** CLAIM_CLOCK_SKEW: a claim is kept until the challenge or payload expires plus this. Default 60 s. */
  readonly clockSkewMs?: number;
  /** Longest base64 payload. Default 16 KiB. */
  readonly maxPayloadLength?: number;
}

export const VERIFY_SIGNATURE_ROUTE_DEFAULTS = Object.freeze({
  clockSkewMs: DEFAULT_CLOCK_SKEW_MS, maxPayloadLength: MAX_PAYLOAD_LENGTH,
});

/** The body's schema of /v1/docs (src/api-schema/pow.ts): 400 INVALID_PAYLOAD. */
const checkBody = bodyCheck(verifySignatureSpec);

export function createVerifySignatureHandler(deps: VerifySignatureRouteDeps, options: VerifySignatureRouteOptions = {}): Handler {
  const o = { ...VERIFY_SIGNATURE_ROUTE_DEFAULTS, ...options };
  const serverDeps: ServerPayloadDeps = { claimOnce: deps.claimOnce, clockSkewMs: o.clockSkewMs };

  return async (req: RequestContext): Promise<Reply> => {
    const body = req.json();
    checkBody(body);
    const { secret, payload: given } = body as { payload: string | object; secret?: string };
    // verifyServer sends the payload as posted by the widget (base64) or already decoded.
    const payload = asServerPayload(typeof given === 'string' ? decodePayload(given, o.maxPayloadLength) : given);
    if (!payload) throw new PalisadeError('INVALID_PAYLOAD');
    const key = await deps.findKey(payload.apiKey);
    // A given secret must be the payload key's own: it proves the caller is that key's owner.
    if (!key || !key.enabled || (secret !== undefined && !sameSecret(secret, key.secret))) {
      return json({ verified: false, apiKey: payload.apiKey, verificationData: null, reason: 'API_KEY_INVALID' });
    }
    const check = await verifyServerPayload(payload, key.secret, serverDeps);
    return json(check.verified
      ? { verified: true, apiKey: key.id, verificationData: check.verificationData }
      : { verified: false, apiKey: key.id, verificationData: check.verificationData, reason: check.reason });
  };
}

/** Constant time whatever the lengths: compares digests. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(sha('sha256', a), sha('sha256', b));
}
