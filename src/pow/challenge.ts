// Challenge creation, PROTOCOL.md sections 1 (v2) and 2 (v1). Issuing is split in two so expensive
// derivations can be done ahead of time (pool.ts): deriveChallenge (random nonce and salt, the key of
// a secret counter, its signature) and signChallenge (expiry, data and the parameters' signature:
// one HMAC, done at issue time so a pooled challenge is never stale).
import { randomInt } from 'node:crypto';
import { PalisadeError } from '../errors.js';
import { hmacPreparedHex, sha, toHex, type HashAlgorithm } from './crypto.js';
import { deriveKey, deriveKeySync } from './derive.js';
import type { ChallengePolicy } from './policy.js';
import { pooledRandomBytes } from './random.js';
import type { PowSecrets } from './secrets.js';
import { MAX_PARAMS, PARAM_NAME_MAX, PARAM_VALUE_MAX, V1_SALT_MAX_LENGTH } from './v1-salt.js';

export interface ChallengeContext {
  readonly secrets: PowSecrets;
  /** The issuing key's id; signed into the challenge so it verifies only for that key. */
  readonly apiKeyId: string;
  /** Validated custom parameters (parseChallengeParams), echoed as `params.<name>` after verification. */
  readonly params?: Readonly<Record<string, string>> | null;
  /** Where the widget posts the solution (configuration.verifyUrl); omitted when undefined. */
  readonly verifyUrl?: string;
  /** Epoch ms; defaults to Date.now(). */
  readonly now?: number;
  /**
   * A code challenge (src/code-challenge/): called with the challenge's nonce and expiry, it gives
   * the code's keyed hash, signed into data.codeHash, and the `codeChallenge` JSON object the widget
   * reads. v2 only. Undefined for none (the default: no work at all).
   */
  readonly code?: (nonce: string, expiresAt: number) => { readonly hash: string; readonly json: string };
}

/** The part of a v2 challenge that costs a derivation in deterministic mode. */
export interface DerivedChallenge {
  readonly nonce: string;
  readonly salt: string;
  readonly keyPrefix: string;
  /** Deterministic mode only. */
  readonly keySignature: string | undefined;
}

/** Issues a challenge for `policy` and returns the JSON response body. */
export async function createChallenge(policy: ChallengePolicy, ctx: ChallengeContext): Promise<string> {
  if (policy.version === 1) return createChallengeV1(policy, ctx);
  return signChallenge(policy, await deriveChallenge(policy, ctx.secrets), ctx);
}

/** A v2 challenge's nonce and salt, from the pooled CSPRNG (src/pow/random.ts). */
const random32 = () => pooledRandomBytes(32);

/** Derives off the event loop when the derivation is expensive (derive.ts decides). */
export async function deriveChallenge(policy: ChallengePolicy, secrets: PowSecrets): Promise<DerivedChallenge> {
  const random = random32();
  if (policy.mode === 'probabilistic') return probabilistic(policy, random);
  const nonce = random.subarray(0, 16);
  const salt = random.subarray(16, 32);
  const key = await deriveKey(policy, nonce, salt, randomInt(policy.counterMin, policy.counterMax + 1));
  return deterministic(policy, secrets, nonce, salt, key);
}

/** The same on the calling thread: only for policies derive.ts's isExpensive() calls cheap. */
export function deriveChallengeSync(policy: ChallengePolicy, secrets: PowSecrets): DerivedChallenge {
  const random = random32();
  if (policy.mode === 'probabilistic') return probabilistic(policy, random);
  const nonce = random.subarray(0, 16);
  const salt = random.subarray(16, 32);
  const key = deriveKeySync(policy, nonce, salt, randomInt(policy.counterMin, policy.counterMax + 1));
  return deterministic(policy, secrets, nonce, salt, key);
}

function probabilistic(policy: ChallengePolicy, random: Buffer): DerivedChallenge {
  return { nonce: toHex(random.subarray(0, 16)), salt: toHex(random.subarray(16, 32)), keyPrefix: policy.keyPrefix, keySignature: undefined };
}

function deterministic(policy: ChallengePolicy, secrets: PowSecrets, nonce: Buffer, salt: Buffer, key: Buffer): DerivedChallenge {
  return {
    nonce: toHex(nonce),
    salt: toHex(salt),
    // As altcha-lib: the solver must find the key whose first half this is, i.e. the secret counter.
    keyPrefix: toHex(key.subarray(0, Math.floor(policy.keyLength / 2))),
    keySignature: hmacPreparedHex(secrets.keySignature, key),
  };
}

/**
 * Completes a derived challenge: expiry, data, signature = hex(HMAC-SHA256(secret,
 * canonicalJson(parameters))). The parameters are written directly in sorted-key
 * order, so the string signed is the string sent (test/unit/pow-challenge.test.ts checks both agree).
 */
export function signChallenge(policy: ChallengePolicy, derived: DerivedChallenge, ctx: ChallengeContext): string {
  const expiresAt = Math.floor(((ctx.now ?? Date.now()) + policy.expiresInMs) / 1000);
  const code = ctx.code?.(derived.nonce, expiresAt);
  let p = `{"algorithm":"${policy.algorithm}","cost":${policy.cost},"data":${dataJson(ctx, code?.hash)},"expiresAt":${expiresAt}` +
    `,"keyLength":${policy.keyLength},"keyPrefix":"${derived.keyPrefix}"`;
  if (derived.keySignature !== undefined) p += `,"keySignature":"${derived.keySignature}"`;
  if (policy.memoryCost !== undefined) p += `,"memoryCost":${policy.memoryCost}`;
  p += `,"nonce":"${derived.nonce}"`;
  if (policy.parallelism !== undefined) p += `,"parallelism":${policy.parallelism}`;
  p += `,"salt":"${derived.salt}"}`;
  const signature = hmacPreparedHex(ctx.secrets.challenge, p);
  const configuration = ctx.verifyUrl === undefined ? '' : `,"configuration":{"verifyUrl":${JSON.stringify(ctx.verifyUrl)}}`;
  const codeChallenge = code === undefined ? '' : `,"codeChallenge":${code.json}`;
  return `{"parameters":${p},"signature":"${signature}"${configuration}${codeChallenge}}`;
}

/** data = {apiKey, codeHash?, "params.<name>": value…}, keys in sorted order. */
function dataJson(ctx: ChallengeContext, codeHash: string | undefined): string {
  const data: Record<string, string> = { apiKey: ctx.apiKeyId };
  if (codeHash !== undefined) data.codeHash = codeHash;
  if (ctx.params) for (const name of Object.keys(ctx.params).sort()) data[`params.${name}`] = ctx.params[name]!;
  return JSON.stringify(data);
}

const V1_HASH: Record<string, HashAlgorithm> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

/**
 * The salt of a v1 challenge: `<24 hex>?expires=<unix s>&apiKey=<id>&params.<name>=<value>&…`.
 * Throws PARAMS_TOO_LONG past V1_SALT_MAX_LENGTH, the limit verification holds it to: values are
 * percent-encoded, so ten values of 100 characters can make a salt of over 3,000.
 */
export function v1Salt(policy: ChallengePolicy, ctx: Pick<ChallengeContext, 'apiKeyId' | 'params' | 'now'>): string {
  const expires = Math.floor(((ctx.now ?? Date.now()) + policy.expiresInMs) / 1000);
  let salt = `${toHex(pooledRandomBytes(12))}?expires=${expires}&apiKey=${encodeURIComponent(ctx.apiKeyId)}&`;
  if (ctx.params) {
    for (const name of Object.keys(ctx.params).sort()) salt += `params.${name}=${encodeURIComponent(ctx.params[name]!)}&`;
  }
  if (salt.length > V1_SALT_MAX_LENGTH) {
    throw new PalisadeError('PARAMS_TOO_LONG', `params.<name>: the v1 salt would be ${salt.length} characters, over the limit of ${V1_SALT_MAX_LENGTH}`);
  }
  return salt;
}

/**
 * v1: salt = `<24 hex>?expires=<unix s>&apiKey=<id>&params.<name>=<value>&…`, always ending in `&`
 * (the parameter-splicing defence of CVE-2025-68113: digits moved from `number` into the salt would
 * change the text after the last `&`). challenge = hex(H(salt + number)), signature = hex(HMAC_H(secret, challenge)).
 * `salt` may be made ahead (v1Salt), so that its limit is checked before anything else is done.
 */
export function createChallengeV1(policy: ChallengePolicy, ctx: ChallengeContext, salt = v1Salt(policy, ctx)): string {
  const number = randomInt(policy.counterMin, policy.counterMax + 1);
  const alg = V1_HASH[policy.algorithm]!;
  const challenge = toHex(sha(alg, salt + number));
  const signature = hmacPreparedHex(ctx.secrets.v1[alg], challenge);
  return `{"algorithm":"${policy.algorithm}","challenge":"${challenge}","maxnumber":${policy.counterMax},` +
    `"salt":${JSON.stringify(salt)},"signature":"${signature}"}`;
}

export { MAX_PARAMS } from './v1-salt.js';
const PARAM_NAME = new RegExp(`^[A-Za-z0-9_-]{1,${PARAM_NAME_MAX}}$`);
// Printable ASCII only: the widget base64-encodes the payload with btoa, which rejects other characters.
const PARAM_VALUE = new RegExp(`^[\\x20-\\x7e]{0,${PARAM_VALUE_MAX}}$`);
const RESERVED_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Custom challenge parameters from the query: `params.<name>=<value>`, at most 10 names of
 * [A-Za-z0-9_-]{1,20}, values of at most 100 printable ASCII characters; the first value of a
 * repeated name wins (as in RequestContext.query). Null when there are none. Throws INVALID_PARAMETER.
 */
export function parseChallengeParams(query: URLSearchParams): Record<string, string> | null {
  let params: Record<string, string> | null = null;
  let count = 0;
  for (const [key, value] of query) {
    if (!key.startsWith('params.')) continue;
    const name = key.slice(7);
    if (!PARAM_NAME.test(name) || RESERVED_NAMES.has(name)) {
      throw new PalisadeError('INVALID_PARAMETER', `params.<name>: name must be 1-${PARAM_NAME_MAX} of [A-Za-z0-9_-]`);
    }
    if (!PARAM_VALUE.test(value)) {
      throw new PalisadeError('INVALID_PARAMETER', `params.<name>: value must be at most ${PARAM_VALUE_MAX} printable ASCII characters`);
    }
    params ??= Object.create(null) as Record<string, string>;
    if (name in params) continue;
    if (++count > MAX_PARAMS) throw new PalisadeError('INVALID_PARAMETER', `at most ${MAX_PARAMS} params.<name> values`);
    params[name] = value;
  }
  return params;
}
