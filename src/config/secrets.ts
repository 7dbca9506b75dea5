// The service's own secrets (given, derived from SECRET_SEED, or generated: src/secrets.ts) and the
// node's identity.
import { seedProblem } from '../secrets.js';
import { bool, type Parser, str, v } from './variable.js';

const minLength = (n: number): Parser<string | null> => (s) => {
  if (s === '') return null;
  if (s.length < n) throw new Error(`must be at least ${n} characters`);
  return s;
};
const seed: Parser<string | null> = (s) => {
  if (s === '') return null;
  const problem = seedProblem(s);
  if (problem !== null) throw new Error(problem);
  return s;
};

export const SECRET_VARIABLES = {
  SECRET_SEED: v('Secrets', '', seed, 'When set, every generated secret is derived from it with HKDF-SHA256 so all nodes agree; the primary writes the derived values to DATA_DIR/secrets.json, so a later start without the seed keeps them. Refused unless it has at least 24 characters, 10 different ones and an estimated 80 bits of entropy: its length times the smaller of the Shannon entropy of its characters and that of the differences between neighbouring characters (so repeats such as abab… and runs such as abcd… are refused; words of a passphrase count as random characters). E.g. `openssl rand -base64 32`. On a DATA_DIR whose secrets.json holds other values the service refuses to start, naming them: see SECRET_SEED_ROTATE.', true),
  SECRET_SEED_ROTATE: v('Secrets', '0', bool, 'With SECRET_SEED on a DATA_DIR whose secrets.json holds other PALISADE_HMAC_SECRET, CODE_CHALLENGE_SECRET, JWT_SECRET or HASHING_SALT values (generated before the seed was set, or derived from another seed): 1 = replace them with the derived values and rewrite secrets.json, so later starts agree with or without the seed. Every existing API key secret then fails with 401 API_KEY_INVALID until the key gets a new one (`npm run cli -- keys rotate KEY_ID`), challenges already issued fail verification and admin sessions end. 0 = refuse to start instead, naming the secrets that differ. The CLI never rotates: it refuses until the service has started once with the switch.'),
  PALISADE_HMAC_SECRET: v('Secrets', '', minLength(24), 'Signs challenges. Generated and persisted in DATA_DIR when unset.', true),
  CODE_CHALLENGE_SECRET: v('Secrets', '', minLength(24), 'Signs code challenges: keys the hash of the code carried in the challenge and encrypts the audio token (docs/code-challenge.md). Generated when unset.', true),
  JWT_SECRET: v('Secrets', '', minLength(24), 'Signs admin session JWTs. Generated when unset.', true),
  HASHING_SALT: v('Secrets', '', minLength(16), 'Salt for IP and secret hashing. Generated when unset.', true),
  NODE_ID: v('Secrets', '', str, 'Unique node identifier. Generated and persisted when unset (with SECRET_SEED: derived from it and NODE_NAME when NODE_NAME is set).'),
  EMBEDDED_DB_HMAC_SECRET: v('Secrets', '', minLength(24), 'When set, every stored request-log row carries an HMAC made with it.', true),
  CONTEXT_DATA_KEY: v('Secrets', '', str, 'AES-GCM key for context-override data of AI security rules (parsed; feature not implemented yet).', true),
} as const;
