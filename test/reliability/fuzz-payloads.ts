// fast-check arbitraries of widget payloads (PROTOCOL.md sections 1 and 2) for
// test/reliability/payload-fuzz.test.ts. Each starts from a solved v1 or v2 payload and changes one to
// three of its parameters: v1 algorithm, challenge, number, signature, took, the salt's random part,
// expires, apiKey, params.* and its framing (the trailing `&`, the CVE-2025-68113 splice of the
// number into the salt); v2 algorithm, cost, keyLength, keyPrefix, keySignature, memoryCost,
// parallelism, nonce, salt, expiresAt, data.apiKey, data.challengeId, data.params.*, the signature,
// the solution's counter, derivedKey and time, and the payload's own shape. Some changed challenges
// are signed again with the server's secret, as if the server had issued them, so the changes fall
// on both sides of the signature check; the rest keep the original signature.
import fc from 'fast-check';
import { hmacPreparedHex, sha, type HashAlgorithm } from '../../src/pow/crypto.js';
import { canonicalJson } from '../../src/pow/payload.js';
import type { PowSecrets } from '../../src/pow/secrets.js';

export interface PayloadMaterial {
  /** Solved v2 payloads (base64) issued to `keyId`. */
  readonly v2: readonly string[];
  /** Solved v1 payloads (base64) issued to `v1KeyId`. */
  readonly v1: readonly string[];
  readonly keyId: string;
  readonly v1KeyId: string;
  /** The server's challenge secrets, to sign changed challenges again. */
  readonly secrets: PowSecrets;
}

export interface FuzzPayload {
  /** base64(JSON), as the widget sends it. */
  readonly payload: string;
  /** The key the unchanged payload was issued to. */
  readonly keyId: string;
  /** What was changed (for failure messages). */
  readonly changes: readonly string[];
}

export const V1_HASH: Readonly<Record<string, HashAlgorithm>> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

const nowS = () => Math.floor(Date.now() / 1000);
const junk = fc.jsonValue({ maxDepth: 2 });
const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }), fc.constant(''), fc.constant('x'.repeat(300)));
const hex = (maxLength: number) => fc.oneof(
  fc.stringMatching(new RegExp(`^[0-9a-f]{0,${maxLength}}$`)),
  fc.stringMatching(new RegExp(`^[0-9A-F]{0,${maxLength}}$`)),
);
/** Numbers around every bound the verifier checks: sign, integer, uint32, safe integer, exponent form. */
const number = fc.oneof(
  fc.constantFrom(0, -0, 1, -1, 2, 15, 16, 17, 63, 64, 65, 1.5, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32,
    2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 1e21, 1e308, -1e308, 99999999999, Number.MIN_VALUE),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
/** Expiries in Unix seconds: past, now, the policy's range, far future, past every store limit. */
const expiry = fc.oneof(
  fc.constantFrom(-3600, -1, 0, 1, 60, 1200, 86_400, 400 * 86_400, 3 * 365 * 86_400).map((d) => nowS() + d),
  fc.constantFrom(0, 1, 99999999999, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 1e21),
  number,
);
const v1Expires = fc.oneof(
  expiry.filter((e) => Number.isSafeInteger(e) && e >= 0).map(String),
  fc.constantFrom('99999999999', '999999999999', '0', '00', '0123', '1e9', '-1', '', ' 1', '1'.repeat(20)),
  fc.stringMatching(/^[0-9]{1,13}$/),
);
const anyValue = fc.oneof(number, text, junk, fc.constant(null), fc.boolean());

/** `resign`: sign the changed challenge again (when every change of the payload is `resignable`). */
type Mutation = { readonly what: string; readonly resign: boolean; readonly resignable: boolean; apply(p: Record<string, unknown>): void };
const set = (what: string, path: string[], value: fc.Arbitrary<unknown>, resignable: boolean): fc.Arbitrary<Mutation> =>
  fc.tuple(value, fc.boolean()).map(([v, resign]) => ({
    what: `${path.join('.')}=${JSON.stringify(v)?.slice(0, 40)}`,
    resign: resign && resignable,
    resignable,
    apply(p) {
      let at = p;
      for (const k of path.slice(0, -1)) {
        if (typeof at[k] !== 'object' || at[k] === null) at[k] = {};
        at = at[k] as Record<string, unknown>;
      }
      if (v === undefined) delete at[path.at(-1)!];
      else at[path.at(-1)!] = v;
    },
  }));

// v2. Signed again only where the change cannot make an issued challenge costly or undefined to
// derive (algorithm, cost, keyLength, memoryCost and parallelism are not: the server never issues
// such changes, and a signed one could ask for any work).
function v2Mutation(m: PayloadMaterial): fc.Arbitrary<Mutation> {
  const P = ['challenge', 'parameters'];
  return fc.oneof(
    set('algorithm', [...P, 'algorithm'], fc.oneof(fc.constantFrom('SHA-256', 'SHA-512', 'PBKDF2/SHA-256', 'SCRYPT', 'ARGON2ID', 'SHA-1', 'sha-256', ''), anyValue), false),
    set('cost', [...P, 'cost'], fc.oneof(number, anyValue), false),
    set('keyLength', [...P, 'keyLength'], fc.oneof(number, anyValue), false),
    set('memoryCost', [...P, 'memoryCost'], fc.oneof(number, anyValue, fc.constant(undefined)), false),
    set('parallelism', [...P, 'parallelism'], fc.oneof(number, anyValue, fc.constant(undefined)), false),
    set('keyPrefix', [...P, 'keyPrefix'], fc.oneof(hex(80), anyValue), true),
    set('keySignature', [...P, 'keySignature'], fc.oneof(hex(70), anyValue, fc.constant(undefined)), true),
    set('nonce', [...P, 'nonce'], fc.oneof(hex(40), anyValue), true),
    set('salt', [...P, 'salt'], fc.oneof(hex(40), anyValue), true),
    set('expiresAt', [...P, 'expiresAt'], fc.oneof(expiry, anyValue), true),
    set('data.apiKey', [...P, 'data', 'apiKey'], fc.oneof(fc.constantFrom(m.v1KeyId, '', `${m.keyId}x`, m.keyId.toUpperCase()), anyValue), true),
    set('data.challengeId', [...P, 'data', 'challengeId'], fc.oneof(text, anyValue), true),
    fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), fc.oneof(text, anyValue))
      .chain(([name, v]) => set('data.params', [...P, 'data', `params.${name}`], fc.constant(v), true)),
    set('data', [...P, 'data'], fc.oneof(junk, fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { minKeys: 17, maxKeys: 20 })), true),
    set('extra parameter', [...P, 'extra'], anyValue, true),
    set('signature', ['challenge', 'signature'], fc.oneof(hex(70), anyValue), false),
    set('counter', ['solution', 'counter'], fc.oneof(number, anyValue), false),
    set('derivedKey', ['solution', 'derivedKey'], fc.oneof(hex(130), anyValue), false),
    set('time', ['solution', 'time'], anyValue, false),
    set('solution', ['solution'], anyValue, false),
    set('challenge', ['challenge'], anyValue, false),
    set('test', ['test'], fc.constantFrom(true, 1, 'true'), false),
  );
}

// v1. The salt is changed part by part; signed again means: the challenge hash recomputed over the
// changed salt and number, and signed, as an issue would have.
interface SaltParts { rand: string; expires: string; apiKey: string; params: string[]; end: string }
const SALT_PARTS = /^([^?]*)\?expires=([^&]*)&apiKey=([^&]*)&(.*)$/s;
function parseSalt(salt: string): SaltParts | null {
  const m = SALT_PARTS.exec(salt);
  if (m === null) return null;
  const params = m[4]!.split('&').filter((p) => p !== '');
  return { rand: m[1]!, expires: m[2]!, apiKey: m[3]!, params, end: '&' };
}
const joinSalt = (s: SaltParts) =>
  `${s.rand}?expires=${s.expires}&apiKey=${s.apiKey}&${s.params.map((p) => `${p}&`).join('')}`.replace(/&$/, s.end);

function saltChange(m: PayloadMaterial): fc.Arbitrary<{ what: string; change: (s: SaltParts) => void }> {
  return fc.oneof(
    v1Expires.map((e) => ({ what: `expires=${e}`, change: (s: SaltParts) => { s.expires = e; } })),
    fc.oneof(fc.constantFrom(m.keyId, '', 'key_', `${m.v1KeyId}x`, 'a'.repeat(65)), fc.string({ maxLength: 30 }).map(encodeURIComponent))
      .map((k) => ({ what: `apiKey=${k}`, change: (s: SaltParts) => { s.apiKey = k; } })),
    fc.oneof(hex(30), fc.string({ maxLength: 30 })).map((r) => ({ what: `random part ${r}`, change: (s: SaltParts) => { s.rand = r; } })),
    fc.tuple(fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/), fc.string({ maxLength: 10 })), fc.string({ maxLength: 320 }))
      .map(([n, v]) => ({ what: `params.${n}`, change: (s: SaltParts) => { s.params.push(`params.${n}=${v}`); } })),
    fc.integer({ min: 11, max: 14 }).map((n) => ({
      what: `${n} params`, change: (s: SaltParts) => { for (let i = 0; i < n; i++) s.params.push(`params.p${i}=v`); },
    })),
    fc.constantFrom('', '&&', '&x', '#', '\n').map((end) => ({ what: `ending ${JSON.stringify(end)}`, change: (s: SaltParts) => { s.end = end; } })),
    fc.constant({ what: 'expires twice', change: (s: SaltParts) => { s.params.unshift(`expires=${nowS() + 999_999}`); } }),
  );
}

function v1Mutation(m: PayloadMaterial): fc.Arbitrary<Mutation> {
  const salt = fc.tuple(saltChange(m), fc.boolean()).map(([{ what, change }, resign]): Mutation => ({
    what: `salt ${what}`,
    resign,
    resignable: true,
    apply(p) {
      const parts = typeof p.salt === 'string' ? parseSalt(p.salt) : null;
      if (parts === null) return;
      change(parts);
      p.salt = joinSalt(parts);
    },
  }));
  // CVE-2025-68113: digits of the number moved into the salt (same hash, different split).
  const splice = fc.tuple(fc.integer({ min: 1, max: 3 }), fc.boolean()).map(([n, resign]): Mutation => ({
    what: `splice ${n}`,
    resign,
    resignable: true,
    apply(p) {
      const digits = String(p.number);
      p.salt = `${String(p.salt)}${digits.slice(0, n)}`;
      p.number = Number(digits.slice(n) || '0');
    },
  }));
  return fc.oneof(
    salt, salt, salt, splice,
    set('salt', ['salt'], fc.oneof(text, anyValue), false),
    set('algorithm', ['algorithm'], fc.oneof(fc.constantFrom('SHA-256', 'SHA-384', 'SHA-512', 'SHA-1', 'sha-256', ''), anyValue), true),
    set('number', ['number'], fc.oneof(number, anyValue), true),
    set('challenge', ['challenge'], fc.oneof(hex(130), anyValue), false),
    set('signature', ['signature'], fc.oneof(hex(130), anyValue), false),
    set('took', ['took'], anyValue, false),
    set('extra', ['extra'], anyValue, false),
  );
}

/** Signs a changed v2 challenge again with the server's secret (as createChallenge does). */
function resignV2(p: Record<string, unknown>, secrets: PowSecrets): void {
  const challenge = p.challenge as Record<string, unknown> | null;
  if (typeof challenge !== 'object' || challenge === null || typeof challenge.parameters !== 'object' || challenge.parameters === null) return;
  challenge.signature = hmacPreparedHex(secrets.challenge, canonicalJson(challenge.parameters));
}

/** Recomputes a changed v1 challenge hash over salt + number and signs it (as createChallengeV1 does). */
function resignV1(p: Record<string, unknown>, secrets: PowSecrets): void {
  const alg = V1_HASH[p.algorithm as string];
  if (alg === undefined || typeof p.salt !== 'string' || typeof p.number !== 'number') return;
  const challenge = sha(alg, p.salt + p.number).toString('hex');
  p.challenge = challenge;
  p.signature = hmacPreparedHex(secrets.v1[alg], challenge);
}

const decode = (b64: string) => JSON.parse(Buffer.from(b64, 'base64').toString('latin1')) as Record<string, unknown>;
const encode = (v: unknown) => Buffer.from(JSON.stringify(v) ?? 'null', 'latin1').toString('base64');

/** Solved payloads with one to three changes; one in ten unchanged, a few random. */
export function payloadArb(m: PayloadMaterial): fc.Arbitrary<FuzzPayload> {
  const changed = (bases: readonly string[], keyId: string, mutation: fc.Arbitrary<Mutation>, resign: (p: Record<string, unknown>) => void) =>
    fc.tuple(fc.constantFrom(...bases), fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([b64, mutations]): FuzzPayload => {
      const p = decode(b64);
      for (const mu of mutations) mu.apply(p);
      const resigned = mutations.some((mu) => mu.resign) && mutations.every((mu) => mu.resignable);
      if (resigned) resign(p);
      return { payload: encode(p), keyId, changes: [...mutations.map((mu) => mu.what), ...resigned ? ['signed again'] : []] };
    });
  return fc.oneof(
    { arbitrary: changed(m.v2, m.keyId, v2Mutation(m), (p) => resignV2(p, m.secrets)), weight: 45 },
    { arbitrary: changed(m.v1, m.v1KeyId, v1Mutation(m), (p) => resignV1(p, m.secrets)), weight: 40 },
    { arbitrary: fc.constantFrom(...m.v2).map((payload) => ({ payload, keyId: m.keyId, changes: ['none'] })), weight: 5 },
    { arbitrary: fc.constantFrom(...m.v1).map((payload) => ({ payload, keyId: m.v1KeyId, changes: ['none'] })), weight: 5 },
    { arbitrary: fc.oneof(fc.base64String({ maxLength: 200 }), junk.map(encode), text).map((payload) => ({ payload, keyId: m.keyId, changes: ['random'] })), weight: 5 },
  );
}
