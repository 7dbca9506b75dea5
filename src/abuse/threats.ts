// Threat detection (THREATS_ENABLED, THREATS_*_LIMIT): threat events of five kinds are counted per
// client IP (IPv6 per /64) under their rule; passing a rule's limit marks the IP for the rule's
// `expire`.
//   probe      a request to a scanner path (probe-paths.ts), counted by the HTTP layer.
//   malicious  invalid signatures, tampered or replayed payloads (verification), smuggling-shaped
//              requests (smuggling.ts), and probing on after a probe mark (escalateProbes).
//   bot, proxy, tor   reported by an IP-intelligence source through reportThreat(), the one place
//              where such a source plugs in; nothing reports them yet.
// A mark raises the IP's penalty by `markPenalty[kind]` while it lasts (penaltyFor in index.ts);
// a malicious mark also blocks the IP on challenge and verify (isBlocked → 403 IP_BLOCKED).
//
// Marks use the existing StateStore calls only: `addPenalty('mark|<kind>|<ip>', 1, expire)` and
// `penalty(…) > 0`. The addition that takes the score from 0 to 1 is the new mark (atomic in both
// stores, so exactly one process logs "IP marked"); every later event past the limit extends the
// mark to `expire` after it. A rule without `expire` marks until its window (or block) ends.
// Store failures fail open: an event that cannot be counted is dropped, a mark that cannot be
// read is taken as absent. THREATS_ENABLED=0 (`enabled: false`) turns all of it into no-ops that
// never touch the store.
import type { Logger } from '../log.js';
import type { RateRule } from '../parse.js';
import { anonymizeIp } from '../ip.js';
import { ipKey } from '../store/limit-key.js';
import { checkRule, type StateStore, type SyncStateStore } from '../store/state-store.js';
import type { AbuseMetrics, MaliciousReason, ThreatKind } from './metrics.js';
import type { Penalties } from './penalty.js';
import { createStoreFailureHandler, type StoreFailureOptions } from './store-failure.js';

export type { MaliciousReason, ThreatKind } from './metrics.js';
export type IntelligenceKind = 'bot' | 'proxy' | 'tor';

export interface ThreatRules {
  /** THREATS_PROBE_LIMIT (default 2/5m(expire=48h)). */
  readonly probe: RateRule | null;
  /** THREATS_MALICIOUS_LIMIT (default 10/5m(expire=48h)). */
  readonly malicious: RateRule | null;
  /** THREATS_BOT_LIMIT, THREATS_PROXY_LIMIT, THREATS_TOR_LIMIT (default none). */
  readonly bot: RateRule | null;
  readonly proxy: RateRule | null;
  readonly tor: RateRule | null;
}

export interface ThreatDeps {
  readonly store: StateStore;
  /** THREATS_ENABLED. */
  readonly enabled: boolean;
  readonly rules: ThreatRules;
  readonly penalties: Penalties;
  readonly logger: Logger;
  readonly metrics: AbuseMetrics;
}

export interface ThreatOptions extends StoreFailureOptions {
  /** Penalty points per event, whatever the limit. Default probe 1, malicious 2, bot/proxy/tor 0. */
  eventPenalty?: Partial<Record<ThreatKind, number>>;
  /** Penalty raise while marked. Default probe 8, malicious 16, bot 4, proxy 2, tor 4. */
  markPenalty?: Partial<Record<ThreatKind, number>>;
  /** A probe from an IP already past the probe limit also counts as a malicious event ('probing'). Default true. */
  escalateProbes?: boolean;
  /** Anonymise the IP in the "IP marked" log line (ANONYMIZE_IP_ADDRESS). Default true. */
  anonymizeIp?: boolean;
}

export const THREAT_DEFAULTS = Object.freeze({
  eventPenalty: Object.freeze({ probe: 1, malicious: 2, bot: 0, proxy: 0, tor: 0 }),
  markPenalty: Object.freeze({ probe: 8, malicious: 16, bot: 4, proxy: 2, tor: 4 }),
  escalateProbes: true,
  anonymizeIp: true,
});

/**
 * What an event did: `ignored` (disabled, no rule for the kind, or the store failed), `counted`
 * (within the limit), `limit` (past the limit, the mark extended), `marked` (this event made the mark).
 */
export type ThreatOutcome = 'ignored' | 'counted' | 'limit' | 'marked';

export interface Standing {
  /** Malicious mark: refuse challenge and verify with 403 IP_BLOCKED. */
  readonly blocked: boolean;
  /** Sum of the mark raises of the IP's current marks. */
  readonly markPenalty: number;
}

export interface Threats {
  readonly enabled: boolean;
  /** A request to a probe path (probe-paths.ts). Never rejects. */
  recordProbe(ip: string): Promise<ThreatOutcome>;
  /** A malicious event. Never rejects. */
  recordMalicious(ip: string, reason: MaliciousReason): Promise<ThreatOutcome>;
  /**
   * The IP-intelligence plug: a source that learns that `ip` is a bot, an open proxy or a Tor exit
   * calls this (once per request it sees from the IP); the kind's THREATS_<KIND>_LIMIT decides
   * when the IP is marked. Without a rule for the kind it is ignored. Never rejects.
   */
  reportThreat(ip: string, kind: IntelligenceKind): Promise<ThreatOutcome>;
  isMarked(ip: string, kind: ThreatKind): Promise<boolean>;
  /** Malicious-marked? (false when disabled, without a malicious rule, or when the store failed) */
  isBlocked(ip: string): Promise<boolean>;
  /** isBlocked() on the calling thread when the store can answer so (StateStore.sync), else undefined. */
  isBlockedSync(ip: string): boolean | undefined;
  /** Blocked and mark raise in one round of store reads. */
  standing(ip: string): Promise<Standing>;
  /** standing() on the calling thread when the store can answer so (StateStore.sync), else undefined. */
  standingSync(ip: string): Standing | undefined;
}

const CLEAN: Standing = Object.freeze({ blocked: false, markPenalty: 0 });
const IGNORED = Promise.resolve<ThreatOutcome>('ignored');
const FALSE = Promise.resolve(false);
const KINDS: readonly ThreatKind[] = ['probe', 'malicious', 'bot', 'proxy', 'tor'];

export function createThreats(deps: ThreatDeps, options: ThreatOptions = {}): Threats {
  const eventPenalty = { ...THREAT_DEFAULTS.eventPenalty, ...options.eventPenalty };
  const markPenalty = { ...THREAT_DEFAULTS.markPenalty, ...options.markPenalty };
  const escalate = options.escalateProbes ?? THREAT_DEFAULTS.escalateProbes;
  const anonymize = options.anonymizeIp ?? THREAT_DEFAULTS.anonymizeIp;
  const now = options.now ?? Date.now;
  const { store, penalties, logger, metrics, rules } = deps;
  for (const kind of KINDS) if (rules[kind]) checkRule(rules[kind]);
  const active = deps.enabled ? KINDS.filter((k) => rules[k] !== null) : [];
  const onStoreError = createStoreFailureHandler(logger, metrics, options);

  const failed = (check: string) => (err: unknown): 'ignored' => {
    try {
      onStoreError(err, check);
    } catch (bug) {
      // Callers fire and forget: a bug is logged, never an unhandled rejection.
      logger.error({ err: bug, check }, 'threat recording failed');
    }
    return 'ignored';
  };

  const record = async (ip: string, kind: ThreatKind, rule: RateRule): Promise<ThreatOutcome> => {
    metrics.threat(kind);
    const ipk = ipKey(ip);
    const points = eventPenalty[kind];
    const [result] = await Promise.all([
      store.hit(`thr|${kind}|${ipk}`, rule),
      points > 0 ? penalties.penalize(ip, points, kind) : 0,
    ]);
    if (result.allowed) return 'counted';
    const ttl = Math.max(1, rule.expireMs > 0 ? rule.expireMs : result.resetMs);
    const score = await store.addPenalty(`mark|${kind}|${ipk}`, 1, ttl);
    if (score !== 1) return 'limit';
    metrics.marked(kind);
    logger.warn({ kind, ip: anonymize ? anonymizeIp(ip) : ip, until: new Date(now() + ttl).toISOString() }, 'IP marked');
    return 'marked';
  };

  const failedFor = Object.fromEntries(KINDS.map((kind) => [kind, failed(kind)])) as Record<ThreatKind, (err: unknown) => 'ignored'>;
  const recordKind = (ip: string, kind: ThreatKind): Promise<ThreatOutcome> => {
    const rule = rules[kind];
    if (!deps.enabled || rule === null) return IGNORED;
    return record(ip, kind, rule).catch(failedFor[kind]);
  };

  const readMark = (ip: string, kind: ThreatKind): Promise<boolean> =>
    store.penalty(`mark|${kind}|${ipKey(ip)}`).then((score) => score > 0, (err: unknown) => {
      onStoreError(err, 'marks');
      return false;
    });

  /** readMark on the calling thread; `ipk` is ipKey(ip). */
  const readMarkSync = (sync: SyncStateStore, ipk: string, kind: ThreatKind): boolean => {
    try {
      return sync.penaltySync(`mark|${kind}|${ipk}`) > 0;
    } catch (err) {
      onStoreError(err, 'marks');
      return false;
    }
  };

  const malicious = (ip: string, reason: MaliciousReason): Promise<ThreatOutcome> => {
    if (!deps.enabled || rules.malicious === null) return IGNORED;
    metrics.malicious(reason);
    return recordKind(ip, 'malicious');
  };

  const standingOf = (marks: readonly boolean[]): Standing => {
    let raise = 0;
    let blocked = false;
    for (let i = 0; i < active.length; i++) {
      if (!marks[i]) continue;
      raise += markPenalty[active[i]!];
      if (active[i] === 'malicious') blocked = true;
    }
    return raise === 0 && !blocked ? CLEAN : { blocked, markPenalty: raise };
  };

  return {
    enabled: active.length > 0,
    async recordProbe(ip) {
      const outcome = await recordKind(ip, 'probe');
      if (escalate && (outcome === 'limit' || outcome === 'marked')) await malicious(ip, 'probing');
      return outcome;
    },
    recordMalicious: malicious,
    reportThreat(ip, kind) {
      if (kind !== 'bot' && kind !== 'proxy' && kind !== 'tor') return Promise.reject(new TypeError('kind must be bot, proxy or tor'));
      return recordKind(ip, kind);
    },
    isMarked(ip, kind) {
      if (!deps.enabled || rules[kind] === null) return FALSE;
      return readMark(ip, kind);
    },
    isBlocked(ip) {
      if (!deps.enabled || rules.malicious === null) return FALSE;
      return readMark(ip, 'malicious');
    },
    isBlockedSync(ip) {
      const sync = store.sync;
      if (sync === undefined) return undefined;
      if (!deps.enabled || rules.malicious === null) return false;
      return readMarkSync(sync, ipKey(ip), 'malicious');
    },
    async standing(ip) {
      if (active.length === 0) return CLEAN;
      return standingOf(await Promise.all(active.map((kind) => readMark(ip, kind))));
    },
    standingSync(ip) {
      const sync = store.sync;
      if (sync === undefined) return undefined;
      if (active.length === 0) return CLEAN;
      const ipk = ipKey(ip);
      return standingOf(active.map((kind) => readMarkSync(sync, ipk, kind)));
    },
  };
}
