// A throwaway PostgreSQL cluster for tests that stop and restart the database server: initdb in a
// temporary directory, a spare port on 127.0.0.1, trust authentication, no fsync. PostgreSQL refuses
// to run as root, so as root the server runs as the `postgres` user (Debian's packages create it),
// else as `nobody`; the directory is handed to that user.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spareLocalPort } from './redis-server.js';

export interface PgCluster {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly dataDir: string;
  /** pg_ctl stop -m fast: connections are closed, the port refuses new ones. */
  stop(): void;
  /** pg_ctl start, waiting until it accepts connections. */
  start(): void;
  /** Stop the server and remove its directory. */
  destroy(): void;
}

/** The newest PostgreSQL server binaries: /usr/lib/postgresql/<version>/bin. Null when none is installed. */
export function findPgBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? null : join(root, versions[0]!, 'bin');
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = findPgBin();
  if (bin === null) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)');
  const port = await spareLocalPort();
  const root = mkdtempSync(join(tmpdir(), 'palisade-pg-'));
  const dataDir = join(root, 'data');
  const user = serverUser();
  if (user !== null) chownSync(root, user.uid, user.gid);
  const argv = (cmd: string, args: string[]) =>
    (user === null ? [join(bin, cmd), ...args] : ['runuser', '-u', user.name, '--', join(bin, cmd), ...args]);
  const run = (cmd: string, args: string[]) => {
    const a = argv(cmd, args);
    const r = spawnSync(a[0]!, a.slice(1), { encoding: 'utf8', timeout: 60_000, cwd: root });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout || r.error?.message}`);
  };
  run('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100`;
  const start = () => run('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(root, 'server.log'), '-w', '-t', '30', 'start']);
  const stop = () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '30', 'stop']);
  start();
  let destroyed = false;
  // A test process that ends without its after() hook (killed, crashed) leaves no server behind.
  const onExit = () => {
    const a = argv('pg_ctl', ['-D', dataDir, '-m', 'immediate', 'stop']);
    spawnSync(a[0]!, a.slice(1), { timeout: 10_000, cwd: root });
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    stop,
    start,
    destroy() {
      if (destroyed) return;
      destroyed = true;
      process.off('exit', onExit);
      try {
        if (existsSync(join(dataDir, 'postmaster.pid'))) run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', '-t', '30', 'stop']);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

/** Who runs the server: null = this process's user (not root); as root, `postgres` or else `nobody`. */
function serverUser(): { name: string; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { name, uid, gid };
    } catch { /* no such user */ }
  }
  throw new Error('running as root and neither a postgres nor a nobody user exists to run PostgreSQL');
}
