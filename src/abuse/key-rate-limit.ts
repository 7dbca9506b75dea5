// Per-API-key rate limits (ApiKey.rateLimit, spec section 8 syntax) on the key's endpoints. The rule
// text is parsed once per key id and text (a changed rule takes effect when the key cache reloads
// the key). The count is scoped to the key: `key=ip` (the default) limits each client IP (/64) of
// this key, `device` each device of this key, `apiKey` the key as a whole, `account` all keys of
// the account that use a rule with the same window length (the stores count one key per window
// length; each key applies its own count). Store failures fail open, as for the flood limit; an
// unparsable stored rule (or one the stores cannot hold) is logged once and not applied.
import { PalisadeError } from '../errors.js';
import type { RequestContext } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import type { Logger } from '../log.js';
import { parseRateRule, type RateRule } from '../parse.js';
import { ipKey } from '../store/limit-key.js';
import { checkRule, type StateStore } from '../store/state-store.js';
import type { DeviceKeys } from './device-key.js';
import type { AbuseMetrics } from './metrics.js';
import { retryAfterSeconds } from './rate-limited.js';
import { createStoreFailureHandler, type StoreFailureOptions } from './store-failure.js';

export type KeyRateRequest = Pick<RequestContext, 'ip' | 'headers'>;

export interface KeyRateLimitDeps {
  readonly store: StateStore;
  /** Needed for rules with key=device; without it such rules count per ip. */
  readonly deviceKeys?: DeviceKeys;
  readonly logger: Logger;
  readonly metrics: AbuseMetrics;
}

export interface KeyRateLimitOptions extends StoreFailureOptions {
  /** Parsed rules kept (one per key id). Default 10,000; the oldest entry goes first. */
  maxCachedRules?: number;
}

export const KEY_RATE_LIMIT_DEFAULTS = Object.freeze({ maxCachedRules: 10_000 });

export interface KeyRateLimiter {
  /**
   * Nothing (at once) for a key without a rate rule; else resolves when the request may go on and
   * rejects with PalisadeError RATE_LIMITED (retryAfter in seconds).
   */
  checkKeyRateLimit(key: ApiKey, req: KeyRateRequest): void | Promise<void>;
  /** Parsed rules currently cached. */
  readonly cachedRules: number;
}

interface CachedRule {
  readonly text: string;
  readonly rule: RateRule | null;
}


export function createKeyRateLimiter(deps: KeyRateLimitDeps, options: KeyRateLimitOptions = {}): KeyRateLimiter {
  const maxRules = options.maxCachedRules ?? KEY_RATE_LIMIT_DEFAULTS.maxCachedRules;
  const now = options.now ?? Date.now;
  const onStoreError = createStoreFailureHandler(deps.logger, deps.metrics, options);
  const rules = new Map<string, CachedRule>();

  const ruleOf = (key: ApiKey, text: string): RateRule | null => {
    const cached = rules.get(key.id);
    if (cached !== undefined && cached.text === text) return cached.rule;
    let rule: RateRule | null = null;
    try {
      rule = checkRule(parseRateRule(text, 'ip'));
    } catch (err) {
      deps.logger.error({ apiKey: key.id, problem: (err as Error).message }, 'the rate limit stored with this API key is not valid; not applied');
    }
    if (cached === undefined && rules.size >= maxRules) rules.delete(rules.keys().next().value!);
    rules.set(key.id, { text, rule });
    return rule;
  };

  return {
    checkKeyRateLimit(key, req) {
      const text = key.rateLimit;
      if (text === null || text === undefined || text.trim() === '') return;
      const rule = ruleOf(key, text);
      if (rule === null) return;
      return deps.store.hit(limitKeyOf(rule, key, req, deps.deviceKeys), rule).then((result) => {
        if (result.allowed) return;
        deps.metrics.rateLimited('api_key');
        throw new PalisadeError('RATE_LIMITED', undefined, retryAfterSeconds(result, now()));
      }, (err: unknown) => onStoreError(err, 'api_key_rate_limit'));
    },
    get cachedRules() {
      return rules.size;
    },
  };
}

function limitKeyOf(rule: RateRule, key: ApiKey, req: KeyRateRequest, devices: DeviceKeys | undefined): string {
  switch (rule.key) {
    case 'apiKey':
      return `krl|${key.id}`;
    case 'account':
      return `krl|acct:${key.accountId}`;
    case 'device':
      if (devices) return `krl|${key.id}|dev:${devices.key(req.ip, req.headers)}`;
      return `krl|${key.id}|${ipKey(req.ip)}`;
    default:
      return `krl|${key.id}|${ipKey(req.ip)}`;
  }
}
