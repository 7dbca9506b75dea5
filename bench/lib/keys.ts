// API keys for the scenarios. They are made once per invocation in a template data directory (the
// embedded database opened here, as the CLI does for a stopped service: same functions, same
// secrets), and every target gets a fresh copy of it, so each starts with a clean state file and
// request log but the same keys. SECRET_SEED fixes the server secrets, so the copies agree.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { openDatabase } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { addTrainingExample } from '../../src/db/training-data.js';
import { createApiKey } from '../../src/keys/api-keys.js';
import { createKeySecrets, deriveApiKeySecretKey } from '../../src/keys/secrets.js';
import { startEmbeddedDatabase } from '../../src/primary/embedded-db.js';
import { SPAM_SAMPLE } from './training-sample.js';

/** The origin every scenario request carries; the keys accept only this host, as a real key would. */
export const BENCH_HOSTNAME = 'bench.example.com';
export const BENCH_ORIGIN = `https://${BENCH_HOSTNAME}`;

/**
 * The challenge policies of the scenario keys (stored per key, src/pow/policy.ts):
 * - default: none stored, Palisade's default (deterministic SHA-256, cost 1, counter 10,000–70,000);
 * - narrow: the default with the counter range cut to 0–100, so that the hundreds of thousands of
 *   payloads S2 needs can be solved before the run (about 50 hashes each instead of 40,000).
 *   Deterministic verification is two HMACs whatever the counter, so the verify path measured is
 *   the default policy's; the longer expiry keeps payloads valid through a long run;
 * - pbkdf2: S4's PBKDF2/SHA-256 cost 5,000 deterministic (pooled: one derivation per challenge);
 * - fields: narrow plus `classification: {fields: true}` (src/classifier/policy.ts): the widget is
 *   asked for the form's fields and time zone, and /v1/verify classifies them when it gets them.
 *   S2c verifies payloads without fields with it, beside narrow, for what the policy costs alone.
 */
export const KEY_POLICIES = {
  default: null,
  narrow: { counterMin: 0, counterMax: 100, expiresInMs: 3_600_000 },
  pbkdf2: { algorithm: 'PBKDF2/SHA-256', cost: 5_000, mode: 'deterministic' },
  fields: { counterMin: 0, counterMax: 100, expiresInMs: 3_600_000, classification: { fields: true } },
} as const satisfies Record<string, Record<string, unknown> | null>;

export type KeyName = keyof typeof KEY_POLICIES;


export interface KeyTemplate {
  /** Key ids by name. */
  readonly keys: Readonly<Record<KeyName, string>>;
  /** The keys' secrets (`sec_…`) by name, for the server endpoints' `Authorization: Bearer`. */
  readonly secrets: Readonly<Record<KeyName, string>>;
  /** SECRET_SEED the targets must run with. */
  readonly secretSeed: string;
  /** A fresh data directory holding the keys (a copy of the template). */
  freshDataDir(): string;
  /** Removes the template and every copy. */
  remove(): void;
}

export async function createKeyTemplate(secretSeed: string): Promise<KeyTemplate> {
  // Short paths: the embedded database's socket path must fit in sun_path (107 bytes).
  const root = mkdtempSync(join(tmpdir(), 'pb-'));
  const template = join(root, 't');
  const config = loadConfig({ env: { DATA_DIR: template, SECRET_SEED: secretSeed }, persistSecrets: true, detectedCpus: 1 });
  const embedded = await startEmbeddedDatabase({ dataDir: config.dataDir, location: config.EMBEDDED_DB_DATABASE_LOCATION });
  const db = openDatabase({ socketPath: embedded.socketPath, maxConnections: 2 });
  const keys: Partial<Record<KeyName, string>> = {};
  const keySecrets: Partial<Record<KeyName, string>> = {};
  try {
    await migrate(db.sql);
    const account = await ensureDefaultAccount(db.sql, config.DEFAULT_ACCOUNT_NAME);
    const secrets = createKeySecrets(deriveApiKeySecretKey(config.secrets.PALISADE_HMAC_SECRET), config.secrets.HASHING_SALT);
    for (const [name, policy] of Object.entries(KEY_POLICIES) as [KeyName, Record<string, unknown> | null][]) {
      const { key, secret } = await createApiKey(db.sql, secrets, {
        accountId: account.id, name: `bench-${name}`, hostnames: [BENCH_HOSTNAME], challengePolicy: policy,
      }, 'bench');
      keys[name] = key.id;
      keySecrets[name] = secret;
    }
    // The account's training data (every key is in the one default account), so that S6's SIMILARITY
    // rule compares each text with examples, as for a site that has taught it some spam.
    for (const example of SPAM_SAMPLE) await addTrainingExample(db.sql, { accountId: account.id, group: 'bench', text: example, source: 'bench' });
  } finally {
    await db.close();
    await embedded.close();
  }
  let copies = 0;
  return {
    keys: keys as Record<KeyName, string>,
    secrets: keySecrets as Record<KeyName, string>,
    secretSeed,
    freshDataDir() {
      const dir = join(root, String(++copies));
      cpSync(template, dir, { recursive: true });
      return dir;
    },
    remove() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}
