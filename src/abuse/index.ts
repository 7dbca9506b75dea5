// Abuse protection (issue 6), framework-neutral: the HTTP layer and the routes call these functions;
// nothing here touches uWS. One object per worker, built from the configuration:
//
//   beforeRoute(req, exempt)   HttpServerOptions.beforeRoute: probe paths counted (answered 404 by
//                              the router as usual), smuggling-shaped framing counted and answered
//                              400, then the flood limit (429). undefined when there is nothing to do.
//   checkKeyRateLimit(key, req)    after authorising a key: its own rate rule (429).
//   checkAudioRateLimit(req)   GET /v1/challenge/audio: AUDIO_CHALLENGE_RATE_LIMIT (429).
//   challengePenalty(req)      GET /v1/challenge: 403 IP_BLOCKED for a malicious mark; notes the
//                              header combination; the penalty to pass to scalePolicy.
//   assertNotBlocked(ip)       POST /v1/verify (and the other verify routes) before verifying.
//   penaltyFor(ip)             verificationData.penalty.
//   (challengePenalty and assertNotBlocked also look the IP up in the threat lists: `listed` below.)
//   verificationFailed(ip, reason)   every failed verification: failure count, points, malicious events.
//   assess({req, penalty})     verificationData.score (score.ts).
//
// Penalty of an IP = points within PENALTY_TTL (penalty.ts) + the raises of its current marks
// (threats.ts). Adaptive difficulty is src/pow/policy.ts scalePolicy(policy, penalty): the work
// asked is (1 + penalty) times the normal, capped at maxCost / cost (16x by default).
import type { Registry } from 'prom-client';
import { errorBody, PalisadeError } from '../errors.js';
import type { Reply, RequestContext } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import type { Logger } from '../log.js';
import type { RateRule, RateRuleKey } from '../parse.js';
import type { StateStore } from '../store/state-store.js';
import { createDeviceKeys, type DeviceKeys } from './device-key.js';
import { createFloodGuard, type FloodGuard, type FloodRequest, type KnownKey } from './flood.js';
import { createHeaderEntropy, type HeaderEntropy } from './header-entropy.js';
import { createKeyRateLimiter, type KeyRateRequest } from './key-rate-limit.js';
import { createEndpointRateLimit, type EndpointRateLimit } from './endpoint-rate-limit.js';
import { createAbuseMetrics, type AbuseMetrics, type MaliciousReason } from './metrics.js';
import { createPenalties, type PenaltyReason, type Penalties } from './penalty.js';
import { probeFamily } from './probe-paths.js';
import { score } from './score.js';
import { smugglingShape } from './smuggling.js';
import { createThreats, THREAT_DEFAULTS, type IntelligenceKind, type ThreatOptions, type ThreatOutcome, type ThreatRules, type Threats } from './threats.js';
import { KIND_BIT } from '../intel/threat-sources.js';
import type { IntelAssessment } from '../intel/intel.js';

export { score } from './score.js';
export { probeFamily, PROBE_FAMILIES, type ProbeFamily } from './probe-paths.js';
export { smugglingShape, type SmugglingShape } from './smuggling.js';
export { createDeviceKeys, DEVICE_HEADERS, type DeviceKeys } from './device-key.js';
export { createFloodGuard, apiKeyIdOf, type FloodGuard, type KnownKey } from './flood.js';
export { createKeyRateLimiter, type KeyRateLimiter } from './key-rate-limit.js';
export { createThreats, type ThreatRules, type Threats, type ThreatOutcome, type IntelligenceKind } from './threats.js';
export { createPenalties, type Penalties, type PenaltyReason } from './penalty.js';
export { createHeaderEntropy, type HeaderEntropy } from './header-entropy.js';
export { createAbuseMetrics, type AbuseMetrics, type MaliciousReason, type ThreatKind } from './metrics.js';

/** The configuration the abuse protection reads (names as in src/config/). */
export interface AbuseConfig {
  readonly FLOOD_RATE_LIMIT: RateRule | null;
  readonly FLOOD_RATE_LIMIT_KEY: RateRuleKey;
  /** The audio challenge's rule; undefined or null: none. */
  readonly AUDIO_CHALLENGE_RATE_LIMIT?: RateRule | null;
  readonly THREATS_ENABLED: boolean;
  readonly THREATS_PROBE_LIMIT: RateRule | null;
  readonly THREATS_MALICIOUS_LIMIT: RateRule | null;
  readonly THREATS_BOT_LIMIT: RateRule | null;
  readonly THREATS_PROXY_LIMIT: RateRule | null;
  readonly THREATS_TOR_LIMIT: RateRule | null;
  /** ms. */
  readonly PENALTY_TTL: number;
  readonly HEADER_ENTROPY_MAX_ENTRIES: number;
  readonly ANONYMIZE_IP_ADDRESS: boolean;
  readonly secrets: { readonly HASHING_SALT: string };
}

export interface AbuseDeps {
  readonly store: StateStore;
  readonly logger: Logger;
  /** The worker's prom-client registry; default a private one. */
  readonly registry?: Registry;
  /** Synchronous API-key cache peek for apiKey/account flood keys (flood.ts). */
  readonly knownKey?: KnownKey;
  /** The threat lists (src/intel/threat-index.ts): the kinds listing an IP as KIND_BIT bits. */
  readonly threatLists?: { match(ip: string): number };
  /** IP intelligence (src/intel/intel.ts): high-risk country, trusted x-ip-* headers, declared bots. */
  readonly intel?: { assess(ip: string, headers: Readonly<Record<string, string>> | undefined): IntelAssessment };
}

export interface AbuseOptions extends Pick<ThreatOptions, 'eventPenalty' | 'markPenalty' | 'escalateProbes'> {
  /** Least time between two "store failed" warnings of one check. Default 10,000 ms. */
  warnIntervalMs?: number;
  /** Header combinations remembered per worker. Default 10,000. */
  headerLruSize?: number;
  /** Epoch-ms clock (tests). Default Date.now. */
  now?: () => number;
}

/** How failed verifications count. Reasons not listed (CHALLENGE_EXPIRED: a slow human) count nothing. */
export const FAILURE_POLICY: Readonly<Record<string, { readonly points: number; readonly malicious?: MaliciousReason }>> = Object.freeze({
  INVALID_SOLUTION: { points: 1 },
  INVALID_PAYLOAD: { points: 1 },
  // A mistyped code is what people do; repeated, it raises the risk that asks for the next code.
  INCORRECT_CODE: { points: 1 },
  ALTCHA_INVALID: { points: 1 },
  INVALID_SIGNATURE: { points: 2, malicious: 'invalid_signature' },
  PAYLOAD_ALREADY_USED: { points: 2, malicious: 'replayed' },
  SIGNATURE_SALT_REUSED: { points: 2, malicious: 'replayed' },
  ALTCHA_ALREADY_USED: { points: 2, malicious: 'replayed' },
});

export interface RiskAssessment {
  /** GOOD < 1 ≤ NEUTRAL < 2 ≤ BAD. */
  readonly score: number;
  readonly reasons: readonly string[];
}

export interface AbuseProtection {
  readonly metrics: AbuseMetrics;
  readonly flood: FloodGuard;
  readonly threats: Threats;
  readonly penalties: Penalties;
  readonly deviceKeys: DeviceKeys;
  readonly headerEntropy: HeaderEntropy;
  /** For HttpServerOptions.beforeRoute; undefined when neither the flood limit nor threat detection is on. */
  readonly beforeRoute: ((req: BeforeRouteRequest, exempt: boolean) => Reply | undefined | Promise<Reply | undefined>) | undefined;
  /** The key's own rate rule; rejects with RATE_LIMITED (retryAfter seconds). */
  checkKeyRateLimit(key: ApiKey, req: KeyRateRequest): void | Promise<void>;
  /** AUDIO_CHALLENGE_RATE_LIMIT; rejects with RATE_LIMITED (retryAfter seconds). */
  checkAudioRateLimit: EndpointRateLimit;
  /**
   * Throws (or rejects) with IP_BLOCKED for a malicious-marked IP; notes the header combination; the
   * penalty. Synchronous with the shared-memory store for a header combination this worker knows.
   */
  challengePenalty(req: Pick<RequestContext, 'ip' | 'headers'>): number | Promise<number>;
  /** Throws (or rejects) with IP_BLOCKED for a malicious-marked IP; synchronous with the shared-memory store. */
  assertNotBlocked(ip: string): void | Promise<void>;
  /** Points within PENALTY_TTL plus mark raises; a number at once with the shared-memory store. */
  penaltyFor(ip: string, headers?: Readonly<Record<string, string>>): number | Promise<number>;
  penalize(ip: string, n: number, reason: PenaltyReason): Promise<number>;
  /** After a failed verification with `reason` (a VerifyFailure or an authorisation error code). */
  verificationFailed(ip: string, reason: string, source?: 'widget' | 'server_payload'): Promise<void>;
  /** Fits VerifyRouteDeps.assess: the score from the penalty and the failed attempts (at once with shared memory). */
  assess(input: { readonly req: Pick<RequestContext, 'ip'>; readonly penalty: number }): RiskAssessment | Promise<RiskAssessment>;
  recordMalicious(ip: string, reason: MaliciousReason): Promise<ThreatOutcome>;
  /** The IP-intelligence plug (threats.ts reportThreat). */
  reportThreat(ip: string, kind: IntelligenceKind): Promise<ThreatOutcome>;
}

export type BeforeRouteRequest = FloodRequest & Pick<RequestContext, 'path' | 'rawQuery'>;

const BAD_REQUEST: Reply = Object.freeze({ status: 400, body: errorBody('BAD_REQUEST') });
const NO_REASONS: readonly string[] = Object.freeze([]);

export function createAbuseProtection(config: AbuseConfig, deps: AbuseDeps, options: AbuseOptions = {}): AbuseProtection {
  const { store, logger } = deps;
  const metrics = createAbuseMetrics(deps.registry);
  const common = { warnIntervalMs: options.warnIntervalMs, now: options.now };
  const deviceKeys = createDeviceKeys(config.secrets.HASHING_SALT, { now: options.now });
  const penalties = createPenalties({ store, logger, metrics }, { ...common, ttlMs: config.PENALTY_TTL });
  const rules: ThreatRules = {
    probe: config.THREATS_PROBE_LIMIT, malicious: config.THREATS_MALICIOUS_LIMIT,
    bot: config.THREATS_BOT_LIMIT, proxy: config.THREATS_PROXY_LIMIT, tor: config.THREATS_TOR_LIMIT,
  };
  const threats = createThreats({ store, enabled: config.THREATS_ENABLED, rules, penalties, logger, metrics }, {
    ...common, anonymizeIp: config.ANONYMIZE_IP_ADDRESS,
    eventPenalty: options.eventPenalty, markPenalty: options.markPenalty, escalateProbes: options.escalateProbes,
  });
  const headerEntropy = createHeaderEntropy({ store, deviceKeys, penalties, logger, metrics }, {
    ...common, maxEntries: config.HEADER_ENTROPY_MAX_ENTRIES, lruSize: options.headerLruSize,
  });
  const flood = createFloodGuard({
    store, rule: config.FLOOD_RATE_LIMIT, key: config.FLOOD_RATE_LIMIT_KEY, deviceKeys, knownKey: deps.knownKey, logger, metrics,
  }, common);
  const keyLimits = createKeyRateLimiter({ store, deviceKeys, logger, metrics }, common);
  const audioLimit = createEndpointRateLimit({ store, deviceKeys, logger, metrics }, config.AUDIO_CHALLENGE_RATE_LIMIT ?? null, 'audio_challenge', common);

  // Threat lists (docs/threats.md): a listed IP's proxy/tor/bot kinds are reported as threat events
  // (THREATS_<KIND>_LIMIT decides when they mark it); a malicious listing raises the penalty by what
  // a malicious mark raises it, for as long as the IP stays listed (it does not block: lists are
  // broad, and a listed client can still solve the harder challenge).
  const lists = config.THREATS_ENABLED ? deps.threatLists : undefined;
  const listedRaise = options.markPenalty?.malicious ?? THREAT_DEFAULTS.markPenalty.malicious;
  /** Looks `ip` up; reports its intelligence kinds when `report`; the penalty raise of a malicious listing. */
  const listed = (ip: string, report: boolean, headers?: Readonly<Record<string, string>>): number => {
    // Intelligence (docs/intel.md): its raises, a trusted malicious flag as a malicious listing, and
    // its threat events (a trusted proxy/tor flag, a declared bot) counted as list matches are.
    const intel = deps.intel?.assess(ip, headers);
    let extra = 0;
    if (intel !== undefined) {
      extra = intel.raise;
      if (report) for (const kind of intel.report) void threats.reportThreat(ip, kind);
    }
    if (lists === undefined) return extra + (intel?.malicious ? listedRaise : 0);
    const bits = lists.match(ip);
    if (bits === 0) return extra + (intel?.malicious ? listedRaise : 0);
    if (report) {
      if (bits & KIND_BIT.malicious) metrics.listMatch('malicious');
      if (bits & KIND_BIT.proxy) { metrics.listMatch('proxy'); void threats.reportThreat(ip, 'proxy'); }
      if (bits & KIND_BIT.tor) { metrics.listMatch('tor'); void threats.reportThreat(ip, 'tor'); }
      if (bits & KIND_BIT.bot) { metrics.listMatch('bot'); void threats.reportThreat(ip, 'bot'); }
    }
    return extra + (bits & KIND_BIT.malicious || intel?.malicious ? listedRaise : 0);
  };

  const probes = threats.enabled && config.THREATS_PROBE_LIMIT !== null;
  const smuggling = threats.enabled && config.THREATS_MALICIOUS_LIMIT !== null;
  let beforeRoute: AbuseProtection['beforeRoute'];
  if (probes || smuggling) {
    beforeRoute = (req, exempt) => {
      if (!exempt) {
        if (probes && probeFamily(req.path, req.rawQuery) !== null) void threats.recordProbe(req.ip);
        if (smuggling && smugglingShape(req.headers) !== null) {
          void threats.recordMalicious(req.ip, 'smuggling');
          return BAD_REQUEST;
        }
      }
      return flood.check(req, exempt);
    };
  } else if (flood.enabled) {
    beforeRoute = flood.check;
  }

  const blocked = (): never => {
    metrics.blocked('malicious');
    throw new PalisadeError('IP_BLOCKED');
  };
  const penaltyFor = (ip: string, headers?: Readonly<Record<string, string>>): number | Promise<number> => {
    const raise = listed(ip, false, headers);
    const standing = threats.standingSync(ip);
    if (standing !== undefined) return penalties.scoreSync(ip)! + standing.markPenalty + raise;
    return Promise.all([penalties.score(ip), threats.standing(ip)]).then(([points, s]) => points + s.markPenalty + raise);
  };
  const assessment = (penalty: number, failures: number): RiskAssessment => {
    const s = score(penalty, failures);
    if (penalty <= 0 && failures <= 0) return { score: s, reasons: NO_REASONS };
    const reasons: string[] = [];
    if (penalty > 0) reasons.push('penalty');
    if (failures > 0) reasons.push('failed_attempts');
    return { score: s, reasons };
  };

  return {
    metrics, flood, threats, penalties, deviceKeys, headerEntropy, beforeRoute,
    checkKeyRateLimit: keyLimits.checkKeyRateLimit,
    checkAudioRateLimit: audioLimit,
    challengePenalty(req) {
      const standing = threats.standingSync(req.ip);
      if (standing !== undefined) {
        // Shared memory: every read on this thread; only a new header combination waits for its count.
        const observed = headerEntropy.observe(req);
        if (standing.blocked) blocked();
        const raise = listed(req.ip, true, req.headers);
        if (typeof observed === 'number') return penalties.scoreSync(req.ip)! + standing.markPenalty + raise;
        return observed.then(() => penalties.score(req.ip)).then((points) => points + standing.markPenalty + raise);
      }
      return Promise.all([
        threats.standing(req.ip),
        Promise.resolve(headerEntropy.observe(req)).then(() => penalties.score(req.ip)),
      ]).then(([s, points]) => {
        if (s.blocked) blocked();
        return points + s.markPenalty + listed(req.ip, true, req.headers);
      });
    },
    assertNotBlocked(ip) {
      listed(ip, true);
      const now = threats.isBlockedSync(ip);
      if (now !== undefined) {
        if (now) blocked();
        return;
      }
      return threats.isBlocked(ip).then((b) => { if (b) blocked(); });
    },
    penaltyFor,
    penalize: (ip, n, reason) => penalties.penalize(ip, n, reason),
    async verificationFailed(ip, reason, source = 'widget') {
      if (!Object.hasOwn(FAILURE_POLICY, reason)) return;
      const policy = FAILURE_POLICY[reason]!;
      const malicious = policy.malicious === 'invalid_signature' && source === 'server_payload' ? 'tampered' : policy.malicious;
      await Promise.all([
        penalties.recordFailure(ip),
        penalties.penalize(ip, policy.points, 'failed_verification'),
        malicious ? threats.recordMalicious(ip, malicious) : undefined,
      ]);
    },
    assess({ req, penalty }) {
      const failures = penalties.failedAttemptsSync(req.ip);
      if (failures !== undefined) return assessment(penalty, failures);
      return penalties.failedAttempts(req.ip).then((f) => assessment(penalty, f));
    },
    recordMalicious: (ip, reason) => threats.recordMalicious(ip, reason),
    reportThreat: (ip, kind) => threats.reportThreat(ip, kind),
  };
}
