// Registers the API routes (everything but the operational endpoints) with their dependencies.
import { hkdfSync } from 'node:crypto';
import type { Config } from '../config/index.js';
import type { AbuseProtection } from '../abuse/index.js';
import { isPalisadeError, PalisadeError } from '../errors.js';
import type { Router } from '../http/router.js';
import type { RequestContext, UsageMark } from '../http/types.js';
import { authorizeBrowser, authorizeServer } from '../keys/authorize.js';
import { requestOrigin } from '../keys/hostnames.js';
import type { ApiKey } from '../keys/types.js';
import type { Classification } from '../usage/usage-buffer.js';
import type { Metrics } from '../metrics.js';
import type { Services } from '../services.js';
import { limitKey } from '../store/index.js';
import { apiKeyGenerateRoute } from './api-key-generate.js';
import { createChallengeVerifyHandler } from './challenge-verify.js';
import { createChallengeHandler } from './challenge.js';
import { usageRoute } from './usage.js';
import { createVerifySignatureHandler } from './verify-signature.js';
import { createVerifyHandler } from './verify.js';
import { inspectRoute } from './inspect.js';
import { classifierRoute } from './classifier.js';
import { trainingRoutes } from './training.js';
import { KeyPolicies } from '../classifier/key-policies.js';
import { withClassification } from '../classifier/verify-classification.js';
import type { ClassifierService } from '../classifier/service.js';
import type { Intel } from '../intel/intel.js';
import { checkCountry, parseCountryRules, type CountryRules } from '../intel/key-countries.js';
import { AUDIO_PATH, createAudioSynthesizer, createCodeChallenges } from '../code-challenge/index.js';
import type { CodeVerifier } from '../pow/verify.js';
import { createAudioHandler } from './code-audio.js';
import { createSpentMarks } from '../code-challenge/spent.js';

/** What registerApiRoutes started and stop() must release. */
export interface ApiRoutes {
  close(): Promise<void>;
}

export function registerApiRoutes(
  router: Router, config: Config, services: Services, metrics: Metrics, abuse: AbuseProtection, intel?: Intel, classifier?: ClassifierService,
): ApiRoutes {
  const { store, keys, usage } = services;
  const claimOnce = (id: string, untilMs: number) => store.claimOnce(id, untilMs);
  // The verify route's claim: a boolean at once when the store answers on this thread.
  const claimNow = (id: string, untilMs: number): boolean | Promise<boolean> => {
    const sync = store.sync;
    return sync === undefined ? store.claimOnce(id, untilMs) : sync.claimOnceSync(id, untilMs);
  };
  const chargePlan = services.planLimit;
  const penalty = (ip: string) => abuse.penaltyFor(ip);
  // After authentication: the key's own rate rule. The key itself, without a Promise, when there is
  // nothing to wait for (no rule of its own).
  const guard = (key: ApiKey, req: RequestContext): ApiKey | Promise<ApiKey> => {
    req.authorizedKey = key;
    const rate = abuse.checkKeyRateLimit(key, req);
    return rate === undefined ? key : rate.then(() => key);
  };
  // A key's country rules (src/intel/key-countries.ts): a blocked country is refused before the
  // plan and rate limits count the request; an unexpected one raises the challenge's penalty.
  const countryRulesOf = new WeakMap<object, CountryRules | null>();
  const countryRules = (key: ApiKey): CountryRules | null => {
    const stored = key.challengePolicy;
    if (stored === null || intel === undefined) return null;
    if (!countryRulesOf.has(stored)) countryRulesOf.set(stored, parseCountryRules(stored));
    return countryRulesOf.get(stored)!;
  };
  const countryRaise = (key: ApiKey, req: RequestContext): number => {
    const rules = countryRules(key);
    return rules === null ? 0 : checkCountry(rules, intel!.country(req.ip, req.headers));
  };
  const browser = (req: RequestContext): ApiKey | Promise<ApiKey> => {
    const key = authorizeBrowser(req, keys);
    if (key instanceof Promise) return key.then((k) => { countryRaise(k, req); return guard(k, req); });
    countryRaise(key, req);
    return guard(key, req);
  };
  // The plan is charged where a request is counted in usage, once nothing else refuses it: a
  // refused request spends none of the plan (src/usage/plan-limit.ts).
  const charged = (key: ApiKey): ApiKey | Promise<ApiKey> => {
    const plan = chargePlan(key);
    return plan === undefined ? key : plan.then(() => key);
  };
  // Verification refuses IPs marked malicious before spending any work (or plan) on them.
  const verifier = (req: RequestContext): ApiKey | Promise<ApiKey> => {
    const blocked = abuse.assertNotBlocked(req.ip);
    const key = blocked instanceof Promise ? blocked.then(() => browser(req)) : browser(req);
    return key instanceof Promise ? key.then(charged) : charged(key);
  };
  // A challenge counts as one request of the key's plan and usage once abuse protection let it through.
  const admitChallenge = (req: RequestContext, penalty: number): number | Promise<number> => {
    // guard() stored the ApiKey itself.
    const key = req.authorizedKey as ApiKey;
    const plan = chargePlan(key);
    if (plan === undefined) {
      countUsage(req, key, null, originOf(req));
      return penalty;
    }
    return plan.then(() => {
      countUsage(req, key, null, originOf(req));
      return penalty;
    });
  };
  const server = async (req: RequestContext) => {
    try {
      const key = await authorizeServer(req, keys, claimOnce, { basePath: config.APP_BASE_PATH, clockSkewMs });
      return await guard(key, req);
    } catch (err) {
      // Forged signatures and replayed salts count against the caller's IP.
      if (isPalisadeError(err)) void abuse.verificationFailed(req.ip, err.code);
      throw err;
    }
  };
  const findKey = (id: string) => keys.getKey(id);
  // Counted as the reply is written (src/app.ts onWrite), not here.
  const countUsage = (req: RequestContext, key: UsageMark['key'], classification: Classification | null, origin: string | null): void => {
    req.usage = { key, classification, origin };
  };
  const onVerify = (success: boolean, reason: string | null, req: RequestContext, source: 'widget' | 'server_payload' = 'widget') => {
    if (success) {
      metrics.verificationsSuccess.inc();
      return;
    }
    metrics.verificationsFailed.inc({ reason: reason ?? 'UNKNOWN' });
    void abuse.verificationFailed(req.ip, reason ?? 'UNKNOWN', source);
  };
  const clockSkewMs = config.CLAIM_CLOCK_SKEW;
  const keyPolicies = new KeyPolicies();
  const publicBaseUrl = `${config.BASE_URL.replace(/\/+$/, '')}${config.APP_BASE_PATH}`;

  // Code challenges (docs/code-challenge.md); the audio route learns which were submitted from spent.ts.
  const codeChallenges = createCodeChallenges(config.secrets.CODE_CHALLENGE_SECRET, { publicBaseUrl });
  const synthesizer = createAudioSynthesizer();
  const spentMarks = createSpentMarks(store);
  const codeVerifier: CodeVerifier = { check: codeChallenges.check, spent: spentMarks.mark };
  const risk = (req: RequestContext, penalty: number): number | Promise<number> => {
    const a = abuse.assess({ req, penalty });
    return a instanceof Promise ? a.then((x) => x.score) : a.score;
  };

  router.add('GET', '/v1/challenge', createChallengeHandler({
    authorizeBrowser: browser,
    secrets: services.pow,
    // Refuses IPs marked malicious, notes the header combination, and scales the work by the penalty.
    // A challenge request counts as one request of the key only once it is not refused, as in the
    // verify route, so a blocked client does not spend the key's plan.
    penalty: (req) => {
      const penalty = abuse.challengePenalty(req);
      // A blocked country is refused (COUNTRY_BLOCKED) before the request is charged to the plan.
      const extra = intel === undefined ? 0 : countryRaise(req.authorizedKey as ApiKey, req);
      return typeof penalty === 'number' ? admitChallenge(req, penalty + extra) : penalty.then((p) => admitChallenge(req, p + extra));
    },
    onChallenge: () => metrics.challenges.inc(),
    pool: services.pool,
    codeChallenges,
    risk,
    sentinelConfig: classifier === undefined ? undefined : (key) => {
      const p = keyPolicies.classification(key);
      return p.fields || p.timeZone ? p.sentinel : null;
    },
  }, {
    publicBaseUrl,
    maxMemoryBytes: config.POW_MAX_MEMORY,
    maxExpiresMs: config.CACHE_DURATION_USED_CHALLENGES - clockSkewMs,
  }));

  router.add('POST', '/v1/verify', createVerifyHandler({
    authorizeBrowser: verifier, secrets: services.pow, claimOnce: claimNow, penalty, onVerify, countUsage,
    assess: classifier === undefined || intel === undefined
      ? (input) => abuse.assess(input)
      : withClassification((input) => abuse.assess(input), { classifier, intel, policies: keyPolicies, anonymizeIp: config.ANONYMIZE_IP_ADDRESS }),
    clientSignals: intel === undefined ? undefined : (req) => intel.client(req.ip, req.headers),
    code: codeVerifier,
  }, {
    clockSkewMs, anonymizeIp: config.ANONYMIZE_IP_ADDRESS,
    storeBudgetMs: store.kind === 'redis' ? config.REDIS_COMMAND_TIMEOUT : Infinity,
  }));

  if (config.INSPECT_ROUTE_ENABLED && intel !== undefined) {
    router.add('GET', '/v1/inspect', inspectRoute({
      // Inspecting is not refused for a blocked country: the answer says so (key.countryBlocked).
      authorizeBrowser: (req) => {
        const key = authorizeBrowser(req, keys);
        return key instanceof Promise ? key.then((k) => guard(k, req)) : guard(key, req);
      },
      intel,
      deviceKey: (ip, headers) => abuse.deviceKeys.key(ip, headers),
      penalty: (ip, headers) => abuse.penaltyFor(ip, headers),
      score: (ip, penalty) => {
        const a = abuse.assess({ req: { ip }, penalty });
        return a instanceof Promise ? a.then((x) => x.score) : a.score;
      },
      marks: async (ip) => {
        const kinds = ['probe', 'malicious', 'bot', 'proxy', 'tor'] as const;
        const marked = await Promise.all(kinds.map((k) => abuse.threats.isMarked(ip, k)));
        return kinds.filter((_, i) => marked[i]);
      },
      lists: (ip) => intel.lists(ip),
      anonymizeIp: config.ANONYMIZE_IP_ADDRESS,
    }));
  }

  if (classifier !== undefined && intel !== undefined) {
    router.add('POST', '/v1/classifier', classifierRoute({
      authorize: async (req) => charged(await server(req)),
      classifier, intel, penalty, countUsage, anonymizeIp: config.ANONYMIZE_IP_ADDRESS,
    }), { bodyLimit: config.CLASSIFIER_BODY_LIMIT });
    const training = trainingRoutes({
      authorize: server, sql: services.db.sql, invalidate: (accountId) => classifier.training.invalidate(accountId),
    });
    router.add('GET', '/v1/training', training.list);
    router.add('POST', '/v1/training', training.add);
    router.add('DELETE', '/v1/training', training.remove);
  }

  router.add('GET', AUDIO_PATH, createAudioHandler({
    // As for its challenges: an IP marked malicious is refused, and the key's hostnames, country
    // rules and own rate rule apply; the audio request is not counted in the plan (the challenge it
    // belongs to was).
    authorizeBrowser: (req) => {
      const blocked = abuse.assertNotBlocked(req.ip);
      return blocked instanceof Promise ? blocked.then(() => browser(req)) : browser(req);
    },
    codeChallenges,
    synthesizer,
    rateLimit: abuse.checkAudioRateLimit,
    spent: spentMarks.isSpent,
  }, { delayMs: config.AUDIO_CHALLENGE_DELAY }));

  router.add('POST', '/v1/verify/signature', createVerifySignatureHandler({ findKey, claimOnce }, { clockSkewMs }));

  router.add('POST', '/challenge/verify', createChallengeVerifyHandler({
    authorizeServer: server, findKey, secrets: services.pow, claimOnce, onVerify, countUsage, chargePlan,
  }, { clockSkewMs }));

  router.add('GET', '/usage', usageRoute({ sql: services.db.sql, authorizeServer: server, currentMonth: usage.currentMonth }));


  const generateLimit = config.API_KEY_GENERATE_RATE_LIMIT;
  router.add('POST', '/api_key/generate', apiKeyGenerateRoute({
    sql: services.db.sql,
    secrets: services.keySecrets,
    hmacKey: Buffer.from(hkdfSync('sha256', config.secrets.PALISADE_HMAC_SECRET, '', 'palisade m2m challenges', 32)),
    claimOnce,
    rateLimit: generateLimit === null ? undefined : async (req) => {
      const hit = await store.hit(`keygen:${limitKey(generateLimit, { ip: req.ip })}`, generateLimit);
      if (!hit.allowed) {
        metrics.rateLimited.inc({ reason: 'api_key_generate' });
        const until = hit.blockedUntil > Date.now() ? hit.blockedUntil - Date.now() : hit.resetMs;
        throw new PalisadeError('RATE_LIMITED', undefined, until / 1000);
      }
    },
  }));

  return { close: () => synthesizer.close() };
}

function originOf(req: RequestContext): string | null {
  const origin = requestOrigin(req.headers);
  return origin === null ? null : origin.origin;
}
