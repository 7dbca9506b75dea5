// Secrets that must exist for the service to run: generated on first start and kept in
// DATA_DIR/secrets.json (mode 0600), or derived from SECRET_SEED with HKDF-SHA256 (one label per
// secret) so that every node given the same seed agrees. A value given in the environment wins.
import { hkdfSync, randomBytes } from 'node:crypto';
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
  /** Write newly generated secrets to DATA_DIR/secrets.json. */
  persist: boolean;
}

export const SECRETS_FILE = 'secrets.json';

export function resolveSecrets(dataDir: string, options: ResolveSecretsOptions): Secrets {
  const path = join(dataDir, SECRETS_FILE);
  const stored = readStored(path);
  const result = {} as Record<SecretName, string>;
  let changed = false;
  for (const name of SECRET_NAMES) {
    const given = options.given[name];
    if (given) {
      result[name] = given;
    } else if (options.seed && (name !== 'NODE_ID' || options.nodeName !== '')) {
      result[name] = deriveSecret(options.seed, name === 'NODE_ID' ? `NODE_ID:${options.nodeName}` : name);
    } else if (stored[name]) {
      result[name] = stored[name]!;
    } else {
      result[name] = name === 'NODE_ID' ? randomBytes(8).toString('hex') : randomBytes(32).toString('base64url');
      stored[name] = result[name];
      changed = true;
    }
  }
  if (changed) {
    if (!options.persist) {
      throw new Error(`${path} does not hold the generated secrets yet; start the service once first`);
    }
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  }
  return Object.freeze(result);
}

/** HKDF-SHA256(seed, salt "palisade", info label) → 32 bytes, base64url (43 chars). */
export function deriveSecret(seed: string, label: string): string {
  const bytes = Buffer.from(hkdfSync('sha256', seed, 'palisade', `palisade:${label}`, 32));
  return label.startsWith('NODE_ID') ? bytes.subarray(0, 8).toString('hex') : bytes.toString('base64url');
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
