// What a scenario is: which endpoint, with which API key (challenge policy), in which service
// configurations, beside which baselines, and which of issue 7's targets apply to it. The runner
// (bench/run.ts) does the rest the same way for every scenario.
import type { KeyName } from '../lib/keys.js';
import type { StockedPoolPlan } from '../lib/types.js';

/**
 * Service configurations (environment on top of the common one in bench/lib/targets.ts):
 * - production: access log on (written to /dev/null, formatted in full), flood limit on with the
 *   largest rule the state store takes (never blocks: 8,000,000 per minute from the one client
 *   address), usage counting and metrics as always;
 * - bare: access log and flood limit off (the configuration of the spec's Sentinel table);
 * - production-noflood: production without the flood limit, for issue 6's on/off ratio;
 * - production-nointel: production with IP intelligence as far off as it goes (docs/intel.md): no
 *   threat lists or threat detection (THREATS_ENABLED=0), no embedded ASN index, no high-risk
 *   countries. There is no switch for the embedded country database, so its lookup (about 1 µs,
 *   bench/micro/geo.ts) stays: the ratio shows what the lists, the index and the rules cost;
 * - production-fields (S2c only): production, verifying with the key whose policy asks for
 *   classification (`fields` in bench/lib/keys.ts; the scenario's keyFor names it), beside
 *   production with the default policy's key.
 */
export const CONFIGS = {
  production: { ACCESS_LOG_ENABLED: '1', FLOOD_RATE_LIMIT: '8000000/1m' },
  bare: { ACCESS_LOG_ENABLED: '0', FLOOD_RATE_LIMIT: '' },
  'production-noflood': { ACCESS_LOG_ENABLED: '1', FLOOD_RATE_LIMIT: '' },
  'production-nointel': {
    ACCESS_LOG_ENABLED: '1', FLOOD_RATE_LIMIT: '8000000/1m', THREATS_ENABLED: '0', GEO_EMBEDDED_ASN: '0', HIGH_RISK_COUNTRIES: '',
  },
  'production-fields': { ACCESS_LOG_ENABLED: '1', FLOOD_RATE_LIMIT: '8000000/1m' },
} as const satisfies Record<string, Record<string, string>>;

export type ConfigName = keyof typeof CONFIGS;
/** L: uWS hello world; P: Fastify + altcha-lib; B: Fastify + a naive-Bayes text classifier (S6). */
export type Baseline = 'L' | 'P' | 'B';

/** A target of issue 7, checked against the medians of one invocation. */
export type Check =
  | { readonly kind: 'vsL' | 'vsP' | 'vsB'; readonly config: ConfigName; readonly min: number }
  /** Absolute req/s (S6: 5 × ALTCHA's published 932 req/s for 10 KB). */
  | { readonly kind: 'rps'; readonly config: ConfigName; readonly min: number; readonly why: string }
  /** One configuration's req/s ÷ another's (S2c: the classifying key's policy ÷ the default's). */
  | { readonly kind: 'vsConfig'; readonly config: ConfigName; readonly of: ConfigName; readonly min: number }
  | { readonly kind: 'p99'; readonly config: ConfigName; readonly maxMs: number }
  /** S4: issuance req/s ÷ derivations per second of the cores alone. */
  | { readonly kind: 'derivation'; readonly config: ConfigName; readonly min: number }
  /** S4: req/s while every challenge comes from a stocked pool ÷ L's over bursts of the same size. */
  | { readonly kind: 'stocked'; readonly config: ConfigName; readonly min: number };

export interface Scenario {
  readonly id: string;
  readonly title: string;
  /**
   * ops: GET /.live (the HTTP layer alone); challenge: GET /v1/challenge; inspect: GET /v1/inspect;
   * verify: POST /v1/verify; classifier: POST /v1/classifier with a fixed body (`body`) and the key's
   * secret as `Authorization: Bearer`.
   */
  readonly endpoint: 'ops' | 'challenge' | 'inspect' | 'verify' | 'classifier';
  readonly key: KeyName;
  /** Another key for some configurations (S2c: production-fields verifies with the `fields` key). */
  readonly keyFor?: Partial<Readonly<Record<ConfigName, KeyName>>>;
  /** The classifier scenario's request body (the same bytes for every target). */
  readonly body?: string;
  /**
   * Helpers the targets need, started before them and closed after (S6: a DNS server on loopback
   * for the MX lookups); their environment is added to every Palisade target's.
   */
  readonly services?: () => Promise<{
    readonly env: Readonly<Record<string, string>>;
    /** After the targets' checks: why the helpers show the scenario is not what it measures, or null. */
    check?(): string | null;
    close(): Promise<void>;
  }>;
  readonly configs: readonly ConfigName[];
  readonly baselines: readonly Baseline[];
  /** Extra service environment (S3: REDIS_URL). */
  readonly env?: Readonly<Record<string, string>>;
  /** Why the scenario cannot run on this machine (S3: no Redis), or null. Checked before anything starts. */
  readonly unavailable?: () => Promise<string | null>;
  /** Why a started Palisade target is not what the scenario measures (S3: not on Redis), or null. */
  readonly checkTarget?: (url: string) => Promise<string | null>;
  /** S4: the derivation measured alone, between rounds. */
  readonly derivation?: { readonly algorithm: string; readonly cost: number };
  /** S4: after the rounds, each configuration again with a deep pool, measured in bursts (bench/lib/stocked-pool.ts). */
  readonly stockedPool?: StockedPoolPlan;
  readonly checks: readonly Check[];
  /** Not part of the default run (only with --only). */
  readonly optIn?: boolean;
}
