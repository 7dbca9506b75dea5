// The flood limit (FLOOD_RATE_LIMIT, FLOOD_RATE_LIMIT_KEY): one fixed-window rule checked for every
// request before routing and before any database work (HttpServerOptions.beforeRoute). Decided at
// start-up, pino-style: no rule means no guard at all (`enabled: false`, nothing to install); with
// the shared-memory store the check is synchronous (hitSync, no Promise); the only string built per
// request is the limit key.
//
// Keys (src/store/limit-key.ts, scoped `flood|`):
//   ip       the client IP, IPv6 aggregated per /64 (the default and the recommended key).
//   device   the header-entropy device key (device-key.ts). A client that rotates its headers gets
//            fresh buckets: use it only where many honest users share an address.
//   apiKey   the key id the request names (?apiKey= or Authorization: Bearer key_…), but only when
//            `knownKey` says this worker has the key cached: an id that is not known falls back to
//            the ip, so inventing ids cannot mint buckets. Key ids are public, so anyone can spend
//            a key's flood budget; prefer ip.
//   account  the account of a known key, else as apiKey.
// Store failures fail open (store-failure.ts explains why).
import type { Logger } from '../log.js';
import type { RateRule, RateRuleKey } from '../parse.js';
import type { Reply, RequestContext } from '../http/types.js';
import { isKeyId } from '../keys/secrets.js';
import { ipKey, limitKey } from '../store/limit-key.js';
import { checkRule, type HitResult, type StateStore } from '../store/state-store.js';
import type { DeviceKeys } from './device-key.js';
import type { AbuseMetrics } from './metrics.js';
import { rateLimitedReply, retryAfterSeconds } from './rate-limited.js';
import { createStoreFailureHandler, type StoreFailureOptions } from './store-failure.js';

/** What the flood limit reads of a request. */
export type FloodRequest = Pick<RequestContext, 'ip' | 'headers' | 'query'>;

/** A synchronous peek into the worker's API key cache (no database): the key's account, or null when not cached. */
export type KnownKey = (id: string) => { readonly accountId: string } | null | undefined;

export interface FloodGuardDeps {
  readonly store: StateStore;
  /** FLOOD_RATE_LIMIT; null disables the guard. */
  readonly rule: RateRule | null;
  /** FLOOD_RATE_LIMIT_KEY. A `key=` option written in the rule text itself takes precedence. */
  readonly key: RateRuleKey;
  /** Required when the effective key is `device`. */
  readonly deviceKeys?: DeviceKeys;
  /** For `apiKey` and `account` keys; without it those keys fall back to the ip. */
  readonly knownKey?: KnownKey;
  readonly logger: Logger;
  readonly metrics: AbuseMetrics;
}

export type FloodGuardOptions = StoreFailureOptions;

export interface FloodGuard {
  /** False when no rule is configured: do not install `check` at all. */
  readonly enabled: boolean;
  /** The key the limit counts on after precedence (for logs and the start-up banner). */
  readonly key: RateRuleKey;
  /**
   * undefined = go on; a Reply (429 RATE_LIMITED, Retry-After) = answer with it. `exempt` callers
   * (monitoring routes for whitelisted or authenticated callers) are never counted. Synchronous
   * with the shared-memory store, a Promise with Redis; never rejects on store failures.
   */
  check(req: FloodRequest, exempt: boolean): Reply | undefined | Promise<Reply | undefined>;
}

const SCOPE = 'flood|';
const DISABLED: FloodGuard = Object.freeze({ enabled: false, key: 'ip' as RateRuleKey, check: () => undefined });

export function createFloodGuard(deps: FloodGuardDeps, options: FloodGuardOptions = {}): FloodGuard {
  const rule = deps.rule;
  if (rule === null) return DISABLED;
  checkRule(rule);
  const keyKind = hasExplicitKey(rule) ? rule.key : deps.key;
  if (keyKind === 'device' && !deps.deviceKeys) throw new TypeError('a device-keyed flood limit needs deviceKeys');
  const keyRule: Pick<RateRule, 'key'> = { key: keyKind };
  const { store, metrics } = deps;
  const onStoreError = createStoreFailureHandler(deps.logger, metrics, options);
  const now = options.now ?? Date.now;
  const subject = subjectOf(keyKind, keyRule, deps);

  const decide = (result: HitResult): Reply | undefined => {
    if (result.allowed) return undefined;
    metrics.rateLimited('flood');
    return rateLimitedReply(retryAfterSeconds(result, now()));
  };
  const failed = (err: unknown): undefined => {
    onStoreError(err, 'flood');
    return undefined;
  };

  const sync = store.sync;
  const check = sync
    ? (req: FloodRequest, exempt: boolean): Reply | undefined => {
      if (exempt) return undefined;
      try {
        return decide(sync.hitSync(SCOPE + subject(req), rule));
      } catch (err) {
        return failed(err);
      }
    }
    : (req: FloodRequest, exempt: boolean): Promise<Reply | undefined> | undefined => {
      if (exempt) return undefined;
      let key: string;
      try {
        key = SCOPE + subject(req);
      } catch (err) {
        return Promise.reject(err);
      }
      return store.hit(key, rule).then(decide, failed);
    };
  return Object.freeze({ enabled: true, key: keyKind, check });
}

/** The per-request part of the key, decided once for the configured key kind. */
function subjectOf(kind: RateRuleKey, keyRule: Pick<RateRule, 'key'>, deps: FloodGuardDeps): (req: FloodRequest) => string {
  switch (kind) {
    case 'ip':
      return (req) => ipKey(req.ip);
    case 'device': {
      const devices = deps.deviceKeys!;
      return (req) => limitKey(keyRule, { ip: req.ip, device: devices.key(req.ip, req.headers) });
    }
    case 'apiKey':
    case 'account': {
      const known = deps.knownKey;
      if (!known) return (req) => ipKey(req.ip);
      return (req) => {
        const id = apiKeyIdOf(req);
        const entry = id === undefined ? undefined : known(id);
        if (!entry) return ipKey(req.ip);
        return limitKey(keyRule, { ip: req.ip, apiKey: id, account: entry.accountId });
      };
    }
  }
}

const BEARER = /^Bearer +(c?key_[0-9A-Za-z]{24})\s*$/i;

/** The key id a request names: `?apiKey=` (browser endpoints), else `Authorization: Bearer key_…`. */
export function apiKeyIdOf(req: FloodRequest): string | undefined {
  const id = req.query.get('apiKey');
  if (id !== null && isKeyId(id)) return id;
  const auth = req.headers.authorization;
  if (auth !== undefined && auth.length <= 200) {
    const m = BEARER.exec(auth);
    if (m) return m[1]!;
  }
  return undefined;
}

/** The rule text names its key (`…(key=device)`): parseRateRule cannot tell a written `ip` from the default. */
function hasExplicitKey(rule: RateRule): boolean {
  return /[(&]\s*key\s*=/.test(rule.source);
}
