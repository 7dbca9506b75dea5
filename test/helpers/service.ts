// Starts the real service (node dist/src/main.js) in a child process on a free port with a fresh
// DATA_DIR, for tests that need the clustered server.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/index.js';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { openDatabase, type Sql } from '../../src/db/client.js';
import { createApiKey, type NewApiKey } from '../../src/keys/api-keys.js';
import { createKeySecrets, deriveApiKeySecretKey, type KeySecrets } from '../../src/keys/secrets.js';
import { externalEngine } from '../../src/db/engines.js';
import { databaseOptions } from '../../src/services.js';
import { baseEnv, freePort, pollUntilReady, stopChild } from './child-process.js';
import { freshPgliteDataDir } from './db.js';

export { childPids } from './child-process.js';

export const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface Service {
  /** The environment the service was started with. */
  readonly env: Readonly<Record<string, string>>;
  readonly port: number;
  readonly url: string;
  readonly dataDir: string;
  readonly proc: ChildProcess;
  /** stdout + stderr lines so far. */
  readonly output: string[];
  /** Resolves with the first output line matching `pattern` (from the start of output). */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

/**
 * A fresh data directory; with the embedded database, a copy of an initialised PGlite (initdb runs
 * once per machine), which makes start-up seconds faster. The caller removes it (rmSync).
 */
export async function newDataDir(env?: Record<string, string>): Promise<string> {
  return env !== undefined && externalEngine(env) !== null ? mkdtempSync(join(tmpdir(), 'palisade-test-')) : freshPgliteDataDir();
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Reuse a data directory (restart tests); default a new temporary one, removed on stop. */
  dataDir?: string;
  /** Wait for /.live; default true. */
  waitReady?: boolean;
  timeoutMs?: number;
}

export async function startService(options: StartOptions = {}): Promise<Service> {
  const port = await freePort();
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? await newDataDir(options.env);
  const env: Record<string, string> = {
    ...baseEnv(), PORT: String(port), DATA_DIR: dataDir,
    // Tests send thousands of requests from one address: abuse protection is off unless a test turns it on.
    WORKERS: '2', LOG_LEVEL: 'warn', FLOOD_RATE_LIMIT: '', THREATS_ENABLED: '0', GEO_EMBEDDED_ASN: '0',
    // Nothing in a test reaches the internet: lists come from a loopback server when a test sets them.
    FIREHOL_LEVEL1_URL: '', FIREHOL_PROXIES_URL: '', FIREHOL_TOR_EXITS_URL: '', EMAIL_LIST_DISPOSABLE: '', PHISHING_LIST_URL: '',
    ...options.env,
  };
  const proc = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const waiters = new Set<() => void>();
  for (const stream of [proc.stdout!, proc.stderr!]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      output.push(...lines);
      for (const w of waiters) w();
    });
  }
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const service: Service = {
    env, port, url: `http://127.0.0.1:${port}`, dataDir, proc, output,
    waitForOutput(pattern, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = output.find((l) => pattern.test(l));
          if (line !== undefined) { cleanup(); resolve(line); }
        };
        const timer = setTimeout(() => { cleanup(); reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${output.join('\n')}`)); }, timeoutMs);
        const cleanup = () => { clearTimeout(timer); waiters.delete(check); };
        waiters.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM', timeoutMs = 15_000) {
      const code = await stopChild(proc, exited, signal, timeoutMs);
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
  if (options.waitReady ?? true) {
    const state = await pollUntilReady(`${service.url}/.live`, proc, Date.now() + (options.timeoutMs ?? 45_000), 50);
    if (state === 'exited') throw new Error(`service exited with ${proc.exitCode ?? proc.signalCode}:\n${output.join('\n')}`);
    if (state === 'timeout') {
      await service.stop('SIGKILL');
      throw new Error(`service did not answer /.live in time:\n${output.join('\n')}`);
    }
  }
  return service;
}

export interface TestKey {
  readonly id: string;
  readonly secret: string;
  readonly accountId: string;
}

/**
 * Creates an API key in the running service's database (its embedded database socket, or
 * POSTGRES_URL), with the service's own secrets, as the CLI does.
 */
export async function createTestKey(svc: Service, input: Omit<NewApiKey, 'accountId'> = {}): Promise<TestKey> {
  return withServiceDb(svc, async (sql, secrets, accountId) => {
    const created = await createApiKey(sql, secrets, { accountId, ...input }, 'test');
    return { id: created.key.id, secret: created.secret, accountId };
  });
}

/** Runs `fn` with a connection to the service's database and its key secrets. */
export async function withServiceDb<T>(svc: Service, fn: (sql: Sql, secrets: KeySecrets, defaultAccountId: string) => Promise<T>): Promise<T> {
  const config = loadConfig({ env: svc.env, persistSecrets: false });
  const db = openDatabase({ ...databaseOptions(config), maxConnections: 1 });
  try {
    const secrets = createKeySecrets(deriveApiKeySecretKey(config.secrets.PALISADE_HMAC_SECRET), config.secrets.HASHING_SALT);
    const account = await ensureDefaultAccount(db.sql, config.DEFAULT_ACCOUNT_NAME);
    return await fn(db.sql, secrets, account.id);
  } finally {
    await db.close(1000);
  }
}
