// `npm run cli -- <command>`: accounts, plans, API keys and usage, against
//   - POSTGRES_URL / --postgres-url, MYSQL_URL, MARIADB_URL or LIBSQL_URL,
//   - the embedded database of a running service (through its socket, DATA_DIR/run/db.sock),
//   - the embedded database of a stopped service (opened here, under the same lock).
// Secrets (PALISADE_HMAC_SECRET, HASHING_SALT) are resolved exactly as the service does
// (environment, SECRET_SEED, else DATA_DIR/secrets.json), so derived key secrets agree; a seed that
// disagrees with secrets.json is refused as the service refuses it, and the CLI never rotates.
//
// This file parses the arguments and dispatches; each command group is a module of src/cli/. The
// environment is read through the service's own loadConfig (configFromEnvironment), the flags
// given as overrides.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Config } from '../config/index.js';
import { createKeySecrets, deriveApiKeySecretKey } from '../keys/secrets.js';
import { accountStatusCommand, createAccountCommand, listAccountsCommand, renameAccountCommand } from './accounts.js';
import { configFromEnvironment, connect, type Context, type Flags, safeUser, UsageError } from './context.js';
import { hostnameCommand } from './hostnames.js';
import { createKeyCommand, listKeysCommand, revokeKeyCommand, rotateKeyCommand } from './keys.js';
import { listPlansCommand, setPlanCommand } from './plans.js';
import { restoreCommand, snapshotCommand } from './snapshots.js';
import { stateCommand } from './state.js';
import { threatsStatusCommand } from './threats.js';
import {
  addTrainingCommand, listSubmissionsCommand, listTrainingCommand, promoteSubmissionCommand, removeTrainingCommand,
} from './training.js';
import { usageCommand } from './usage.js';
import { listUsersCommand, resetPasswordCommand } from './users.js';

const USAGE = `usage: npm run cli -- [--data-dir DIR] [--postgres-url URL] [--json] <command>

  keys create --hostname HOST [--hostname HOST…] [--account ACCOUNT] [--plan PLAN] [--name NAME]
              [--policy JSON] [--rate-limit RULE]
                                   prints the key and its secret (shown once)
  keys list [--account ACCOUNT]
  keys revoke KEY_ID
  keys rotate KEY_ID               a new secret (printed once); the old one stops working
  keys hostname release HOSTNAME   free HOSTNAME for POST /api_key/generate again: the free key
                                   holding it is revoked (docs/hostnames.md)
  keys hostname reassign HOSTNAME KEY_ID
                                   KEY_ID (a standard key) holds HOSTNAME from now on; the free
                                   key holding it is revoked
  accounts create NAME
  accounts list
  accounts rename ACCOUNT NAME
  accounts deactivate ACCOUNT      its keys stop working within CACHE_DURATION_API_KEYS
  accounts activate ACCOUNT
  users list                       console users (docs/admin.md)
  users reset-password USERNAME    a new generated password, printed once, to change at next login
  plans set NAME --limit N|unlimited
  plans list
  usage --key KEY_ID [--month YYYY-MM]
  state                            the shared-memory state table: slots live, expired and never
                                   used (a walk of the whole file; the service may be running)
  threats status                   each threat source: kind, URL (without credentials), entries,
                                   last update, next run, last error (docs/threats.md)
  training add TEXT [--account ACCOUNT] [--group GROUP] [--threshold 0.7] [--weight 1]
                                   an example of unwanted text for the SIMILARITY rule
  training list [--account ACCOUNT] [--group GROUP]
  training remove TRAINING_ID [--account ACCOUNT]
  submissions list [--account ACCOUNT] [--limit N]
                                   submissions classified BAD, newest first (docs/classifier.md)
  submissions promote SUBMISSION_ID [--group GROUP] [--threshold T] [--weight W]
                                   the submission's text becomes a training example of its account
  snapshot [FILE]                  a snapshot of the database now (default: under
                                   SNAPSHOTS_STORAGE_LOCAL_DIR, named by SNAPSHOTS_DB_PREFIX)
  restore FILE                     replace the database's rows with the snapshot's (stop the
                                   service's nodes first; any engine's snapshot into any engine)

Environment: the service's variables (DATA_DIR, POSTGRES_URL, MYSQL_URL, MARIADB_URL, LIBSQL_URL, EMBEDDED_DB_DATABASE_LOCATION,
DEFAULT_ACCOUNT_NAME, TZ, secrets); flags win over them.`;

/** A command on the service's database: the arguments after its name, the context, the flags. */
type DatabaseCommand = (rest: string[], ctx: Context, flags: Flags) => Promise<void>;

/** By the first two words (`usage`, `snapshot` and `restore` by their one). */
const DATABASE_COMMANDS = new Map<string, DatabaseCommand>([
  ['keys create', createKeyCommand],
  ['keys list', listKeysCommand],
  ['keys revoke', revokeKeyCommand],
  ['keys rotate', rotateKeyCommand],
  ['keys hostname', hostnameCommand],
  ['accounts create', createAccountCommand],
  ['accounts list', listAccountsCommand],
  ['accounts rename', renameAccountCommand],
  ['accounts deactivate', accountStatusCommand(false)],
  ['accounts activate', accountStatusCommand(true)],
  ['users list', listUsersCommand],
  ['users reset-password', resetPasswordCommand],
  ['plans set', setPlanCommand],
  ['plans list', listPlansCommand],
  ['usage', usageCommand],
  ['training add', addTrainingCommand],
  ['training list', listTrainingCommand],
  ['training remove', removeTrainingCommand],
  ['submissions list', listSubmissionsCommand],
  ['submissions promote', promoteSubmissionCommand],
  ['snapshot', snapshotCommand],
  ['restore', restoreCommand],
]);

export async function main(argv: string[]): Promise<number> {
  let flags: Flags;
  let positionals: string[];
  try {
    const parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'data-dir': { type: 'string' },
        'postgres-url': { type: 'string' },
        json: { type: 'boolean', default: false },
        hostname: { type: 'string', multiple: true, default: [] },
        account: { type: 'string' },
        plan: { type: 'string' },
        name: { type: 'string' },
        limit: { type: 'string' },
        key: { type: 'string' },
        month: { type: 'string' },
        policy: { type: 'string' },
        'rate-limit': { type: 'string' },
        group: { type: 'string' },
        threshold: { type: 'string' },
        weight: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
    if (parsed.values.help || parsed.positionals.length === 0) {
      console.log(USAGE);
      return parsed.values.help ? 0 : 2;
    }
    const v = parsed.values;
    flags = {
      dataDir: v['data-dir'], postgresUrl: v['postgres-url'], json: v.json ?? false,
      hostname: (v.hostname ?? []).flatMap((h) => h.split(',')).map((h) => h.trim()).filter((h) => h !== ''),
      account: v.account, plan: v.plan, name: v.name, limit: v.limit, key: v.key, month: v.month,
      policy: v.policy, rateLimit: v['rate-limit'], group: v.group, threshold: v.threshold, weight: v.weight,
    };
    positionals = parsed.positionals;
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }

  if (positionals[0] === 'state') {
    if (positionals.length > 1) {
      console.error(`unexpected argument ${positionals[1]}\n\n${USAGE}`);
      return 2;
    }
    return withoutDatabase(flags, stateCommand);
  }
  if (positionals[0] === 'threats') {
    if (positionals[1] !== 'status' || positionals.length > 2) {
      console.error(`unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
      return 2;
    }
    return withoutDatabase(flags, threatsStatusCommand);
  }
  const byOne = ['usage', 'snapshot', 'restore'].includes(positionals[0]!);
  const command = DATABASE_COMMANDS.get(byOne ? positionals[0]! : positionals.slice(0, 2).join(' '));
  if (command === undefined) {
    console.error(`unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
    return 2;
  }
  let config: Config;
  try {
    config = configFromEnvironment(flags);
  } catch (err) {
    console.error((err as Error).message);
    return 1;
  }
  let handle: Awaited<ReturnType<typeof connect>> | null = null;
  try {
    handle = await connect(config);
    const secrets = createKeySecrets(deriveApiKeySecretKey(config.secrets.PALISADE_HMAC_SECRET), config.secrets.HASHING_SALT);
    const json = flags.json;
    const actor = `cli:${safeUser()}`;
    const ctx: Context = {
      config, db: handle.db, secrets, actor,
      admin: { sql: handle.db.sql, secrets, settings: config, actor: { name: actor, ip: null } },
      out: (human, data) => console.log(json ? JSON.stringify(data) : human),
    };
    await command(positionals.slice(byOne ? 1 : 2), ctx, flags);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    console.error(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    await handle?.db.close().catch(() => undefined);
    await handle?.embedded?.close().catch(() => undefined);
  }
}

/** A command that reads the service's files, not its database: its exit status, 1 when it throws. */
function withoutDatabase(flags: Flags, command: (config: Config, json: boolean) => number): number {
  try {
    return command(configFromEnvironment(flags), flags.json);
  } catch (err) {
    console.error(`error: ${(err as Error).message}`);
    return 1;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
