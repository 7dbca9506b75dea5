// Secrets that must exist for the service to run: generated on first start and kept in
// DATA_DIR/secrets.json (mode 0600), or derived from SECRET_SEED with HKDF-SHA256 (one label per
// secret) so that every node given the same seed agrees. A value given in the environment wins.
//
// A seed never silently replaces secrets already kept: API key secrets are derived from
// PALISADE_HMAC_SECRET and checked against hashes made with HASHING_SALT, so new values would make
// every key fail with 401 API_KEY_INVALID. When the derived values differ from the kept ones,
// start-up is refused unless SECRET_SEED_ROTATE asks for the replacement; derived values are written
// to secrets.json, so a later start without the seed (or with the rotation switch left on) agrees.
import { hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_NAMES = [
  'PALISADE_HMAC_SECRET', 'CODE_CHALLENGE_SECRET', 'JWT_SECRET', 'HASHING_SALT', 'NODE_ID',
] as const;
export type SecretName = (typeof SECRET_NAMES)[number];
export type Secrets = Readonly<Record<SecretName, string>>;

export interface ResolveSecretsOptions {
  /** SECRET_SEED, or null. */
  seed: string | null;
  /** NODE_NAME: with a seed, NODE_ID is derived from seed + node name (a node id must differ per node). */
  nodeName: string;
  /** Values given in the environment (null = not given). */
  given: Partial<Record<string, string | null>>;
  /** Write newly generated or derived secrets to DATA_DIR/secrets.json. */
  persist: boolean;
  /** SECRET_SEED_ROTATE: derived secrets replace kept ones that differ (else start-up is refused). */
  rotate?: boolean;
}

/** The secrets a seed derives that are compared with and written to secrets.json (NODE_ID may change with NODE_NAME). */
const KEPT_SEEDED: ReadonlySet<SecretName> = new Set(['PALISADE_HMAC_SECRET', 'CODE_CHALLENGE_SECRET', 'JWT_SECRET', 'HASHING_SALT']);

export const SECRETS_FILE = 'secrets.json';

export function resolveSecrets(dataDir: string, options: ResolveSecretsOptions): Secrets {
  const path = join(dataDir, SECRETS_FILE);
  const stored = readStored(path);
  const result = {} as Record<SecretName, string>;
  let generated = false;
  let derivedNew = false;
  const differing: SecretName[] = [];
  for (const name of SECRET_NAMES) {
    const given = options.given[name];
    if (given) {
      result[name] = given;
    } else if (options.seed && (name !== 'NODE_ID' || options.nodeName !== '')) {
      result[name] = deriveSecret(options.seed, name === 'NODE_ID' ? `NODE_ID:${options.nodeName}` : name);
      if (!KEPT_SEEDED.has(name)) continue;
      const kept = stored[name];
      if (kept === undefined) derivedNew = true;
      else if (!sameSecret(kept, result[name])) differing.push(name);
      stored[name] = result[name];
    } else if (stored[name]) {
      result[name] = stored[name]!;
    } else {
      result[name] = name === 'NODE_ID' ? randomBytes(8).toString('hex') : randomBytes(32).toString('base64url');
      stored[name] = result[name];
      generated = true;
    }
  }
  if (differing.length > 0) {
    if (!options.rotate) {
      throw new Error(
        `SECRET_SEED derives ${differing.join(', ')} different from ${path} (written without this seed, or with another ` +
        'one). Starting with them would make what they signed or hashed fail: every existing API key secret ' +
        '(401 API_KEY_INVALID), every challenge already issued. Unset SECRET_SEED (or set the seed the file was written ' +
        'with) to keep the stored secrets, or set SECRET_SEED_ROTATE=1 to replace them: secrets.json is rewritten, and ' +
        'each API key then needs a new secret (npm run cli -- keys rotate KEY_ID).',
      );
    }
    if (!options.persist) {
      throw new Error(`${path} still holds the secrets SECRET_SEED_ROTATE=1 replaces; start the service once with it first`);
    }
  }
  if (generated && !options.persist) {
    throw new Error(`${path} does not hold the generated secrets yet; start the service once first`);
  }
  // Derived values are written where a reader could not (the CLI, workers): the primary writes them.
  if (options.persist && (generated || derivedNew || differing.length > 0)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  }
  return Object.freeze(result);
}

/**
 * What SECRET_SEED must have. Everything the service signs is derived from the seed alone, so a
 * guessable seed gives away every secret: a seed is refused unless it has `minLength` characters,
 * `minDistinct` different ones and an estimated `minBits` of entropy (seedEntropyBits). 80 bits
 * admits every 24-character random base64 string (the lowest of 200,000 scored 83.7).
 */
export const SEED_RULE = Object.freeze({ minLength: 24, minDistinct: 10, minBits: 80 });

/** Why `seed` is refused as SECRET_SEED (never quoting it), or null when it is accepted. */
export function seedProblem(seed: string): string | null {
  const chars = [...seed];
  const distinct = new Set(chars).size;
  const bits = seedEntropyBits(seed);
  if (chars.length >= SEED_RULE.minLength && distinct >= SEED_RULE.minDistinct && bits >= SEED_RULE.minBits) return null;
  return `must have at least ${SEED_RULE.minLength} characters, ${SEED_RULE.minDistinct} different ones and an estimated ` +
    `${SEED_RULE.minBits} bits of entropy (this one: ${chars.length} characters, ${distinct} different, about ` +
    `${Math.round(bits)} bits); use e.g. \`openssl rand -base64 32\``;
}

/**
 * Estimated entropy of `s` in bits: its length (in code points) times the smaller of two Shannon
 * entropies per character, that of its characters and that of the differences between neighbouring
 * code points. The first scores repeats low ("aaaa…", "abab…"), the second runs ("abcd…", "1234…").
 * A heuristic against mistakes, not a strength meter: words drawn from a dictionary score as if random.
 */
export function seedEntropyBits(s: string): number {
  const codes = Array.from(s, (c) => c.codePointAt(0)!);
  if (codes.length < 2) return 0;
  const steps = codes.slice(1).map((c, i) => c - codes[i]!);
  return codes.length * Math.min(shannon(codes), shannon(steps));
}

function shannon(values: readonly number[]): number {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / values.length) * Math.log2(n / values.length);
  return h;
}

/** HKDF-SHA256(seed, salt "palisade", info label) → 32 bytes, base64url (43 chars). */
export function deriveSecret(seed: string, label: string): string {
  const bytes = Buffer.from(hkdfSync('sha256', seed, 'palisade', `palisade:${label}`, 32));
  return label.startsWith('NODE_ID') ? bytes.subarray(0, 8).toString('hex') : bytes.toString('base64url');
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function readStored(path: string): Partial<Record<SecretName, string>> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`cannot read ${path} (${(err as NodeJS.ErrnoException).code})`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    const out: Partial<Record<SecretName, string>> = {};
    for (const name of SECRET_NAMES) {
      const value = (parsed as Record<string, unknown>)[name];
      if (typeof value === 'string' && value !== '') out[name] = value;
    }
    return out;
  } catch {
    throw new Error(`${path} is not valid JSON; fix or remove it (removing it changes every secret)`);
  }
}
