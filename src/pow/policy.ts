// Challenge policy: what GET /v1/challenge issues for an API key (ApiKey.challengePolicy, JSON),
// validated once and completed with the defaults below; and adaptive difficulty (scalePolicy).
import { COUNTRY_RULE_FIELDS, parseCountryRules } from '../intel/key-countries.js';
import { RULE_NAMES } from '../classifier/classify.js';
import { parseClassificationPolicy } from '../classifier/policy.js';
import { PalisadeError } from '../errors.js';
import { POW_ALGORITHMS, type PowAlgorithm } from './derive.js';
import { CODE_POLICY_FIELDS, parseCodePolicy } from '../code-challenge/policy.js';

export const POW_MODES = ['deterministic', 'probabilistic'] as const;
export type PowMode = (typeof POW_MODES)[number];

/** Algorithms a v1 (legacy widget) challenge may use: the widget maps them onto iterated SHA, cost 1. */
export const V1_ALGORITHMS = ['SHA-256', 'SHA-384', 'SHA-512'] as const;
export type V1Algorithm = (typeof V1_ALGORITHMS)[number];

/** The largest counter the widget encodes exactly (uint32 big-endian, PROTOCOL.md section 1). */
export const MAX_COUNTER = 0xffffffff;

export interface ChallengePolicy {
  /** 2 (default) or 1 for keys configured for legacy widgets (PROTOCOL.md section 2). */
  readonly version: 1 | 2;
  readonly algorithm: PowAlgorithm;
  /** SHA/PBKDF2 rounds, scrypt N (a power of two), Argon2id passes; always 1 for v1. */
  readonly cost: number;
  /** scrypt r, Argon2id memory in KiB; undefined for the others. */
  readonly memoryCost: number | undefined;
  /** scrypt p, Argon2id lanes; undefined for the others. */
  readonly parallelism: number | undefined;
  /** Derived key length in bytes (v1: the digest length). */
  readonly keyLength: number;
  /** deterministic: the server draws a secret counter; probabilistic: any counter whose key has the prefix. */
  readonly mode: PowMode;
  /** Deterministic and v1: the secret counter is drawn uniformly from [counterMin, counterMax]. */
  readonly counterMin: number;
  readonly counterMax: number;
  /** Probabilistic: the lowercase hex prefix the derived key must start with ('' in deterministic mode). */
  readonly keyPrefix: string;
  readonly expiresInMs: number;
  /** Adaptive difficulty multiplies the expected work by at most maxCost / cost (see scalePolicy). */
  readonly maxCost: number;
}

export interface PolicyLimits {
  /** POW_MAX_MEMORY in bytes (default 128 MB): the memory one derivation may need. */
  readonly maxMemoryBytes: number;
  /**
   * Longest expiry issued, whatever the policy asks: CACHE_DURATION_USED_CHALLENGES minus
   * CLAIM_CLOCK_SKEW, so that no used challenge must be remembered longer than that bound.
   * Default: no limit beyond the policy's own (at most 24 h).
   */
  readonly maxExpiresMs?: number;
}

/**
 * Defaults, calibrated with the real widget (altcha 3.2.2) in headless Chromium on the 2-core
 * development machine (2 solver workers): SHA-256 cost 1 solved 50,000 counters in 0.76 s and
 * 200,000 in 1.7 s (about 13 µs per WebCrypto digest per worker); PBKDF2/SHA-256 cost 1,000 solved
 * 500 counters in 0.21 s. Ordinary 4–8-core devices are two to four times faster, so the SHA
 * default range (mean 40,000) lands at roughly 0.3–0.7 s. Deterministic SHA-256 is the default, as
 * in Sentinel: issuing costs one hash and verifying two HMACs. scrypt/Argon2id defaults come from
 * native timings (scrypt N=1024 r=8: 1.9 ms; Argon2id t=2 m=4 MiB: 4.8 ms) with browser JS/WASM
 * assumed 3x slower.
 */
export const POLICY_DEFAULTS = Object.freeze({
  version: 2 as const,
  algorithm: 'SHA-256' as PowAlgorithm,
  mode: 'deterministic' as PowMode,
  keyLength: 32,
  /** 20 minutes: the widget shows "expired" after this, so a verified form stays usable that long. */
  expiresInMs: 20 * 60_000,
  /** A penalised client may be asked for up to 16x the normal work. */
  maxCostFactor: 16,
});

interface AlgorithmDefaults {
  readonly cost: number;
  readonly memoryCost?: number;
  readonly parallelism?: number;
  readonly counterMin: number;
  readonly counterMax: number;
  /** Probabilistic mode: hex characters of zero prefix (expected work 16^n derivations). */
  readonly prefixLength: number;
}

const SHA_DEFAULTS: AlgorithmDefaults = { cost: 1, counterMin: 10_000, counterMax: 70_000, prefixLength: 4 };
const PBKDF2_DEFAULTS: AlgorithmDefaults = { cost: 1_000, counterMin: 1_000, counterMax: 3_000, prefixLength: 3 };

export const ALGORITHM_DEFAULTS: Readonly<Record<PowAlgorithm, AlgorithmDefaults>> = Object.freeze({
  'SHA-256': SHA_DEFAULTS,
  'SHA-384': SHA_DEFAULTS,
  'SHA-512': SHA_DEFAULTS,
  'PBKDF2/SHA-256': PBKDF2_DEFAULTS,
  'PBKDF2/SHA-384': PBKDF2_DEFAULTS,
  'PBKDF2/SHA-512': PBKDF2_DEFAULTS,
  SCRYPT: { cost: 1_024, memoryCost: 8, parallelism: 1, counterMin: 20, counterMax: 80, prefixLength: 2 },
  ARGON2ID: { cost: 2, memoryCost: 4_096, parallelism: 1, counterMin: 10, counterMax: 50, prefixLength: 2 },
});

const STORED_FIELDS = new Set([
  'version', 'algorithm', 'cost', 'memoryCost', 'parallelism', 'keyLength', 'mode', 'counterMin', 'counterMax',
  'maxnumber', 'keyPrefix', 'keyPrefixLength', 'expiresInMs', 'maxCost', 'classification', ...COUNTRY_RULE_FIELDS,
  ...CODE_POLICY_FIELDS,
]);

const DIGEST_BYTES: Record<string, number> = { 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 };
const MIN_EXPIRES_MS = 10_000;
/** The longest a challenge can be issued for. */
export const MAX_EXPIRES_MS = 24 * 3_600_000;
const MAX_PREFIX_HEX = 16;

/**
 * Validates a stored per-key policy and completes it with the defaults. Throws PalisadeError
 * POLICY_INVALID for a malformed one and POLICY_NOT_ALLOWED when a derivation would need more than
 * `limits.maxMemoryBytes` (scrypt: 128·N·r·p bytes; Argon2id: memoryCost KiB). Pure: cache the result.
 */
export function resolvePolicy(stored: Readonly<Record<string, unknown>> | null, limits: PolicyLimits): ChallengePolicy {
  const s = stored ?? {};
  if (typeof s !== 'object' || Array.isArray(s)) invalid('the policy must be a JSON object');
  for (const name of Object.keys(s)) if (!STORED_FIELDS.has(name)) invalid(`unknown field "${name}"`);

  // Country rules (src/intel/key-countries.ts) are checked here so a policy with unknown codes is
  // refused when it is set, not when a client arrives.
  parseCountryRules(s);
  // So are the classification settings (src/classifier/policy.ts).
  parseClassificationPolicy(s, RULE_NAMES);
  // And the code challenge's (src/code-challenge/policy.ts).
  parseCodePolicy(s);
  const version = optionalInt(s, 'version', 1, 2) ?? POLICY_DEFAULTS.version;
  const policy = version === 1 ? resolveV1(s) : resolveV2(s, limits);
  const max = limits.maxExpiresMs;
  if (max === undefined || policy.expiresInMs <= max) return policy;
  return Object.freeze({ ...policy, expiresInMs: Math.max(MIN_EXPIRES_MS, max) });
}

function resolveV2(s: Readonly<Record<string, unknown>>, limits: PolicyLimits): ChallengePolicy {
  if (s.maxnumber !== undefined) invalid('maxnumber is for version 1 policies; use counterMax');
  const algorithm = optionalChoice(s, 'algorithm', POW_ALGORITHMS) ?? POLICY_DEFAULTS.algorithm;
  const d = ALGORITHM_DEFAULTS[algorithm];
  const mode = optionalChoice(s, 'mode', POW_MODES) ?? POLICY_DEFAULTS.mode;
  const memoryHard = algorithm === 'SCRYPT' || algorithm === 'ARGON2ID';

  const cost = optionalInt(s, 'cost', 1, 0xffffffff) ?? d.cost;
  if (algorithm === 'SCRYPT' && (cost < 2 || (cost & (cost - 1)) !== 0)) invalid('scrypt cost (N) must be a power of two ≥ 2');
  if (!memoryHard && (s.memoryCost !== undefined || s.parallelism !== undefined)) {
    invalid(`memoryCost and parallelism apply to SCRYPT and ARGON2ID, not ${algorithm}`);
  }
  const memoryCost = memoryHard ? optionalInt(s, 'memoryCost', 1, 0xffffffff) ?? d.memoryCost : undefined;
  const parallelism = memoryHard ? optionalInt(s, 'parallelism', 1, 16) ?? d.parallelism : undefined;
  if (algorithm === 'ARGON2ID' && memoryCost! < 8 * parallelism!) invalid('Argon2id memoryCost must be ≥ 8 KiB per lane');

  const maxKeyLength = DIGEST_BYTES[algorithm] ?? 64;
  const keyLength = optionalInt(s, 'keyLength', 16, maxKeyLength) ?? POLICY_DEFAULTS.keyLength;

  let counterMin = 0;
  let counterMax = 0;
  let keyPrefix = '';
  if (mode === 'deterministic') {
    if (s.keyPrefix !== undefined || s.keyPrefixLength !== undefined) invalid('keyPrefix applies to probabilistic mode');
    [counterMin, counterMax] = counterRange(s, d.counterMin, d.counterMax);
  } else {
    if (s.counterMin !== undefined || s.counterMax !== undefined) invalid('counterMin/counterMax apply to deterministic mode');
    keyPrefix = prefix(s, d.prefixLength, keyLength);
  }

  const expiresInMs = optionalInt(s, 'expiresInMs', MIN_EXPIRES_MS, MAX_EXPIRES_MS) ?? POLICY_DEFAULTS.expiresInMs;
  const scaledCost = mode === 'probabilistic';
  let maxCost = optionalInt(s, 'maxCost', cost, 0xffffffff);
  if (maxCost === undefined) {
    maxCost = Math.min(cost * POLICY_DEFAULTS.maxCostFactor, 0xffffffff);
    // A defaulted ceiling shrinks to what the memory limit allows; an explicit one is checked below.
    if (algorithm === 'SCRYPT' && scaledCost) {
      while (maxCost > cost && scryptBytes(maxCost, memoryCost!, parallelism!) > limits.maxMemoryBytes) maxCost /= 2;
    }
  } else if (algorithm === 'SCRYPT' && (maxCost & (maxCost - 1)) !== 0) {
    invalid('scrypt maxCost must be a power of two');
  }

  if (algorithm === 'SCRYPT') {
    // In probabilistic mode adaptive difficulty raises N, so the ceiling must fit as well.
    const bytes = scryptBytes(scaledCost ? maxCost : cost, memoryCost!, parallelism!);
    if (bytes > limits.maxMemoryBytes) notAllowed(`scrypt needs ${bytes} bytes, above POW_MAX_MEMORY`);
  } else if (algorithm === 'ARGON2ID' && memoryCost! * 1024 > limits.maxMemoryBytes) {
    notAllowed(`Argon2id needs ${memoryCost! * 1024} bytes, above POW_MAX_MEMORY`);
  }

  return Object.freeze({
    version: 2, algorithm, cost, memoryCost, parallelism, keyLength, mode, counterMin, counterMax, keyPrefix,
    expiresInMs, maxCost,
  });
}

function resolveV1(s: Readonly<Record<string, unknown>>): ChallengePolicy {
  for (const name of ['memoryCost', 'parallelism', 'keyLength', 'keyPrefix', 'keyPrefixLength']) {
    if (s[name] !== undefined) invalid(`${name} does not apply to version 1 policies`);
  }
  const algorithm = optionalChoice(s, 'algorithm', V1_ALGORITHMS) ?? 'SHA-256';
  if ((optionalChoice(s, 'mode', POW_MODES) ?? 'deterministic') !== 'deterministic') invalid('version 1 is deterministic');
  if ((optionalInt(s, 'cost', 1, 1) ?? 1) !== 1) invalid('version 1 cost is 1');
  if (s.maxnumber !== undefined && s.counterMax !== undefined) invalid('give maxnumber or counterMax, not both');
  const d = ALGORITHM_DEFAULTS[algorithm];
  const alias = s.maxnumber !== undefined ? { ...s, counterMax: s.maxnumber } : s;
  const [counterMin, counterMax] = counterRange(alias, d.counterMin, d.counterMax);
  const expiresInMs = optionalInt(s, 'expiresInMs', MIN_EXPIRES_MS, MAX_EXPIRES_MS) ?? POLICY_DEFAULTS.expiresInMs;
  const maxCost = optionalInt(s, 'maxCost', 1, 0xffffffff) ?? POLICY_DEFAULTS.maxCostFactor;
  return Object.freeze({
    version: 1, algorithm, cost: 1, memoryCost: undefined, parallelism: undefined, keyLength: DIGEST_BYTES[algorithm]!,
    mode: 'deterministic', counterMin, counterMax, keyPrefix: '', expiresInMs, maxCost,
  });
}

/**
 * Adaptive difficulty. A client with penalty p is asked for (1 + p) times the expected work, at most
 * maxCost / cost times: deterministic and v1 policies scale the counter range (issuing stays one
 * derivation whatever the range), probabilistic ones scale `cost` (scrypt: down to a power of two).
 * Penalty 0 (or anything not a positive number) returns the policy itself.
 */
export function scalePolicy(policy: ChallengePolicy, penalty: number): ChallengePolicy {
  if (!(penalty > 0) || policy.maxCost <= policy.cost) return policy;
  const factor = Math.min(1 + penalty, policy.maxCost / policy.cost);
  if (policy.mode === 'deterministic') {
    const counterMin = Math.min(MAX_COUNTER, Math.round(policy.counterMin * factor));
    const counterMax = Math.min(MAX_COUNTER, Math.round(policy.counterMax * factor));
    if (counterMin === policy.counterMin && counterMax === policy.counterMax) return policy;
    return Object.freeze({ ...policy, counterMin, counterMax });
  }
  const cost = policy.algorithm === 'SCRYPT'
    ? policy.cost * 2 ** Math.floor(Math.log2(factor))
    : Math.min(policy.maxCost, Math.floor(policy.cost * factor));
  return cost === policy.cost ? policy : Object.freeze({ ...policy, cost });
}

function scryptBytes(n: number, r: number, p: number): number {
  return 128 * n * r * p;
}

function counterRange(s: Readonly<Record<string, unknown>>, defMin: number, defMax: number): [number, number] {
  const min = optionalInt(s, 'counterMin', 0, MAX_COUNTER);
  const max = optionalInt(s, 'counterMax', 0, MAX_COUNTER);
  const lo = min ?? (max !== undefined ? Math.min(defMin, max) : defMin);
  const hi = max ?? Math.max(defMax, lo);
  if (lo > hi) invalid('counterMin must not exceed counterMax');
  return [lo, hi];
}

function prefix(s: Readonly<Record<string, unknown>>, defLength: number, keyLength: number): string {
  if (s.keyPrefix !== undefined && s.keyPrefixLength !== undefined) invalid('give keyPrefix or keyPrefixLength, not both');
  const max = Math.min(MAX_PREFIX_HEX, keyLength * 2 - 1);
  if (s.keyPrefix !== undefined) {
    if (typeof s.keyPrefix !== 'string' || !/^[0-9a-fA-F]+$/.test(s.keyPrefix) || s.keyPrefix.length > max) {
      invalid(`keyPrefix must be 1..${max} hex characters`);
    }
    return s.keyPrefix.toLowerCase();
  }
  return '0'.repeat(optionalInt(s, 'keyPrefixLength', 1, max) ?? defLength);
}

function optionalInt(s: Readonly<Record<string, unknown>>, name: string, min: number, max: number): number | undefined {
  const v = s[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    invalid(`${name} must be an integer in [${min}, ${max}]`);
  }
  return v;
}

function optionalChoice<T extends string>(s: Readonly<Record<string, unknown>>, name: string, allowed: readonly T[]): T | undefined {
  const v = s[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) invalid(`${name} must be one of ${allowed.join(', ')}`);
  return v as T;
}

function invalid(detail: string): never {
  throw new PalisadeError('POLICY_INVALID', `challenge policy: ${detail}`);
}

function notAllowed(detail: string): never {
  throw new PalisadeError('POLICY_NOT_ALLOWED', `challenge policy: ${detail}`);
}
