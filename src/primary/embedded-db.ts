// The embedded database (DESIGN.md section 3): PGlite opened by the primary at
// EMBEDDED_DB_DATABASE_LOCATION and served to the workers on a Unix socket in the data directory
// (directory 0700, socket 0600, the database's files 0600 or 0700: pglite-owner-only.ts), optionally also on a loopback TCP port. Workers (and the CLI while
// the service runs) connect with openDatabase({ socketPath }).
//
// One process at a time may open the PGlite directory: `<location>.lock` holds the owner's pid,
// taken with O_EXCL. A lock left by a dead process (or by this very pid, as after a container
// restart where the primary is pid 1 again) is taken over.
import { PGlite } from '@electric-sql/pglite';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { embeddedLocation, embeddedSocketPath } from '../db/embedded-paths.js';
import { parseEmbeddedDbAddr } from '../db/engines.js';
import { OwnerOnlyNodeFS, restrictToOwner } from '../db/pglite-owner-only.js';
import { seedFromTemplate } from '../db/pglite-template.js';
import { socketAlive } from '../db/socket-alive.js';
import { startPgliteServer, type PgliteServer } from '../db/pglite-server.js';

export interface EmbeddedDatabaseOptions {
  /** DATA_DIR: the socket is `<dataDir>/run/db.sock`. */
  readonly dataDir: string;
  /**
   * The PGlite directory (EMBEDDED_DB_DATABASE_LOCATION); relative paths are under dataDir.
   * `memory://` keeps everything in memory (tests).
   */
  readonly location: string;
  /** EMBEDDED_DB_DATABASE_ADDR: loopback `host:port` also served over TCP. Default: none. */
  readonly addr?: string;
  /** Client connections served at once (all workers' pools + CLI). Default 64. */
  readonly maxConnections?: number;
  /** See PgliteServerOptions.ownerIdleTimeoutMs. Default 30,000 ms. */
  readonly ownerIdleTimeoutMs?: number;
}

export interface EmbeddedDatabase {
  readonly socketPath: string;
  /** The loopback TCP address when `addr` was given (port resolved when 0). */
  readonly tcp: { readonly host: string; readonly port: number } | null;
  /** Stops serving, closes PGlite (a clean shutdown, checkpointed) and releases the lock. */
  close(): Promise<void>;
}

export { embeddedLocation, embeddedSocketPath } from '../db/embedded-paths.js';
export { socketAlive } from '../db/socket-alive.js';

// sockaddr_un.sun_path is 108 bytes on Linux including the terminating NUL.
const MAX_SOCKET_PATH = 107;

export async function startEmbeddedDatabase(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const tcp = options.addr === undefined || options.addr === '' ? null : parseEmbeddedDbAddr(options.addr);
  const socketPath = embeddedSocketPath(options.dataDir);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new Error(`the embedded database socket path ${socketPath} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter DATA_DIR`);
  }
  const location = embeddedLocation(options.dataDir, options.location);
  mkdirSync(dirname(socketPath), { recursive: true, mode: 0o700 });
  chmodSync(dirname(socketPath), 0o700);
  const inMemory = location.startsWith('memory://');
  if (!inMemory) mkdirSync(dirname(location), { recursive: true, mode: 0o700 });

  const lock = inMemory ? NO_LOCK : await acquireLock(`${location}.lock`, socketPath);
  let db: PGlite | null = null;
  let server: PgliteServer | null = null;
  try {
    // An in-memory database still refuses to replace a socket that another process serves.
    if (inMemory && await socketAlive(socketPath)) throw new Error(`${socketPath} is served by another process`);
    if (!inMemory) {
      seedFromTemplate(location);
      restrictToOwner(location);
    }
    db = await PGlite.create(inMemory ? {} : { fs: new OwnerOnlyNodeFS(location) });
    // We hold the lock: a socket file left here belongs to a process that is gone.
    removeIfExists(socketPath);
    server = await startPgliteServer(db, {
      socketPath,
      ...(tcp === null ? {} : { tcp }),
      ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
      ...(options.ownerIdleTimeoutMs === undefined ? {} : { ownerIdleTimeoutMs: options.ownerIdleTimeoutMs }),
    });
    chmodSync(socketPath, 0o600);
  } catch (err) {
    await server?.close().catch(() => undefined);
    await db?.close().catch(() => undefined);
    lock.release();
    throw err;
  }
  const openDb = db;
  const openServer = server;
  let closing: Promise<void> | null = null;
  return {
    socketPath,
    tcp: tcp === null ? null : { host: tcp.host, port: openServer.tcpPort ?? tcp.port },
    close() {
      closing ??= (async () => {
        try {
          await openServer.close();
          await openDb.close();
        } finally {
          removeIfExists(socketPath);
          lock.release();
        }
      })();
      return closing;
    },
  };
}

interface Lock { release(): void }

const NO_LOCK: Lock = { release() {} };

async function acquireLock(path: string, socketPath: string): Promise<Lock> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return { release() { if (!released) { released = true; removeIfExists(path); } } };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readPid(path);
    if (await socketAlive(socketPath) || (holder !== null && holder !== process.pid && processAlive(holder))) {
      throw new Error(
        `the embedded database ${path.slice(0, -5)} is in use${holder === null ? '' : ` by process ${holder}`}; ` +
        `stop it first (if no such process runs, remove ${path})`,
      );
    }
    removeIfExists(path);
  }
  throw new Error(`could not take the lock ${path}: another process took it at the same time`);
}

function readPid(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeIfExists(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
