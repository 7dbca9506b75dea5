// Abuse limits and costs: flood and endpoint rate limits, threat counters, body sizes, proof-of-work
// memory and threads, penalties, retention, caches, and the room of the state store.
import { type RateRule, type RateRuleKey, RATE_RULE_KEYS, parseRateRule } from '../parse.js';
import { STORE_LIMITS } from '../store/state-store.js';
import { type Check, ms, oneOf, optSize, optUint, type Parser, secs, size, uint, v } from './variable.js';

const rule = (key: RateRuleKey = 'ip'): Parser<RateRule | null> => (s) => (s.trim() === '' ? null : parseRateRule(s, key));

export const LIMIT_VARIABLES = {
  FLOOD_RATE_LIMIT: v('Limits', '100/1m', rule(), 'Global flood protection, checked before routing; empty disables.'),
  FLOOD_RATE_LIMIT_KEY: v('Limits', 'ip', oneOf(...RATE_RULE_KEYS), 'Key of the flood limit (ip aggregates IPv6 per /64).'),
  API_KEY_GENERATE_RATE_LIMIT: v('Limits', '10/1h', rule(), 'Free keys requested from one IP through POST /api_key/generate; empty disables.'),
  AUDIO_CHALLENGE_RATE_LIMIT: v('Limits', '10/5m(key=ip&block=10m)', rule(), 'Requests to the audio challenge endpoint (GET /v1/challenge/audio, docs/code-challenge.md) before 429 with Retry-After; empty disables.'),
  AUDIO_CHALLENGE_DELAY: v('Limits', '3s', secs, 'Delay before an audio challenge is returned, counted from the request (the clip is synthesised meanwhile); 0 = none.'),
  THREATS_MALICIOUS_LIMIT: v('Limits', '10/5m(expire=48h)', rule(), 'Malicious events (invalid signatures, replays, smuggling-shaped requests) per IP before it is marked.'),
  THREATS_PROBE_LIMIT: v('Limits', '2/5m(expire=48h)', rule(), 'Probe requests (scanner paths) per IP before it is marked.'),
  THREATS_BOT_LIMIT: v('Limits', '', rule(), 'Threats of kind bot (applied when IP intelligence reports them).'),
  THREATS_PROXY_LIMIT: v('Limits', '', rule(), 'Threats of kind proxy.'),
  THREATS_TOR_LIMIT: v('Limits', '', rule(), 'Threats of kind tor.'),
  EML_BODY_LIMIT: v('Limits', '5MB', size, 'Body size of POST /v1/eml.'),
  POW_MAX_MEMORY: v('Limits', '128MB', size, 'Memory a proof-of-work algorithm may request (scrypt, Argon2id).'),
  CHALLENGE_POOL_SIZE: v('Limits', '32', uint(1, 100_000), 'Challenges each worker derives ahead per expensive deterministic policy (PBKDF2, scrypt, Argon2id), refilled when fewer than a quarter are ready: a burst up to this size per worker is answered without waiting for a derivation (palisade_challenge_pool_takes_total{result="waited"} counts the takes that found it empty). Each ready challenge holds about 300 bytes; a deep pool also costs derivation CPU right after start-up.'),
  POW_MAX_THREADS: v('Limits', '', optUint(1, 256), 'Threads for expensive challenge creation and validation; empty = half the CPUs (at least 1).'),
  HEADER_ENTROPY_MAX_ENTRIES: v('Limits', '100', uint(1), 'Header-combination hashes stored per IP.'),
  PENALTY_TTL: v('Limits', '30m', secs, 'Lifetime of an accumulated penalty score (1s to 795d, the longest the state store keeps an entry).'),
  CLASSIFIER_BODY_LIMIT: v('Limits', '256KB', size, 'Largest body of POST /v1/classifier, enforced while reading (413 BODY_TOO_LARGE).'),
  SPAM_SUBMISSIONS_STORE: v('Limits', 'text', oneOf('text', 'hash', 'off'), 'What is kept of a submission classified BAD (by /v1/classifier or /v1/verify) for review: text = its text (the first 10,000 characters) with an HMAC of it; hash = only the HMAC (under a key derived from PALISADE_HMAC_SECRET), so repeated submissions can be counted without keeping what they said, and none can be promoted to training data; off = nothing.'),
  DELETE_SPAM_SUBMISSIONS_IN: v('Limits', '14d', secs, 'Spam-flagged submissions are deleted after this time (checked every 15 minutes by the primary).'),
  REQUEST_LOGS_TTL: v('Limits', '72h', secs, 'Retention of request logs.'),
  REQUEST_LOGS_MAX_RATE: v('Limits', '200', optUint(1), 'Most request-log rows stored per second by each worker (beyond it rows are left out and counted in palisade_request_logs_skipped_total; usage counters stay exact); empty = every request. Bounds what a flood costs the database.'),
  CACHE_DURATION_API_KEYS: v('Limits', '10s', secs, 'How long a worker caches an API key (a revoked key stops working within this time).'),
  CACHE_DURATION_TRAINING_DATA: v('Limits', '1h', secs, "How long a worker keeps an account's training data (its similarity index); changes made through another worker or node apply within this time."),
  CACHE_DURATION_USED_CHALLENGES: v('Limits', '4h', secs, 'Upper bound on how long a used challenge is remembered. A used challenge is remembered until it expires plus CLAIM_CLOCK_SKEW; challenges are issued to expire no later than this bound minus CLAIM_CLOCK_SKEW, so no claim outlives it.'),
  CLAIM_CLOCK_SKEW: v('Limits', '60s', ms, 'How long a used challenge (or signed payload, or request-signing salt) stays claimed past its expiry, for clocks that disagree across nodes; at least 1s.'),
  STATE_STORE_CAPACITY: v('Limits', '4194304', uint(1024, 2 ** 30), 'Slots of the shared-memory soft-state table: rate-limit windows, threat marks, penalties (16 bytes each; 4,194,304 = 64 MB file). When full, the least recently used entries are evicted (palisade_state_evictions_total); used challenges are kept apart and never evicted.'),
  STATE_STORE_MAX_MEMORY: v('Limits', '', optSize, 'Most memory the used-challenge claims of the shared-memory store may take (their files under <EMBEDDED_DB_REDIS_LOCATION>.claims grow and shrink with traffic, ~16 bytes per claim); past it verification answers 503 STORE_FULL, and past 80 % the log warns. Empty = 20 % of the container memory (CONTAINER_MEMORY_LIMIT_MB, else the cgroup limit, else the machine\'s memory).'),
} as const;

/** Used challenges outlive the clock skew; penalties and threat marks fit the state store's longest lifetime. */
export const checkLimits: Check = (out) => {
  const problems: string[] = [];
  if ((out.CLAIM_CLOCK_SKEW as number) < 1000) problems.push('CLAIM_CLOCK_SKEW must be at least 1s');
  if ((out.CACHE_DURATION_USED_CHALLENGES as number) < (out.CLAIM_CLOCK_SKEW as number) + 60_000) {
    problems.push('CACHE_DURATION_USED_CHALLENGES must be at least CLAIM_CLOCK_SKEW plus 1m');
  }
  // Penalties and threat marks are kept in the state store, which refuses a lifetime past maxTtlMs
  // with a RangeError: checked here, or every failed verification would throw it.
  const maxDays = Math.floor(STORE_LIMITS.maxTtlMs / 86_400_000);
  const penaltyTtl = out.PENALTY_TTL as number | undefined;
  if (penaltyTtl !== undefined && (penaltyTtl < 1000 || penaltyTtl > STORE_LIMITS.maxTtlMs)) {
    problems.push(`PENALTY_TTL must be from 1s to ${maxDays}d`);
  }
  for (const name of ['THREATS_PROBE_LIMIT', 'THREATS_MALICIOUS_LIMIT', 'THREATS_BOT_LIMIT', 'THREATS_PROXY_LIMIT', 'THREATS_TOR_LIMIT'] as const) {
    const r = out[name] as RateRule | null | undefined;
    if (r && Math.max(r.windowMs, r.blockMs, r.expireMs) > STORE_LIMITS.maxTtlMs) {
      problems.push(`${name}: the window, block and expire must each be at most ${maxDays}d (how long a mark can be kept)`);
    }
  }
  return problems;
};
