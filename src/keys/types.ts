// The API key as the hot paths see it (cached per worker, CACHE_DURATION_API_KEYS).

export interface ApiKey {
  /** `key_` + 24 base62 (or `ckey_` for free keys). Public: appears in URLs and payloads. */
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  /** Hostnames the browser endpoints accept in Origin/Referer; `*.example.com` wildcards; empty = any. */
  readonly hostnames: readonly string[];
  readonly planId: string | null;
  /** Per-key challenge policy as stored (JSON); validated and completed by src/pow/policy.ts. */
  readonly challengePolicy: Readonly<Record<string, unknown>> | null;
  /** Per-key rate rule text (spec section 8 syntax), or null for none. */
  readonly rateLimit: string | null;
  readonly enabled: boolean;
  /**
   * The key's secret (`sec_…`), needed in memory to sign server payloads (PROTOCOL.md section 3).
   * It is never stored: it is derived from a server secret and the key's stored secret nonce, and
   * only its keyed hash is kept in the database. Never log it.
   */
  readonly secret: string;
  /**
   * The monthly request limit of the key's plan (planId), per account; null = unlimited. Optional
   * so that keys built elsewhere (tests) need not carry it; absent = unlimited.
   */
  readonly requestLimit?: number | null;
}
