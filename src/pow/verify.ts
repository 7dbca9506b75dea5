// Verification of widget payloads (PROTOCOL.md sections 1 and 2) in the mandatory order of
// DESIGN.md section 4: size limit → base64 → bounded JSON → shape → constant-time signature →
// expiry → claimOnce (the challenge is spent on its first attempt, whatever the outcome, so a forged
// solution costs at most one derivation) → solution. Nothing read from the challenge before its
// signature holds decides anything: v1 signs only the challenge hash, so its salt (expiry, key,
// params) is trusted only once SHA(salt + number) equals that hash, before the claim.
import { fromHex, hmacPreparedVerifyHex, sha, timingSafeEqual, type HashAlgorithm } from './crypto.js';
import { deriveKey, POW_ALGORITHMS, type PowAlgorithm } from './derive.js';
import { canonicalJson, decodePayload, isHex, isObject, MAX_PAYLOAD_LENGTH } from './payload.js';
import { MAX_COUNTER, MAX_EXPIRES_MS } from './policy.js';
import type { PowSecrets } from './secrets.js';
import { V1_SALT, V1_SALT_MAX_LENGTH } from './v1-salt.js';
import { claimUntil, DEFAULT_CLOCK_SKEW_MS } from '../store/state-store.js';

export { DEFAULT_CLOCK_SKEW_MS };

export const VERIFY_FAILURES = [
  'INVALID_PAYLOAD', 'INVALID_SIGNATURE', 'CHALLENGE_EXPIRED', 'PAYLOAD_ALREADY_USED', 'INVALID_SOLUTION', 'INCORRECT_CODE',
] as const;
export type VerifyFailure = (typeof VERIFY_FAILURES)[number];

export interface VerifiedChallenge {
  readonly verified: true;
  readonly version: 1 | 2;
  /** The challenge's algorithm (verificationData.challengeAlgorithm). */
  readonly algorithm: string;
  /** The key the challenge was issued to. */
  readonly apiKeyId: string;
  /** Custom params signed into the challenge (echoed as `params.<name>`). */
  readonly params: Readonly<Record<string, string>>;
  /** Unix seconds. */
  readonly expiresAt: number;
}
export interface FailedVerification {
  readonly verified: false;
  readonly reason: VerifyFailure;
}
export type VerifyResult = VerifiedChallenge | FailedVerification;

export interface VerifyDeps {
  readonly secrets: PowSecrets;
  /**
   * StateStore.claimOnce: true exactly once per id, kept until epoch ms `untilMs`; rejects (or
   * throws) with STORE_UNAVAILABLE / STORE_FULL. A boolean at once when the store answers on this
   * thread (the shared-memory store).
   */
  readonly claimOnce: (id: string, untilMs: number) => boolean | Promise<boolean>;
  /** CLAIM_CLOCK_SKEW: a claim is kept until the challenge expires plus this. Default 60 s. */
  readonly clockSkewMs?: number;
  /** Longest base64 payload accepted; default MAX_PAYLOAD_LENGTH (16 KiB). */
  readonly maxPayloadLength?: number;
  /** Epoch ms; default Date.now. */
  readonly now?: () => number;
  /**
   * Code challenges (src/code-challenge/): checks a typed code against the challenge's
   * data.codeHash, and is told when such a challenge is spent (the audio route stops speaking it).
   * Without it a challenge carrying a code fails with INCORRECT_CODE.
   */
  readonly code?: CodeVerifier;
}

export interface CodeVerifier {
  check(nonce: string, hash: string, typed: string): boolean;
  spent(nonce: string, untilMs: number): void;
}

/** How far past the longest policy expiry a v1 salt may claim before it reads as forged. */
const CLOCK_TOLERANCE_MS = 5 * 60_000;

const FAILED: Readonly<Record<VerifyFailure, FailedVerification>> = Object.freeze(
  Object.fromEntries(VERIFY_FAILURES.map((r) => [r, Object.freeze({ verified: false, reason: r })])) as
    Record<VerifyFailure, FailedVerification>,
);

/**
 * Verifies a widget payload (v2 or v1) issued to `apiKeyId` (a challenge of another key fails with
 * INVALID_SIGNATURE before it is claimed). Without a Promise when nothing has to wait (a store that
 * answers on this thread, a deterministic challenge): the result, or a Promise of it. Store
 * failures throw or reject (→ 503), never verify.
 */
export function verifyPayload(
  payloadBase64: string, deps: VerifyDeps, apiKeyId: string, code: string | null = null,
): VerifyResult | Promise<VerifyResult> {
  const decoded = decodePayload(payloadBase64, deps.maxPayloadLength ?? MAX_PAYLOAD_LENGTH);
  return decoded === undefined ? FAILED.INVALID_PAYLOAD : verifyDecodedNow(decoded, deps, apiKeyId, code);
}

/** Verifies an already decoded widget payload (POST /challenge/verify dispatches on its shape first). */
export async function verifyDecoded(payload: unknown, deps: VerifyDeps, apiKeyId: string): Promise<VerifyResult> {
  return verifyDecodedNow(payload, deps, apiKeyId, null);
}

function verifyDecodedNow(payload: unknown, deps: VerifyDeps, apiKeyId: string, code: string | null): VerifyResult | Promise<VerifyResult> {
  if (!isObject(payload)) return FAILED.INVALID_PAYLOAD;
  if (isObject(payload.challenge)) return verifyV2(payload, deps, apiKeyId, code);
  if (typeof payload.challenge === 'string') return verifyV1(payload, deps, apiKeyId);
  return FAILED.INVALID_PAYLOAD; // includes the widget's test-mode payload
}

/** `then` without a Promise when the claim was answered at once. */
function afterClaim(claimed: boolean | Promise<boolean>, next: () => VerifyResult | Promise<VerifyResult>): VerifyResult | Promise<VerifyResult> {
  if (claimed instanceof Promise) return claimed.then((ok) => (ok ? next() : FAILED.PAYLOAD_ALREADY_USED));
  return claimed ? next() : FAILED.PAYLOAD_ALREADY_USED;
}

/** True when `payload` looks like a widget payload (as opposed to a server-signature payload). */
export function isWidgetPayload(payload: unknown): boolean {
  return isObject(payload) && (isObject(payload.challenge) || typeof payload.challenge === 'string');
}

// ---- v2 ------------------------------------------------------------------------------------------

const PARAMETER_KEYS = new Set([
  'algorithm', 'cost', 'data', 'expiresAt', 'keyLength', 'keyPrefix', 'keySignature', 'memoryCost', 'nonce',
  'parallelism', 'salt',
]);
const MAX_DATA_ENTRIES = 16;
const MAX_DATA_VALUE = 128;

function verifyV2(payload: Record<string, unknown>, deps: VerifyDeps, apiKeyId: string, code: string | null): VerifyResult | Promise<VerifyResult> {
  const challenge = payload.challenge as Record<string, unknown>;
  const solution = payload.solution;
  const p = challenge.parameters;
  if (!isObject(p) || !isObject(solution) || !validParameters(p)) return FAILED.INVALID_PAYLOAD;
  if (typeof solution.derivedKey !== 'string' || typeof solution.counter !== 'number') return FAILED.INVALID_PAYLOAD;
  if (!isHex(challenge.signature, 64)) return FAILED.INVALID_PAYLOAD;

  if (!hmacPreparedVerifyHex(deps.secrets.challenge, canonicalJson(p), challenge.signature)) return FAILED.INVALID_SIGNATURE;
  const data = p.data as Record<string, string | number | boolean | null>;
  if (data.apiKey !== apiKeyId) return FAILED.INVALID_SIGNATURE;

  const now = deps.now?.() ?? Date.now();
  const expiresAt = p.expiresAt as number;
  if (expiresAt * 1000 < now) return FAILED.CHALLENGE_EXPIRED;

  // PROTOCOL.md: the replay key is data.challengeId when present, else the nonce.
  const id = typeof data.challengeId === 'string' ? data.challengeId : (p.nonce as string);
  const untilMs = until(deps, expiresAt, now);
  return afterClaim(deps.claimOnce(`pow2:${id}`, untilMs), () => {
    // A code challenge (data.codeHash) is spent with the claim, whatever follows.
    const codeHash = typeof data.codeHash === 'string' ? data.codeHash : undefined;
    if (codeHash !== undefined) deps.code?.spent(p.nonce as string, untilMs);
    const keyLength = p.keyLength as number;
    const { counter, derivedKey } = solution as { counter: number; derivedKey: string };
    if (!Number.isInteger(counter) || counter < 0 || counter > MAX_COUNTER || !isHex(derivedKey, keyLength * 2)) {
      return FAILED.INVALID_SOLUTION;
    }
    const submitted = fromHex(derivedKey);
    // The proof of work first, then the code: a wrong code after a right solution is INCORRECT_CODE.
    const verified = () => codeHash !== undefined && (code === null || deps.code === undefined || !deps.code.check(p.nonce as string, codeHash, code))
      ? FAILED.INCORRECT_CODE
      : success(2, p.algorithm as string, apiKeyId, paramsOf(data), expiresAt);
    if (typeof p.keySignature === 'string') {
      // Deterministic: the server signed the one correct key at creation; two HMACs, no derivation.
      return hmacPreparedVerifyHex(deps.secrets.keySignature, submitted, p.keySignature) ? verified() : FAILED.INVALID_SOLUTION;
    }
    return deriveKey({
      algorithm: p.algorithm as PowAlgorithm, cost: p.cost as number, keyLength,
      memoryCost: p.memoryCost as number | undefined, parallelism: p.parallelism as number | undefined,
    }, fromHex(p.nonce as string), fromHex(p.salt as string), counter).then((key) =>
      (timingSafeEqual(key, submitted) && derivedKey.startsWith(p.keyPrefix as string) ? verified() : FAILED.INVALID_SOLUTION));
  });
}

/** Shape of the signed parameters: only what our challenges carry, with sane types and bounds. */
function validParameters(p: Record<string, unknown>): boolean {
  for (const key of Object.keys(p)) if (!PARAMETER_KEYS.has(key)) return false;
  if (!(POW_ALGORITHMS as readonly unknown[]).includes(p.algorithm)) return false;
  if (!isHex(p.nonce, 32) || !isHex(p.salt, 32)) return false;
  if (!isCount(p.cost) || !isCount(p.expiresAt)) return false;
  if (!isCount(p.keyLength) || p.keyLength < 16 || p.keyLength > 64) return false;
  if (typeof p.keyPrefix !== 'string' || p.keyPrefix.length === 0 || !isHex(p.keyPrefix, p.keyPrefix.length)) return false;
  if (p.keySignature !== undefined && !isHex(p.keySignature, 64)) return false;
  if (p.memoryCost !== undefined && !isCount(p.memoryCost)) return false;
  if (p.parallelism !== undefined && !isCount(p.parallelism)) return false;
  const data = p.data;
  if (!isObject(data) || typeof data.apiKey !== 'string') return false;
  const keys = Object.keys(data);
  if (keys.length > MAX_DATA_ENTRIES) return false;
  for (const key of keys) {
    const v = data[key];
    if (typeof v === 'string' ? v.length > MAX_DATA_VALUE : !(v === null || typeof v === 'number' || typeof v === 'boolean')) {
      return false;
    }
  }
  return true;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

function paramsOf(data: Record<string, unknown>): Record<string, string> {
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const key of Object.keys(data)) {
    const v = data[key];
    if (key.startsWith('params.') && typeof v === 'string') params[key.slice(7)] = v;
  }
  return params;
}

// ---- v1 ------------------------------------------------------------------------------------------

const V1_HASH: Record<string, { alg: HashAlgorithm; hex: number }> = {
  'SHA-256': { alg: 'sha256', hex: 64 },
  'SHA-384': { alg: 'sha384', hex: 96 },
  'SHA-512': { alg: 'sha512', hex: 128 },
};
function verifyV1(payload: Record<string, unknown>, deps: VerifyDeps, apiKeyId: string): VerifyResult | Promise<VerifyResult> {
  const h = V1_HASH[payload.algorithm as string];
  const { challenge, number, salt, signature } = payload;
  if (!h || !isHex(challenge, h.hex) || !isHex(signature, h.hex) || typeof number !== 'number') return FAILED.INVALID_PAYLOAD;
  if (typeof salt !== 'string' || salt.length > V1_SALT_MAX_LENGTH) return FAILED.INVALID_PAYLOAD;
  const m = V1_SALT.exec(salt);
  if (!m) return FAILED.INVALID_PAYLOAD;

  if (!hmacPreparedVerifyHex(deps.secrets.v1[h.alg], challenge, signature)) return FAILED.INVALID_SIGNATURE;
  // Only the challenge hash is signed: the salt, and so its expiry, key and params, is what was
  // issued only if it hashes, with the number, to that hash. A wrong number cannot always be told
  // from a forged salt, so it is refused without a claim (one SHA is all an attempt costs), and the
  // claim a valid solution makes is keyed by the signed hash and filed by the salt's proven expiry.
  // A salt that no issue could have written (another key, an expiry past the longest policy) is a
  // forgery: INVALID_SIGNATURE, which abuse protection counts as a malicious event.
  const now = deps.now?.() ?? Date.now();
  const expiresAt = Number(m[1]);
  const solved = Number.isSafeInteger(number) && number >= 0 && timingSafeEqual(sha(h.alg, salt + number), fromHex(challenge));
  if (!solved) return m[2] !== apiKeyId || expiresAt * 1000 > now + MAX_EXPIRES_MS + CLOCK_TOLERANCE_MS ? FAILED.INVALID_SIGNATURE : FAILED.INVALID_SOLUTION;
  if (m[2] !== apiKeyId) return FAILED.INVALID_SIGNATURE;
  if (expiresAt * 1000 < now) return FAILED.CHALLENGE_EXPIRED;
  return afterClaim(deps.claimOnce(`pow1:${challenge}`, until(deps, expiresAt, now)), () =>
    success(1, payload.algorithm as string, apiKeyId, v1Params(m[3]!), expiresAt));
}

function v1Params(query: string): Record<string, string> {
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, value] of new URLSearchParams(query)) params[key.slice(7)] ??= value;
  return params;
}

// ---- shared --------------------------------------------------------------------------------------

/** The claim's moment: the challenge's own expiry plus the skew margin (the same for every attempt). */
function until(deps: VerifyDeps, expiresAt: number, now: number): number {
  return claimUntil(expiresAt * 1000, now, deps.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS);
}

function success(version: 1 | 2, algorithm: string, apiKeyId: string, params: Record<string, string>, expiresAt: number): VerifiedChallenge {
  return { verified: true, version, algorithm, apiKeyId, params, expiresAt };
}
