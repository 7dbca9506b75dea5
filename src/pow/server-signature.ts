// Server-signature payloads (PROTOCOL.md section 3): what POST /v1/verify hands the widget after a
// successful verification, and what integrators check offline with altcha-lib's
// verifyServerSignature or online with POST /v1/verify/signature and POST /challenge/verify.
import { fromHex, hmac, hmacPreparedHex, prepareHmacKey, sha, timingSafeEqual, toHex, type HashAlgorithm, type PreparedHmacKey } from './crypto.js';
import { isHex, isObject } from './payload.js';
import { pooledRandomBytes } from './random.js';
import { claimUntil } from '../store/state-store.js';
import { DEFAULT_CLOCK_SKEW_MS, type VerifyFailure } from './verify.js';

export const SERVER_SIGNATURE_ALGORITHMS = ['SHA-256', 'SHA-384', 'SHA-512'] as const;
export type ServerSignatureAlgorithm = (typeof SERVER_SIGNATURE_ALGORITHMS)[number];
const HASH: Record<ServerSignatureAlgorithm, HashAlgorithm> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

export type Classification = 'GOOD' | 'NEUTRAL' | 'BAD';

/** Threat kinds signed as threats.<kind>, in the order of their names. */
export const THREAT_NAMES = ['bot', 'malicious', 'proxy', 'tor'] as const;
export type ThreatName = (typeof THREAT_NAMES)[number];

/** GOOD < 1 ≤ NEUTRAL < 2 ≤ BAD. */
export function classify(score: number): Classification {
  return score < 1 ? 'GOOD' : score < 2 ? 'NEUTRAL' : 'BAD';
}

/** The API key's secret as an HMAC key for `algorithm`; prepare once per cached ApiKey. */
export function prepareServerKey(secret: string, algorithm: ServerSignatureAlgorithm = 'SHA-256'): PreparedHmacKey {
  return prepareHmacKey(HASH[algorithm], secret);
}

export interface ServerPayloadInput {
  readonly apiKeyId: string;
  /** prepareServerKey(apiKey.secret, algorithm). */
  readonly key: PreparedHmacKey;
  readonly algorithm: ServerSignatureAlgorithm;
  readonly score: number;
  readonly reasons?: readonly string[];
  /** Form fields the widget sent (name → value); their names and fieldsHash are signed. */
  readonly fields?: Readonly<Record<string, string>> | null;
  /** Already anonymised when ANONYMIZE_IP_ADDRESS is on (src/ip.ts). */
  readonly ipAddress?: string | null;
  readonly origin?: string | null;
  readonly challengeAlgorithm?: string;
  readonly penalty?: number;
  readonly params?: Readonly<Record<string, string>> | null;
  readonly timeZone?: string | null;
  /** location.countryCode: the client's ISO 3166-1 alpha-2 country (docs/intel.md). */
  readonly countryCode?: string | null;
  /** location.highRiskCountry=true when the country is one of HIGH_RISK_COUNTRIES. */
  readonly highRiskCountry?: boolean;
  /** threats.<kind>=<source>: the threat list (or 'header') naming the client IP, per kind. */
  readonly threats?: Readonly<Partial<Record<ThreatName, string>>> | null;
  /** More signed facts from other checks, dotted names for nesting: {'text.language': 'en'}. */
  readonly extra?: Readonly<Record<string, string | number | boolean>> | null;
  /** The classification signed; default classify(score) with the protocol's bands (a key's policy may move them). */
  readonly classification?: Classification;
  /** Lifetime of the payload (verificationData.expire = now + ttl). */
  readonly ttlMs: number;
  /** Epoch ms; default Date.now(). */
  readonly now?: number;
}

export interface ServerPayload {
  readonly algorithm: ServerSignatureAlgorithm;
  readonly apiKey: string;
  readonly id: string;
  readonly score: number;
  readonly signature: string;
  readonly verificationData: string;
  readonly verified: true;
  /** base64(JSON{algorithm, apiKey, id, signature, verificationData, verified}). */
  readonly payload: string;
}

/**
 * Builds and signs a server payload: signature = hex(HMAC_alg(secret, raw HASH_alg(verificationData))).
 * verificationData is a query string with keys in sorted order.
 */
export function createServerPayload(input: ServerPayloadInput): ServerPayload {
  const now = input.now ?? Date.now();
  // base64url: never all digits, so altcha-lib's parser keeps it a string.
  const id = pooledRandomBytes(12).toString('base64url');
  const score = Math.max(0, Math.round(input.score * 100) / 100);
  const verificationData = input.extra && Object.keys(input.extra).length > 0
    ? sortedVerificationData(input, now, id, score)
    : orderedVerificationData(input, now, id, score);

  const alg = HASH[input.algorithm];
  const signature = hmacPreparedHex(input.key, sha(alg, verificationData));
  const payload = Buffer.from(JSON.stringify({
    algorithm: input.algorithm, apiKey: input.apiKeyId, id, signature, verificationData, verified: true,
  })).toString('base64');
  return { algorithm: input.algorithm, apiKey: input.apiKeyId, id, score, signature, verificationData, verified: true, payload };
}

/**
 * verificationData in general: every entry, sorted by name (code units), encoded. Used when other
 * checks add names of their own (`extra`), which may fall anywhere in the order.
 */
export function sortedVerificationData(input: ServerPayloadInput, now: number, id: string, score: number): string {
  const entries: [string, string][] = [
    ['classification', input.classification ?? classify(score)],
    ['expire', String(Math.floor((now + input.ttlMs) / 1000))],
    ['id', id],
    ['score', String(score)],
    ['time', String(Math.floor(now / 1000))],
    ['verified', 'true'],
  ];
  if (input.reasons?.length) entries.push(['reasons', input.reasons.join(',')]);
  if (input.fields) {
    const names = fieldNames(input.fields);
    if (names.length > 0) {
      entries.push(['fields', names.join(',')], ['fieldsHash', fieldsHash(input.fields, names)]);
    }
  }
  if (input.ipAddress) entries.push(['ipAddress', input.ipAddress]);
  if (input.countryCode) entries.push(['location.countryCode', input.countryCode]);
  if (input.highRiskCountry) entries.push(['location.highRiskCountry', 'true']);
  if (input.threats) {
    for (const kind of THREAT_NAMES) if (input.threats[kind]) entries.push([`threats.${kind}`, input.threats[kind]]);
  }
  if (input.origin) entries.push(['origin', input.origin]);
  if (input.challengeAlgorithm) entries.push(['challengeAlgorithm', input.challengeAlgorithm]);
  if (input.penalty !== undefined) entries.push(['penalty', String(input.penalty)]);
  if (input.timeZone) entries.push(['timeZone', input.timeZone]);
  if (input.params) for (const name of Object.keys(input.params)) entries.push([`params.${name}`, input.params[name]!]);
  if (input.extra) for (const name of Object.keys(input.extra)) entries.push([name, String(input.extra[name])]);
  entries.sort((a, b) => byCodeUnits(a[0], b[0]));
  return entries.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
}

/**
 * The same string as sortedVerificationData when there are no `extra` names (every verification
 * with the default assessment), written in its known order instead of sorted: challengeAlgorithm,
 * classification, expire, fields, fieldsHash, id, ipAddress, location.countryCode,
 * location.highRiskCountry, origin, params.* (sorted among themselves), penalty, reasons, score,
 * threats.* (in THREAT_NAMES order), time, timeZone, verified. Without the general version's
 * arrays and sort, a server payload costs 4.3 µs instead of 7.0 and 3.6 KB less garbage
 * (a sampling heap profile of S2, commit fc6d267).
 */
export function orderedVerificationData(input: ServerPayloadInput, now: number, id: string, score: number): string {
  let out = '';
  if (input.challengeAlgorithm) out += `challengeAlgorithm=${encode(input.challengeAlgorithm)}&`;
  out += `classification=${input.classification ?? classify(score)}&expire=${encode(String(Math.floor((now + input.ttlMs) / 1000)))}&`;
  if (input.fields) {
    const names = fieldNames(input.fields);
    if (names.length > 0) out += `fields=${encode(names.join(','))}&fieldsHash=${fieldsHash(input.fields, names)}&`;
  }
  out += `id=${encode(id)}&`;
  if (input.ipAddress) out += `ipAddress=${encode(input.ipAddress)}&`;
  if (input.countryCode) out += `location.countryCode=${encode(input.countryCode)}&`;
  if (input.highRiskCountry) out += 'location.highRiskCountry=true&';
  if (input.origin) out += `origin=${encode(input.origin)}&`;
  if (input.params) {
    const names = Object.keys(input.params);
    if (names.length > 1) names.sort(byCodeUnits);
    for (const name of names) out += `${encode(`params.${name}`)}=${encode(input.params[name]!)}&`;
  }
  if (input.penalty !== undefined) out += `penalty=${encode(String(input.penalty))}&`;
  if (input.reasons?.length) out += `reasons=${encode(input.reasons.join(','))}&`;
  out += `score=${encode(String(score))}&`;
  if (input.threats) {
    for (const kind of THREAT_NAMES) if (input.threats[kind]) out += `threats.${kind}=${encode(input.threats[kind])}&`;
  }
  out += `time=${encode(String(Math.floor(now / 1000)))}&`;
  if (input.timeZone) out += `timeZone=${encode(input.timeZone)}&`;
  return `${out}verified=true`;
}

/** Names that can be listed: a comma would split the `fields` list, so such names are left out. */
function fieldNames(fields: Readonly<Record<string, string>>): string[] {
  return Object.keys(fields).filter((name) => name.length > 0 && !name.includes(','));
}

/** hex(SHA-256(values in `names` order joined by "\n")), a missing value being "" (altcha-lib's verifyFieldsHash). */
export function fieldsHash(fields: Readonly<Record<string, string>>, names: readonly string[]): string {
  return toHex(sha('sha256', names.map((n) => String(fields[n] || '')).join('\n')));
}

/** The order of verificationData's names: UTF-16 code units, as Array.prototype.sort without a comparator. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What encodeURIComponent leaves as it is, plus the comma (kept readable below). */
const UNRESERVED = /^[A-Za-z0-9\-_.!~*'(),]*$/;

/** Query-string encoding that keeps commas readable (fields=name,message), as URLSearchParams decodes them. */
function encode(v: string): string {
  return UNRESERVED.test(v) ? v : encodeURIComponent(v).replace(/%2C/g, ',');
}

// ---- verification --------------------------------------------------------------------------------

/** The fields of a server-signature payload, shape-checked. */
export interface ServerPayloadFields {
  readonly algorithm: ServerSignatureAlgorithm;
  readonly apiKey: string;
  readonly id: string | undefined;
  readonly signature: string;
  readonly verificationData: string;
  readonly verified: boolean;
}

const MAX_VERIFICATION_DATA = 8_192;

/** True when `v` has the shape of a server-signature payload (rather than a widget payload). */
export function isServerPayload(v: unknown): boolean {
  return isObject(v) && typeof v.verificationData === 'string';
}

/** Shape check of a decoded server payload; undefined when it is not one. */
export function asServerPayload(v: unknown): ServerPayloadFields | undefined {
  if (!isObject(v)) return undefined;
  const algorithm = v.algorithm as ServerSignatureAlgorithm;
  if (!(SERVER_SIGNATURE_ALGORITHMS as readonly unknown[]).includes(algorithm)) return undefined;
  const hexLength = algorithm === 'SHA-256' ? 64 : algorithm === 'SHA-384' ? 96 : 128;
  if (typeof v.apiKey !== 'string' || v.apiKey.length === 0 || v.apiKey.length > 64) return undefined;
  if (!isHex(v.signature, hexLength) || typeof v.verified !== 'boolean') return undefined;
  if (typeof v.verificationData !== 'string' || v.verificationData.length > MAX_VERIFICATION_DATA) return undefined;
  if (v.id !== undefined && typeof v.id !== 'string') return undefined;
  return {
    algorithm, apiKey: v.apiKey, id: v.id as string | undefined, signature: v.signature,
    verificationData: v.verificationData, verified: v.verified,
  };
}

export interface ServerPayloadDeps {
  /** StateStore.claimOnce: kept until epoch ms `untilMs`. */
  readonly claimOnce: (id: string, untilMs: number) => Promise<boolean>;
  /** CLAIM_CLOCK_SKEW: a payload stays claimed until it expires plus this. Default 60 s. */
  readonly clockSkewMs?: number;
  readonly now?: () => number;
}

export type ServerPayloadCheck =
  | { readonly verified: true; readonly verificationData: Record<string, unknown> }
  | { readonly verified: false; readonly reason: VerifyFailure; readonly verificationData: Record<string, unknown> | null };

/**
 * Checks a server payload against the issuing key's secret, then spends it: each payload is
 * accepted once (PAYLOAD_ALREADY_USED after). Order: signature → verified flags → expiry → claim.
 */
export async function verifyServerPayload(p: ServerPayloadFields, secret: string, deps: ServerPayloadDeps): Promise<ServerPayloadCheck> {
  const alg = HASH[p.algorithm];
  const expected = hmac(alg, secret, sha(alg, p.verificationData));
  if (!timingSafeEqual(fromHex(p.signature), expected)) {
    return { verified: false, reason: 'INVALID_SIGNATURE', verificationData: null };
  }
  const flat = new URLSearchParams(p.verificationData);
  const verificationData = parseVerificationData(p.verificationData);
  if (!p.verified || flat.get('verified') !== 'true') return { verified: false, reason: 'INVALID_SOLUTION', verificationData };
  const now = deps.now?.() ?? Date.now();
  const expire = Number(flat.get('expire'));
  if (!Number.isSafeInteger(expire) || expire * 1000 < now) {
    return { verified: false, reason: 'CHALLENGE_EXPIRED', verificationData };
  }
  const until = claimUntil(expire * 1000, now, deps.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS);
  if (!(await deps.claimOnce(`srv:${flat.get('id') ?? p.signature}`, until))) {
    return { verified: false, reason: 'PAYLOAD_ALREADY_USED', verificationData };
  }
  return { verified: true, verificationData };
}

const LIST_KEYS = new Set(['fields', 'reasons']);

/**
 * verificationData as a nested object: values typed as altcha-lib's parseVerificationData does
 * (true/false, integers, decimals, `fields`/`reasons` as arrays), dotted keys nested
 * (`params.plan=pro` → {params: {plan: 'pro'}}). Objects have no prototype, so no key can reach one.
 */
export function parseVerificationData(text: string): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, raw] of new URLSearchParams(text)) {
    const value = typed(key, raw);
    const path = key.split('.');
    let node = out;
    for (let i = 0; i < path.length - 1; i++) {
      const next = node[path[i]!];
      if (next === undefined) node = node[path[i]!] = Object.create(null) as Record<string, unknown>;
      else if (isObject(next)) node = next;
      else { node = out; path.splice(0, path.length, key); break; } // a scalar is in the way: keep the key flat
    }
    node[path[path.length - 1]!] = value;
  }
  return out;
}

function typed(key: string, v: string): unknown {
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^\d+$/.test(v)) return parseInt(v, 10);
  if (/^\d+\.\d+$/.test(v)) return parseFloat(v);
  if (LIST_KEYS.has(key)) return v.length ? v.trim().split(',') : [];
  return v.trim();
}
