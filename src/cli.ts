// `npm run cli -- <command>`: accounts, plans, API keys and usage, against
//   - POSTGRES_URL / --postgres-url,
//   - the embedded database of a running service (through its socket, DATA_DIR/run/db.sock),
//   - the embedded database of a stopped service (opened here, under the same lock).
// Secrets (PALISADE_HMAC_SECRET, HASHING_SALT) are resolved exactly as the service does
// (environment, SECRET_SEED, else DATA_DIR/secrets.json), so derived key secrets agree; a seed that
// disagrees with secrets.json is refused as the service refuses it, and the CLI never rotates.
//
// The environment is read through the service's own loadConfig (configFromEnvironment), the flags
// given as overrides.
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAccount, ensureDefaultAccount, findAccount, listAccounts } from './db/accounts.js';
import { parseRateRule } from './parse.js';
import { resolvePolicy } from './pow/policy.js';
import { listApiKeys } from './db/api-keys.js';
import { isUniqueViolation, openDatabase, type Database } from './db/client.js';
import { migrate } from './db/migrate.js';
import { listPlans, setPlan } from './db/plans.js';
import { accountRequests, keyUsage } from './db/usage.js';
import { dataPath, loadConfig, type Config } from './config/index.js';
import { createApiKey, loadApiKey, revokeApiKey, rotateApiKeySecret } from './keys/api-keys.js';
import { reassignHostname, releaseHostname } from './keys/hostname-claims.js';
import { createKeySecrets, deriveApiKeySecretKey, isKeyId, type KeySecrets } from './keys/secrets.js';
import { embeddedSocketPath } from './db/embedded-paths.js';
import { socketAlive } from './db/socket-alive.js';
import type { EmbeddedDatabase } from './primary/embedded-db.js';
import { claimMemoryBytes } from './primary/resources.js';
import { openSharedMemoryStore } from './store/shared-memory-store.js';
import { createMonthClock, isMonth } from './usage/month.js';
import { threatsStatus } from './intel/threats-status.js';

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
  plans set NAME --limit N|unlimited
  plans list
  usage --key KEY_ID [--month YYYY-MM]
  state                            the shared-memory state table: slots live, expired and never
                                   used (a walk of the whole file; the service may be running)
  threats status                   each threat source: kind, URL (without credentials), entries,
                                   last update, next run, last error (docs/threats.md)

Environment: the service's variables (DATA_DIR, POSTGRES_URL, EMBEDDED_DB_DATABASE_LOCATION,
DEFAULT_ACCOUNT_NAME, TZ, secrets); flags win over them.`;

const COMMANDS = new Set([
  'keys create', 'keys list', 'keys revoke', 'keys rotate', 'keys hostname', 'accounts create', 'accounts list', 'plans set', 'plans list',
]);

class UsageError extends Error {}

interface Flags {
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
}

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
      policy: v.policy, rateLimit: v['rate-limit'],
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
    try {
      return stateCommand(configFromEnvironment(flags), flags.json);
    } catch (err) {
      console.error(`error: ${(err as Error).message}`);
      return 1;
    }
  }
  if (positionals[0] === 'threats') {
    if (positionals[1] !== 'status' || positionals.length > 2) {
      console.error(`unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
      return 2;
    }
    try {
      const report = threatsStatus(configFromEnvironment(flags));
      console.log(flags.json ? JSON.stringify(report.data) : report.text);
      return 0;
    } catch (err) {
      console.error(`error: ${(err as Error).message}`);
      return 1;
    }
  }
  const command = positionals.slice(0, 2).join(' ');
  if (!COMMANDS.has(command) && !(positionals[0] === 'usage' && positionals.length === 1)) {
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
  let handle: { db: Database; embedded: EmbeddedDatabase | null } | null = null;
  try {
    handle = await connect(config);
    const secrets = createKeySecrets(deriveApiKeySecretKey(config.secrets.PALISADE_HMAC_SECRET), config.secrets.HASHING_SALT);
    await run(positionals, flags, { config, db: handle.db, secrets });
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

/**
 * `state`: how full the shared-memory store is, soft table and claims (README, "Sizing the state
 * store"). Opens the files the service uses, never creates one, and only reads them.
 */
function stateCommand(config: Config, json: boolean): number {
  if (config.REDIS_URL) {
    console.error('error: REDIS_URL is set, so the state lives in Redis, not in a shared-memory table');
    return 1;
  }
  const path = dataPath(config, config.EMBEDDED_DB_REDIS_LOCATION);
  if (!existsSync(path)) {
    console.error(`error: no state file at ${path} (has the service run with this DATA_DIR?)`);
    return 1;
  }
  const store = openSharedMemoryStore(path, { capacity: config.STATE_STORE_CAPACITY, sweepEveryMs: 0, sweepFiles: false });
  try {
    const { live, expired, empty } = store.occupancy();
    const capacity = config.STATE_STORE_CAPACITY;
    const load = live / capacity;
    const c = store.claimMemory();
    const maxBytes = claimMemoryBytes(config.STATE_STORE_MAX_MEMORY, config.CONTAINER_MEMORY_LIMIT_MB);
    const claims = { claims: c.claims, buckets: c.buckets, segments: c.segments, bytes: c.bytes, maxBytes };
    if (json) {
      console.log(JSON.stringify({ path, capacity, live, expired, empty, load, claims }));
    } else {
      const pct = (n: number) => `${((n / capacity) * 100).toFixed(1)} %`;
      const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
      console.log(`state file: ${path}\ncapacity:   ${capacity} slots\nlive:       ${live} (${pct(live)})\n` +
        `expired:    ${expired} (${pct(expired)}, reusable)\nnever used: ${empty} (${pct(empty)})\n` +
        `claims:     ${c.claims} used challenges in ${c.buckets} buckets, ${mb(c.bytes)} of ${mb(maxBytes)} (STATE_STORE_MAX_MEMORY)`);
      if (load > 0.5) {
        console.log('More than half the slots are live: past about 57 % new rate-limit and penalty entries evict the least ' +
          'recently used ones (used challenges are kept apart and never evicted). Raise STATE_STORE_CAPACITY if this is ' +
          'ordinary traffic (README, "Sizing the state store").');
      }
      if (c.bytes > maxBytes * 0.8) console.log('Claims take more than 80 % of STATE_STORE_MAX_MEMORY: past it, verification answers 503 STORE_FULL.');
    }
    return 0;
  } finally {
    void store.close();
  }
}

/** The service's configuration from the environment, flags applied. */
function configFromEnvironment(flags: Flags): Config {
  const overrides: { DATA_DIR?: string; POSTGRES_URL?: string } = {};
  if (flags.dataDir !== undefined) overrides.DATA_DIR = flags.dataDir;
  if (flags.postgresUrl !== undefined) overrides.POSTGRES_URL = flags.postgresUrl;
  return loadConfig({ overrides, persistSecrets: false, detectedCpus: 1 });
}

async function connect(config: Config): Promise<{ db: Database; embedded: EmbeddedDatabase | null }> {
  let embedded: EmbeddedDatabase | null = null;
  let db: Database;
  if (config.POSTGRES_URL) {
    db = openDatabase({ postgresUrl: config.POSTGRES_URL, maxConnections: 2 });
  } else {
    const socketPath = embeddedSocketPath(config.dataDir);
    if (!(await socketAlive(socketPath))) {
      // The service is stopped: open the database here (this also keeps the service from starting on it
      // meanwhile). PGlite is loaded only in this case.
      const { startEmbeddedDatabase } = await import('./primary/embedded-db.js');
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

interface Context {
  readonly config: Config;
  readonly db: Database;
  readonly secrets: KeySecrets;
}

async function run(args: string[], flags: Flags, ctx: Context): Promise<void> {
  const [group, action, ...rest] = args;
  const sql = ctx.db.sql;
  const out = (human: string, data: unknown) => console.log(flags.json ? JSON.stringify(data) : human);
  const actor = `cli:${safeUser()}`;

  if (group === 'keys' && action === 'create') {
    if (rest.length > 0) throw new UsageError(`unexpected argument ${rest[0]}`);
    if (flags.hostname.length === 0) throw new UsageError('keys create needs --hostname');
    const challengePolicy = flags.policy === undefined ? null : parsePolicy(flags.policy, ctx.config.POW_MAX_MEMORY);
    const rateLimit = flags.rateLimit === undefined ? null : checkedRateRule(flags.rateLimit);
    const account = await resolveAccount(ctx, flags.account);
    const { key, secret } = await createApiKey(sql, ctx.secrets, {
      accountId: account.id, hostnames: flags.hostname, ...(flags.plan ? { plan: flags.plan } : {}),
      ...(flags.name ? { name: flags.name } : {}), challengePolicy, rateLimit,
    }, actor).catch((err: unknown) => {
      if ((err as { code?: string }).code === '23503') throw new Error(`no plan named "${flags.plan}" (plans list)`);
      throw err;
    });
    out(
      `apiKey:    ${key.id}\nsecret:    ${secret}\naccount:   ${account.name}\nplan:      ${key.planId}\nhostnames: ${key.hostnames.join(', ')}\n` +
      'The secret is shown only this once: store it now.',
      { apiKey: key.id, secret, accountId: key.accountId, plan: key.planId, hostnames: key.hostnames, name: key.name },
    );
    return;
  }
  if (group === 'keys' && action === 'list') {
    const account = flags.account === undefined ? undefined : await resolveAccount(ctx, flags.account);
    const keys = await listApiKeys(sql, account?.id);
    const rows = keys.map((k) => ({
      id: k.id, accountId: k.accountId, name: k.name, hostnames: k.hostnames, plan: k.plan, enabled: k.enabled,
      createdAt: k.createdAt.toISOString(), lastUsedAt: k.lastUsedAt?.toISOString() ?? null, revokedAt: k.revokedAt?.toISOString() ?? null,
    }));
    out(
      rows.length === 0 ? '(no keys)' : rows.map((r) =>
        `${r.id}  ${r.enabled ? 'enabled ' : 'revoked '}  ${r.plan.padEnd(10)}  ${r.hostnames.join(',') || '*'}  ${r.name}`).join('\n'),
      rows,
    );
    return;
  }
  if (group === 'keys' && (action === 'revoke' || action === 'rotate')) {
    const id = rest[0];
    if (id === undefined || rest.length > 1) throw new UsageError(`keys ${action} needs exactly one KEY_ID`);
    if (!isKeyId(id)) throw new Error(`"${id}" is not a key id`);
    if (action === 'revoke') {
      if (!(await revokeApiKey(sql, id, actor))) throw new Error(`no enabled key ${id}`);
      out(`revoked ${id} (workers stop accepting it within CACHE_DURATION_API_KEYS)`, { revoked: id });
    } else {
      const secret = await rotateApiKeySecret(sql, ctx.secrets, id, actor);
      if (secret === null) throw new Error(`no enabled key ${id}`);
      out(`apiKey: ${id}\nsecret: ${secret}\nThe new secret is shown only this once.`, { apiKey: id, secret });
    }
    return;
  }
  if (group === 'keys' && action === 'hostname') {
    await hostnameCommand(rest, ctx, out, actor);
    return;
  }
  if (group === 'accounts' && action === 'create') {
    const name = rest.join(' ').trim();
    if (name === '') throw new UsageError('accounts create needs NAME');
    try {
      const account = await createAccount(sql, name);
      out(`${account.id}  ${account.name}`, { id: account.id, name: account.name });
    } catch (err) {
      if (isUniqueViolation(err)) throw new Error(`an account named "${name}" exists`);
      throw err;
    }
    return;
  }
  if (group === 'accounts' && action === 'list') {
    const accounts = await listAccounts(sql);
    out(
      accounts.map((a) => `${a.id}  ${a.name}${a.isDefault ? '  (default)' : ''}${a.generated ? '  (generated key)' : ''}`).join('\n'),
      accounts.map((a) => ({
        id: a.id, name: a.name, isDefault: a.isDefault, generated: a.generated, createdAt: a.createdAt.toISOString(),
      })),
    );
    return;
  }
  if (group === 'plans' && action === 'set') {
    const name = rest[0];
    if (name === undefined || rest.length > 1) throw new UsageError('plans set needs NAME');
    if (flags.limit === undefined) throw new UsageError('plans set needs --limit N or --limit unlimited');
    let limit: number | null;
    if (flags.limit === 'unlimited') limit = null;
    else if (/^\d{1,15}$/.test(flags.limit)) limit = Number(flags.limit);
    else throw new UsageError('--limit is a non-negative integer or "unlimited"');
    const plan = await setPlan(sql, name, limit);
    out(`${plan.name}  ${plan.requestLimit ?? 'unlimited'}`, plan);
    return;
  }
  if (group === 'plans' && action === 'list') {
    const plans = await listPlans(sql);
    out(plans.map((p) => `${p.name}  ${p.requestLimit ?? 'unlimited'}`).join('\n'), plans);
    return;
  }
  if (group === 'usage' && action === undefined) {
    if (flags.key === undefined) throw new UsageError('usage needs --key KEY_ID');
    const month = flags.month ?? createMonthClock(ctx.config.TZ || undefined)();
    if (!isMonth(month)) throw new UsageError('--month is YYYY-MM');
    const key = isKeyId(flags.key) ? await loadApiKey(sql, ctx.secrets, flags.key) : null;
    if (key === null) throw new Error(`no key ${flags.key}`);
    const usage = await keyUsage(sql, key.id, month);
    const account = await accountRequests(sql, key.accountId, month);
    const result = {
      month,
      classifications: usage.classifications,
      referrers: usage.referrers,
      requests: { account, apiKey: usage.requests },
      plan: { name: key.planId, requestLimit: key.requestLimit ?? null },
    };
    out(
      [
        `month:     ${month}`,
        `requests:  key ${usage.requests}, account ${account} (plan ${key.planId}, limit ${key.requestLimit ?? 'unlimited'})`,
        `classes:   GOOD ${usage.classifications.GOOD}, NEUTRAL ${usage.classifications.NEUTRAL}, BAD ${usage.classifications.BAD}`,
        ...Object.entries(usage.referrers).map(([origin, n]) => `referrer:  ${origin} ${n}`),
      ].join('\n'),
      result,
    );
    return;
  }
  throw new UsageError(`unknown command: ${args.join(' ')}`);
}

/** `keys hostname release HOSTNAME` and `keys hostname reassign HOSTNAME KEY_ID`. */
async function hostnameCommand(args: string[], ctx: Context, out: (human: string, data: unknown) => void, actor: string): Promise<void> {
  const [verb, hostname, keyId, ...extra] = args;
  const list = (ids: readonly string[]) => (ids.length === 0 ? 'none' : ids.join(', '));
  if (verb === 'release' && hostname !== undefined && keyId === undefined) {
    const r = await releaseHostname(ctx.db.sql, hostname, actor);
    out(`released ${r.hostname}
revoked:  ${list(r.revoked)}
cleared:  ${list(r.cleared)}
` +
      'A free key can be generated for it again (workers drop the revoked keys within CACHE_DURATION_API_KEYS).', r);
    return;
  }
  if (verb === 'reassign' && hostname !== undefined && keyId !== undefined && extra.length === 0) {
    if (!isKeyId(keyId)) throw new Error(`"${keyId}" is not a key id`);
    const r = await reassignHostname(ctx.db.sql, hostname, keyId, actor);
    out(`${r.hostname} is held by ${r.apiKey} (hostnames: ${r.hostnames.join(', ') || '*'})
revoked:  ${list(r.revoked)}
` +
      `cleared:  ${list(r.cleared)}`, r);
    return;
  }
  throw new UsageError('keys hostname release HOSTNAME | keys hostname reassign HOSTNAME KEY_ID');
}

async function resolveAccount(ctx: Context, given: string | undefined) {
  if (given === undefined) return ensureDefaultAccount(ctx.db.sql, ctx.config.DEFAULT_ACCOUNT_NAME);
  const account = await findAccount(ctx.db.sql, given);
  if (account === null) throw new Error(`no account "${given}" (accounts list)`);
  return account;
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'unknown');
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}

/** --policy: a JSON object, checked as the challenge route will check it (src/pow/policy.ts). */
function parsePolicy(text: string, maxMemoryBytes: number): Record<string, unknown> {
  let policy: unknown;
  try {
    policy = JSON.parse(text);
  } catch {
    throw new UsageError('--policy must be a JSON object, e.g. \'{"algorithm":"PBKDF2/SHA-256","cost":5000}\'');
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) throw new UsageError('--policy must be a JSON object');
  try {
    resolvePolicy(policy as Record<string, unknown>, { maxMemoryBytes });
  } catch (err) {
    throw new UsageError(`--policy: ${(err as Error).message}`);
  }
  return policy as Record<string, unknown>;
}

/** --rate-limit: a rule in the spec's syntax, e.g. 100/1m(key=ip&block=10m). */
function checkedRateRule(text: string): string {
  try {
    return parseRateRule(text).source;
  } catch (err) {
    throw new UsageError(`--rate-limit: ${(err as Error).message}`);
  }
}
