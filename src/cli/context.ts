// What every CLI command is given: the parsed flags, the service's configuration (read as the service
// reads it, the flags given as overrides), a connection to its database, the key secrets, and where
// output goes.
import { userInfo } from 'node:os';
import { ensureDefaultAccount } from '../db/accounts.js';
import { openDatabase, type Database } from '../db/client.js';
import { embeddedSocketPath } from '../db/embedded-paths.js';
import { externalDatabaseOptions } from '../db/engines.js';
import { migrate } from '../db/migrate.js';
import { socketAlive } from '../db/socket-alive.js';
import { loadConfig, type Config } from '../config/index.js';
import type { KeySecrets } from '../keys/secrets.js';
import type { AdminContext } from '../admin/context.js';
import type { EmbeddedDatabase } from '../primary/embedded-db.js';

/** Wrong use of the CLI: the message is printed with the usage text, and the exit status is 2. */
export class UsageError extends Error {}

export interface Flags {
  dataDir?: string;
  postgresUrl?: string;
  json: boolean;
  hostname: string[];
  account?: string;
  plan?: string;
  name?: string;
  limit?: string;
  key?: string;
  month?: string;
  policy?: string;
  rateLimit?: string;
  group?: string;
  threshold?: string;
  weight?: string;
}

export interface Context {
  readonly config: Config;
  readonly db: Database;
  readonly secrets: KeySecrets;
  /** Prints `human`, or `data` as JSON with --json. */
  readonly out: (human: string, data: unknown) => void;
  /** Who the audit log names: cli:<user>. */
  readonly actor: string;
  /** The admin domain (src/admin/) as this operator: the console and the admin API go through the same functions. */
  readonly admin: AdminContext;
}

/** The service's configuration from the environment, flags applied. */
export function configFromEnvironment(flags: Flags): Config {
  const overrides: { DATA_DIR?: string; POSTGRES_URL?: string } = {};
  if (flags.dataDir !== undefined) overrides.DATA_DIR = flags.dataDir;
  if (flags.postgresUrl !== undefined) overrides.POSTGRES_URL = flags.postgresUrl;
  return loadConfig({ overrides, persistSecrets: false, detectedCpus: 1 });
}

export async function connect(config: Config): Promise<{ db: Database; embedded: EmbeddedDatabase | null }> {
  let embedded: EmbeddedDatabase | null = null;
  let db: Database;
  const external = externalDatabaseOptions(config);
  if (external !== null) {
    db = openDatabase({ ...external, maxConnections: 2, minConnections: 0 });
  } else {
    const socketPath = embeddedSocketPath(config.dataDir);
    if (!(await socketAlive(socketPath))) {
      // The service is stopped: open the database here (this also keeps the service from starting on it
      // meanwhile). PGlite is loaded only in this case.
      const { startEmbeddedDatabase } = await import('../primary/embedded-db.js');
      embedded = await startEmbeddedDatabase({ dataDir: config.dataDir, location: config.EMBEDDED_DB_DATABASE_LOCATION });
    }
    db = openDatabase({ socketPath, maxConnections: 2 });
  }
  try {
    await migrate(db.sql);
    await ensureDefaultAccount(db.sql, config.DEFAULT_ACCOUNT_NAME);
  } catch (err) {
    await db.close().catch(() => undefined);
    await embedded?.close().catch(() => undefined);
    throw err;
  }
  return { db, embedded };
}

export function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'unknown');
  }
}
