// A rate rule on one endpoint (spec section 8 syntax), counted in the state store under the
// endpoint's own scope ('audio|ip:…') so it never shares a window with the flood limit or a key's
// rule. Store failures fail open as the other abuse checks do (store-failure.ts). Used by the audio
// challenge (AUDIO_CHALLENGE_RATE_LIMIT).
import { PalisadeError } from '../errors.js';
import type { RequestContext } from '../http/types.js';
import type { Logger } from '../log.js';
import type { RateRule } from '../parse.js';
import { limitKey } from '../store/limit-key.js';
import type { StateStore } from '../store/state-store.js';
import type { DeviceKeys } from './device-key.js';
import type { AbuseMetrics, RateLimitReason } from './metrics.js';
import { retryAfterSeconds } from './rate-limited.js';
import { createStoreFailureHandler, type StoreFailureOptions } from './store-failure.js';

export interface EndpointRateLimitDeps {
  readonly store: StateStore;
  readonly deviceKeys: DeviceKeys;
  readonly logger: Logger;
  readonly metrics: AbuseMetrics;
}

/** Resolves when the request may go on; rejects with RATE_LIMITED (retryAfter in seconds) past the rule. */
export type EndpointRateLimit = (req: Pick<RequestContext, 'ip' | 'headers' | 'query'>) => Promise<void>;

/** `rule` counted per `scope`; null (the variable left empty) gives a check that always passes. */
export function createEndpointRateLimit(
  deps: EndpointRateLimitDeps, rule: RateRule | null, scope: RateLimitReason, options: StoreFailureOptions = {},
): EndpointRateLimit {
  if (rule === null) return () => Promise.resolve();
  const now = options.now ?? Date.now;
  const onStoreError = createStoreFailureHandler(deps.logger, deps.metrics, options);
  const prefix = `${scope}|`;
  return (req) => deps.store.hit(prefix + limitKey(rule, {
    ip: req.ip,
    apiKey: req.query.get('apiKey') ?? undefined,
    device: rule.key === 'device' ? deps.deviceKeys.key(req.ip, req.headers) : undefined,
  }), rule).then((result) => {
    if (result.allowed) return;
    deps.metrics.rateLimited(scope);
    throw new PalisadeError('RATE_LIMITED', undefined, retryAfterSeconds(result, now()));
  }, (err: unknown) => onStoreError(err, `${scope}_rate_limit`));
}
