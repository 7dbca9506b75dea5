// Registers the API routes (everything but the operational endpoints) with their dependencies.
import { hkdfSync } from 'node:crypto';
import type { Config } from '../config.js';
import type { AbuseProtection } from '../abuse/index.js';
import { isPalisadeError, PalisadeError } from '../errors.js';
import type { Router } from '../http/router.js';
import type { RequestContext, UsageMark } from '../http/types.js';
import { authorizeBrowser, authorizeServer, createPlanLimitCheck } from '../keys/authorize.js';
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

export function registerApiRoutes(router: Router, config: Config, services: Services, metrics: Metrics, abuse: AbuseProtection): void {
  const { store, keys, usage } = services;
  const claimOnce = (id: string, untilMs: number) => store.claimOnce(id, untilMs);
  // The verify route's claim: a boolean at once when the store answers on this thread.
  const claimNow = (id: string, untilMs: number): boolean | Promise<boolean> => {
    const sync = store.sync;
    return sync === undefined ? store.claimOnce(id, untilMs) : sync.claimOnceSync(id, untilMs);
  };
  const planLimit = createPlanLimitCheck(services.accountUsage);
  const penalty = (ip: string) => abuse.penaltyFor(ip);
  // After authentication: plan limit, then the key's own rate rule. The key itself, without a
  // Promise, when neither has anything to wait for (an unlimited plan, no rule of its own).
  const guard = (key: ApiKey, req: RequestContext): ApiKey | Promise<ApiKey> => {
    req.authorizedKey = key;
    const plan = planLimit(key);
    if (plan !== undefined) return plan.then(() => abuse.checkKeyRateLimit(key, req)).then(() => key);
    const rate = abuse.checkKeyRateLimit(key, req);
    return rate === undefined ? key : rate.then(() => key);
  };
  const browser = (req: RequestContext): ApiKey | Promise<ApiKey> => {
    const key = authorizeBrowser(req, keys);
    return key instanceof Promise ? key.then((k) => guard(k, req)) : guard(key, req);
  };
  // Verification refuses IPs marked malicious before spending any work on them.
  const verifier = (req: RequestContext): ApiKey | Promise<ApiKey> => {
    const blocked = abuse.assertNotBlocked(req.ip);
    return blocked instanceof Promise ? blocked.then(() => browser(req)) : browser(req);
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
  const onVerify = (success: boolean, reason: string | null, req: RequestContext) => {
    if (success) {
      metrics.verificationsSuccess.inc();
      return;
    }
    metrics.verificationsFailed.inc({ reason: reason ?? 'UNKNOWN' });
    void abuse.verificationFailed(req.ip, reason ?? 'UNKNOWN', req.path === '/challenge/verify' ? 'server_payload' : 'widget');
  };
  const clockSkewMs = config.CLAIM_CLOCK_SKEW;

  router.add('GET', '/v1/challenge', createChallengeHandler({
    authorizeBrowser: browser,
    secrets: services.pow,
    // Refuses IPs marked malicious, notes the header combination, and scales the work by the penalty.
    // A challenge request counts as one request of the key only once it is not refused, as in the
    // verify route, so a blocked client does not spend the key's plan.
    penalty: (req) => {
      const penalty = abuse.challengePenalty(req);
      if (typeof penalty === 'number') {
        countUsage(req, req.authorizedKey!, null, originOf(req));
        return penalty;
      }
      return penalty.then((p) => {
        countUsage(req, req.authorizedKey!, null, originOf(req));
        return p;
      });
    },
    onChallenge: () => metrics.challenges.inc(),
    pool: services.pool,
  }, {
    publicBaseUrl: `${config.BASE_URL.replace(/\/+$/, '')}${config.APP_BASE_PATH}`,
    maxMemoryBytes: config.POW_MAX_MEMORY,
    maxExpiresMs: config.CACHE_DURATION_USED_CHALLENGES * 1000 - clockSkewMs,
  }));

  router.add('POST', '/v1/verify', createVerifyHandler({
    authorizeBrowser: verifier, secrets: services.pow, claimOnce: claimNow, penalty, onVerify, countUsage,
    assess: (input) => abuse.assess(input),
  }, {
    clockSkewMs, anonymizeIp: config.ANONYMIZE_IP_ADDRESS,
    storeBudgetMs: store.kind === 'redis' ? config.REDIS_COMMAND_TIMEOUT : Infinity,
  }));

  router.add('POST', '/v1/verify/signature', createVerifySignatureHandler({ findKey, claimOnce }, { clockSkewMs }));

  router.add('POST', '/challenge/verify', createChallengeVerifyHandler({
    authorizeServer: server, findKey, secrets: services.pow, claimOnce, onVerify, countUsage,
  }, { clockSkewMs }));

  router.add('GET', '/usage', usageRoute({ sql: services.db.sql, authorizeServer: server, currentMonth: usage.currentMonth }));

  const generateLimit = config.API_KEY_GENERATE_RATE_LIMIT;
  router.add('POST', '/api_key/generate', apiKeyGenerateRoute({
    sql: services.db.sql,
    secrets: services.keySecrets,
    accountId: services.defaultAccountId,
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
}

function originOf(req: RequestContext): string | null {
  const origin = requestOrigin(req.headers);
  return origin === null ? null : origin.origin;
}
