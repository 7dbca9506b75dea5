// Runs `npm run cli`'s entry point in a child process with the environment cleared of everything that
// would point it at another data directory, database, store or secrets, plus `env`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));
const SETTINGS = /^(POSTGRES_URL|MYSQL_URL|MARIADB_URL|LIBSQL_URL|SNAPSHOTS_|REDIS_URL|DATA_DIR|PALISADE_|HASHING_SALT|SECRET_SEED|EMBEDDED_DB_|STATE_STORE_)/;

export interface CliRun { code: number; out: string; err: string }

export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !SETTINGS.test(k)));
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d; });
    child.stderr.on('data', (d: Buffer) => { err += d; });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? -1, out, err }));
  });
}
