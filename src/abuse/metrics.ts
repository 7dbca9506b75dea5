// Counters of the abuse protection. Created in the caller's prom-client Registry (the worker's,
// aggregated by the primary); a counter of the same name already there (the lead's
// palisade_rate_limited_total and palisade_store_errors_total in src/metrics.ts) is reused, not
// duplicated. Children for every label value are built once, so counting allocates nothing.
import { Counter, Registry } from 'prom-client';

export const RATE_LIMIT_REASONS = ['flood', 'api_key', 'audio_challenge'] as const;
export type RateLimitReason = (typeof RATE_LIMIT_REASONS)[number];
export const BLOCK_REASONS = ['malicious'] as const;
export type BlockReason = (typeof BLOCK_REASONS)[number];
export const THREAT_KINDS = ['probe', 'malicious', 'bot', 'proxy', 'tor'] as const;
export type ThreatKind = (typeof THREAT_KINDS)[number];
/** Why a malicious event was recorded (bounded: these are metric labels). */
export const MALICIOUS_REASONS = [
  'invalid_signature', 'tampered', 'replayed', 'smuggling', 'probing',
] as const;
export type MaliciousReason = (typeof MALICIOUS_REASONS)[number];
export const THREAT_LIST_MATCH_KINDS = ['malicious', 'proxy', 'tor', 'bot'] as const;
export type ThreatListMatchKind = (typeof THREAT_LIST_MATCH_KINDS)[number];
export const STORE_ERROR_CODES = ['STORE_UNAVAILABLE', 'STORE_FULL'] as const;
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

export interface AbuseMetrics {
  /** palisade_rate_limited_total{reason}: requests answered 429 by a rate limit. */
  rateLimited(reason: RateLimitReason): void;
  /** palisade_blocked_total{reason}: requests answered 403 IP_BLOCKED. */
  blocked(reason: BlockReason): void;
  /** palisade_ip_marked_total{kind}: new marks (an IP passing a threat limit while not marked). */
  marked(kind: ThreatKind): void;
  /** palisade_threat_events_total{kind}: threat events counted against the THREATS_* limits. */
  threat(kind: ThreatKind): void;
  /** palisade_threat_list_matches_total{kind}: challenge and verify requests from an IP on a threat list of the kind. */
  listMatch(kind: ThreatListMatchKind): void;
  /** palisade_malicious_events_total{reason}. */
  malicious(reason: MaliciousReason): void;
  /** palisade_store_errors_total{code}: store failures the abuse checks passed over (fail-open). */
  storeError(code: StoreErrorCode): void;
  readonly registry: Registry;
}

/** `registry`: where the counters live; default a private one (tests, or counters nobody scrapes). */
export function createAbuseMetrics(registry: Registry = new Registry()): AbuseMetrics {
  const rateLimited = children(registry, 'palisade_rate_limited_total', 'Requests refused by a rate limit, by rule.', 'reason', RATE_LIMIT_REASONS);
  const blocked = children(registry, 'palisade_blocked_total', 'Requests refused because the client IP is blocked, by reason.', 'reason', BLOCK_REASONS);
  const marked = children(registry, 'palisade_ip_marked_total', 'IP addresses newly marked by a threat limit, by kind.', 'kind', THREAT_KINDS);
  const threat = children(registry, 'palisade_threat_events_total', 'Threat events counted against the THREATS_* limits, by kind.', 'kind', THREAT_KINDS);
  const listMatch = children(registry, 'palisade_threat_list_matches_total', 'Challenge and verify requests from an IP listed by a threat source, by kind.', 'kind', THREAT_LIST_MATCH_KINDS);
  const malicious = children(registry, 'palisade_malicious_events_total', 'Malicious events, by reason.', 'reason', MALICIOUS_REASONS);
  const storeErrors = children(registry, 'palisade_store_errors_total', 'State-store failures (STORE_FULL, STORE_UNAVAILABLE).', 'code', STORE_ERROR_CODES);
  return {
    registry,
    rateLimited: (reason) => rateLimited[reason].inc(),
    blocked: (reason) => blocked[reason].inc(),
    marked: (kind) => marked[kind].inc(),
    threat: (kind) => threat[kind].inc(),
    listMatch: (kind) => listMatch[kind].inc(),
    malicious: (reason) => malicious[reason].inc(),
    storeError: (code) => storeErrors[code].inc(),
  };
}

function children<L extends string>(
  registry: Registry, name: string, help: string, label: string, values: readonly L[],
): Record<L, { inc(): void }> {
  const existing = registry.getSingleMetric(name);
  const counter = existing instanceof Counter
    ? (existing as Counter<string>)
    : new Counter({ name, help, labelNames: [label], registers: [registry] });
  const out = {} as Record<L, { inc(): void }>;
  for (const value of values) out[value] = counter.labels(value);
  return out;
}
