// POST /v1/verify (widget → Palisade, PROTOCOL.md section 3): body {payload, code?, fields?, timeZone?}.
// 200 {verified:true, payload, algorithm, apiKey, id, score, signature, verificationData} with a
// signed server payload, 200 {verified:false, reason} when the solution fails (INCORRECT_CODE when
// the challenge carries a code challenge and `code` does not match it), 400 for a malformed body.
import { PalisadeError } from '../errors.js';
import type { Handler, RequestContext, Reply } from '../http/types.js';
import { json } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import { anonymizeIp } from '../ip.js';
import type { PreparedHmacKey } from '../pow/crypto.js';
import { isObject, MAX_PAYLOAD_LENGTH } from '../pow/payload.js';
import type { PowSecrets } from '../pow/secrets.js';
import {
  classify, createServerPayload, prepareServerKey, type Classification, type ServerSignatureAlgorithm, type ThreatName,
} from '../pow/server-signature.js';
import {
  DEFAULT_CLOCK_SKEW_MS, verifyPayload, type CodeVerifier, type FailedVerification, type VerifiedChallenge, type VerifyDeps,
  type VerifyFailure,
} from '../pow/verify.js';
import { MAX_SUBMITTED_CODE } from '../code-challenge/code.js';

export interface Assessment {
  /** GOOD < 1 ≤ NEUTRAL < 2 ≤ BAD. */
  readonly score: number;
  readonly reasons: readonly string[];
  /** More signed facts, dotted names nest: {'location.countryCode': 'DE'}. */
  readonly extra?: Readonly<Record<string, string | number | boolean>>;
  /** The classification under the key's bands; default classify(score) with the protocol's. */
  readonly classification?: Classification;
  /** Fail the verification with this reason instead of signing it (a key that blocks BAD submissions). */
  readonly refuse?: 'BAD_CLASSIFICATION';
}

export interface AssessInput {
  readonly req: RequestContext;
  readonly key: ApiKey;
  readonly challenge: VerifiedChallenge;
  readonly penalty: number;
  readonly fields: Readonly<Record<string, string>> | null;
  readonly timeZone: string | null;
}

export interface VerifyRouteDeps {
  readonly authorizeBrowser: (req: RequestContext) => ApiKey | Promise<ApiKey>;
  readonly secrets: PowSecrets;
  /** StateStore.claimOnce (a boolean at once when the store answers on this thread). */
  readonly claimOnce: (id: string, untilMs: number) => boolean | Promise<boolean>;
  /** The client's penalty score, reported as verificationData.penalty. */
  readonly penalty: (ip: string) => number | Promise<number>;
  /** palisade_api_verifications_success_total / _failed_total. */
  readonly onVerify: (success: boolean, reason: VerifyFailure | 'BAD_CLASSIFICATION' | null, req: RequestContext) => void;
  /**
   * Usage: `req` is one request for `key`, with its classification when verified (null when not),
   * and the origin; counted as its reply is written (RequestContext.usage).
   */
  readonly countUsage: (req: RequestContext, key: ApiKey, classification: Classification | null, origin: string | null) => void;
  /**
   * Scores a verified request (spam, IP and location checks plug in here). Default: score 0
   * (GOOD) with no reasons: a solved challenge and nothing else known; the penalty is reported
   * separately so integrators can weigh it.
   */
  readonly assess?: (input: AssessInput) => Assessment | Promise<Assessment>;
  /**
   * IP intelligence of the client (src/intel/intel.ts client()), signed as location.countryCode,
   * location.highRiskCountry and threats.<kind>=<source>. Default: none.
   */
  readonly clientSignals?: (req: RequestContext) => ClientSignals;
  /** Code challenges: checks `code` against a challenge's data.codeHash (src/code-challenge/). Default: none. */
  readonly code?: CodeVerifier;
}

export interface ClientSignals {
  readonly country: string | null;
  readonly highRiskCountry: boolean;
  readonly threats: Readonly<Partial<Record<ThreatName, string>>> | null;
}

export interface VerifyRouteOptions {
  /** CLAIM_CLOCK_SKEW: a claim is kept until the challenge or payload expires plus this. Default 60 s. */
  readonly clockSkewMs?: number;
  /** Lifetime of the server payload (verificationData.expire). Default 20 min, as long as a challenge. */
  readonly serverPayloadTtlMs?: number;
  /** ANONYMIZE_IP_ADDRESS: verificationData.ipAddress keeps the /24 (IPv4) or /48 (IPv6). Default true. */
  readonly anonymizeIp?: boolean;
  /** Hash of the server signature. Default 'SHA-256'. */
  readonly signatureAlgorithm?: ServerSignatureAlgorithm;
  /** Longest base64 payload. Default 16 KiB. */
  readonly maxPayloadLength?: number;
  /** Most form fields signed into fieldsHash. Default 50. */
  readonly maxFields?: number;
  /**
   * REDIS_COMMAND_TIMEOUT with Redis: how long after its start a request may still wait on the
   * state store. The reads after the claim (penalty, failed attempts) only enrich verificationData
   * and fail open, so past this they count as none, as on a store failure: a store that stalls
   * after the claim costs one command timeout, not one per read. Default: no limit (the
   * shared-memory store answers at once).
   */
  readonly storeBudgetMs?: number;
}

export const VERIFY_ROUTE_DEFAULTS = Object.freeze({
  clockSkewMs: DEFAULT_CLOCK_SKEW_MS,
  serverPayloadTtlMs: 20 * 60_000,
  anonymizeIp: true,
  signatureAlgorithm: 'SHA-256' as ServerSignatureAlgorithm,
  maxPayloadLength: MAX_PAYLOAD_LENGTH,
  maxFields: 50,
  storeBudgetMs: Infinity,
});

const NO_RISK: Assessment = Object.freeze({ score: 0, reasons: [] });
const NOTHING_KNOWN = Object.freeze({ penalty: 0, assessment: NO_RISK });
const FAILURE_BODIES = new Map<string, Reply>();

export function createVerifyHandler(deps: VerifyRouteDeps, options: VerifyRouteOptions = {}): Handler {
  const o = { ...VERIFY_ROUTE_DEFAULTS, ...options };
  const storeBudgetMs = options.storeBudgetMs ?? VERIFY_ROUTE_DEFAULTS.storeBudgetMs;
  const verifyDeps: VerifyDeps = {
    secrets: deps.secrets, claimOnce: deps.claimOnce, clockSkewMs: o.clockSkewMs, maxPayloadLength: o.maxPayloadLength,
    code: deps.code,
  };
  const assess = deps.assess ?? (() => NO_RISK);
  // Each cached ApiKey's secret is prepared once for the server signature.
  const serverKeys = new WeakMap<ApiKey, PreparedHmacKey>();

  // Synchronous from start to end when every step can be (a cached key, the shared-memory store, a
  // deterministic challenge): the reply is returned, not a Promise, and written in the uWS callback.
  const verified = (req: RequestContext, key: ApiKey, body: VerifyBody, result: VerifiedChallenge, enriched: Enriched): Reply => {
    const { penalty, assessment } = enriched;
    const origin = requestOrigin(req);
    if (assessment.refuse !== undefined) {
      deps.onVerify(false, assessment.refuse, req);
      deps.countUsage(req, key, assessment.classification ?? 'BAD', origin);
      return failure(assessment.refuse);
    }
    const client = deps.clientSignals?.(req) ?? null;
    if (client !== null) req.clientSignals = client;
    let serverKey = serverKeys.get(key);
    if (!serverKey) serverKeys.set(key, (serverKey = prepareServerKey(key.secret, o.signatureAlgorithm)));
    const server = createServerPayload({
      apiKeyId: key.id, key: serverKey, algorithm: o.signatureAlgorithm, score: assessment.score,
      reasons: assessment.reasons, fields: body.fields, ipAddress: o.anonymizeIp ? anonymizeIp(req.ip) : req.ip, origin,
      challengeAlgorithm: result.algorithm, penalty, params: result.params, timeZone: body.timeZone,
      countryCode: client?.country, highRiskCountry: client?.highRiskCountry, threats: client?.threats,
      extra: assessment.extra ?? null, ttlMs: o.serverPayloadTtlMs, classification: assessment.classification,
    });
    const classification = assessment.classification ?? classify(server.score);
    deps.onVerify(true, null, req);
    deps.countUsage(req, key, classification, origin);
    return json({
      verified: true, payload: server.payload, algorithm: server.algorithm, apiKey: server.apiKey, id: server.id,
      score: server.score, signature: server.signature, verificationData: server.verificationData,
    });
  };

  const checked = (req: RequestContext, key: ApiKey, body: VerifyBody, result: VerifiedChallenge | FailedVerification): Reply | Promise<Reply> => {
    if (!result.verified) {
      deps.onVerify(false, result.reason, req);
      deps.countUsage(req, key, null, requestOrigin(req));
      return failure(result.reason);
    }
    const enriching = enrich(deps.penalty, assess, { req, key, challenge: result, penalty: 0, fields: body.fields, timeZone: body.timeZone });
    if (!(enriching instanceof Promise)) return verified(req, key, body, result, enriching);
    const bounded = storeBudgetMs === Infinity ? enriching : within(enriching, req.startedAt + storeBudgetMs, NOTHING_KNOWN);
    return bounded.then((enriched) => verified(req, key, body, result, enriched));
  };

  const withKey = (req: RequestContext, key: ApiKey): Reply | Promise<Reply> => {
    const body = parseVerifyBody(req.json(), o.maxFields);
    const result = verifyPayload(body.payload, verifyDeps, key.id, body.code);
    return result instanceof Promise ? result.then((r) => checked(req, key, body, r)) : checked(req, key, body, result);
  };

  return (req: RequestContext): Reply | Promise<Reply> => {
    const key = deps.authorizeBrowser(req);
    return key instanceof Promise ? key.then((k) => withKey(req, k)) : withKey(req, key);
  };
}

interface Enriched {
  readonly penalty: number;
  readonly assessment: Assessment;
}

/** The client's penalty, then the assessment that weighs it: at once when both answer at once. */
function enrich(
  penaltyOf: VerifyRouteDeps['penalty'], assess: NonNullable<VerifyRouteDeps['assess']>, input: AssessInput,
): Enriched | Promise<Enriched> {
  const withPenalty = (penalty: number): Enriched | Promise<Enriched> => {
    const assessment = assess({ ...input, penalty });
    return assessment instanceof Promise ? assessment.then((a) => ({ penalty, assessment: a })) : { penalty, assessment };
  };
  const penalty = penaltyOf(input.req.ip);
  return penalty instanceof Promise ? penalty.then(withPenalty) : withPenalty(penalty);
}

/** What `work` resolves to, or `fallback` once performance.now() passes `deadline` (the work is then ignored). */
function within<T>(work: Promise<T>, deadline: number, fallback: T): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(fallback), Math.max(0, deadline - performance.now()));
    work.then((value) => { clearTimeout(timer); resolve(value); }, (err: unknown) => { clearTimeout(timer); reject(err); });
  });
}

function failure(reason: VerifyFailure | 'BAD_CLASSIFICATION'): Reply {
  let reply = FAILURE_BODIES.get(reason);
  if (!reply) FAILURE_BODIES.set(reason, (reply = json({ verified: false, reason })));
  return reply;
}

interface VerifyBody {
  readonly payload: string;
  /** The code typed for a code challenge, as sent; null when none was. */
  readonly code: string | null;
  readonly fields: Readonly<Record<string, string>> | null;
  readonly timeZone: string | null;
}

const TIME_ZONE = /^[A-Za-z0-9_+\-/]{1,64}$/;
/** C0 and C1 control characters and DEL. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const MAX_FIELD_NAME = 100;
/** A UTF-16 surrogate without its other half (JSON's "\ud800"): no URI encoding exists for it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * 400 INVALID_PAYLOAD without a payload string; 400 INVALID_PARAMETER for malformed extras. Written
 * out by hand on this hot path; test/unit/api-schema-conformance.test.ts holds it to VERIFY_BODY,
 * the schema of /v1/docs (src/api-schema/pow.ts).
 */
export function parseVerifyBody(body: unknown, maxFields: number): VerifyBody {
  if (!isObject(body) || typeof body.payload !== 'string') throw new PalisadeError('INVALID_PAYLOAD');
  let fields: Record<string, string> | null = null;
  if (body.fields !== undefined && body.fields !== null) {
    if (!isObject(body.fields)) throw new PalisadeError('INVALID_PARAMETER', 'fields must be an object of strings');
    const names = Object.keys(body.fields);
    if (names.length > maxFields) throw new PalisadeError('INVALID_PARAMETER', `at most ${maxFields} fields`);
    fields = Object.create(null) as Record<string, string>;
    for (const name of names) {
      const value = body.fields[name];
      if (typeof value !== 'string' || name.length > MAX_FIELD_NAME) {
        throw new PalisadeError('INVALID_PARAMETER', 'fields must map names of at most 100 characters to strings');
      }
      // The names are signed into verificationData as a query string.
      if (LONE_SURROGATE.test(name)) throw new PalisadeError('INVALID_PARAMETER', 'field names must be well-formed Unicode');
      fields[name] = value;
    }
  }
  let timeZone: string | null = null;
  if (body.timeZone !== undefined && body.timeZone !== null) {
    if (typeof body.timeZone !== 'string' || !TIME_ZONE.test(body.timeZone)) {
      throw new PalisadeError('INVALID_PARAMETER', 'timeZone must be an IANA time zone name');
    }
    timeZone = body.timeZone;
  }
  // A code is what a person typed: a short string of printable characters. Anything else is a
  // malformed request (400), not a wrong code; a well-formed wrong one is INCORRECT_CODE (200).
  let code: string | null = null;
  if (body.code !== undefined && body.code !== null) {
    if (typeof body.code !== 'string') throw new PalisadeError('INVALID_PARAMETER', 'code must be a string');
    if (body.code.length > MAX_SUBMITTED_CODE) throw new PalisadeError('INVALID_PARAMETER', `code must be at most ${MAX_SUBMITTED_CODE} characters`);
    if (CONTROL.test(body.code)) throw new PalisadeError('INVALID_PARAMETER', 'code must not contain control characters');
    code = body.code;
  }
  return { payload: body.payload, code, fields, timeZone };
}

/** The request's origin: the Origin header, else the origin of the Referer; null when neither is usable. */
export function requestOrigin(req: RequestContext): string | null {
  const origin = req.headers.origin;
  if (origin && origin !== 'null' && origin.length <= 256) return origin;
  const referer = req.headers.referer;
  if (!referer || referer.length > 2048) return null;
  try {
    const o = new URL(referer).origin;
    return o === 'null' ? null : o;
  } catch {
    return null;
  }
}
