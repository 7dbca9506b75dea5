// Serves one PGlite instance to many PostgreSQL wire-protocol clients (the workers' `postgres`
// pools) on a Unix socket and, optionally, a loopback TCP port.
//
// Why not @electric-sql/pglite-socket's PGLiteSocketServer: it queues each protocol *message*
// separately, so with two connections the messages of one extended-protocol exchange
// (Parse/Bind/Describe/Execute … Sync) interleave with another's on PGlite's single backend. The
// unnamed statement and portal are shared, and an error makes the backend skip the other client's
// messages until a Sync. Measured with 4 `postgres` clients × 4 connections: `portal "" does not
// exist` within the first 100 queries (docs/data.md, "Embedded database"). Here a connection's
// messages run as one unit up to a Sync or simple Query, and a connection keeps the backend to itself
// while it is inside a transaction block or between a Flush and its Sync. One backend also means
// one session: session state (SET, session advisory locks, named prepared statements) is shared by
// every client, so clients connect with `prepare: false` and use transaction-scoped locks only.
import { createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

export interface PgliteServerOptions {
  /** Unix socket path to listen on. Default: none. */
  readonly socketPath?: string;
  /** Loopback TCP address to listen on. Default: none. */
  readonly tcp?: { readonly host: string; readonly port: number };
  /** Connections served at once (all transports); more are refused with SQLSTATE 53300. Default 64. */
  readonly maxConnections?: number;
  /**
   * A connection that holds the backend (open transaction, or Flush without Sync) and sends
   * nothing for this long is closed and its transaction rolled back, so one stuck client cannot
   * stall every worker. Default 30,000 ms.
   */
  readonly ownerIdleTimeoutMs?: number;
  /** Largest accepted protocol message, and unit (messages up to a Sync). Default 64 MiB. */
  readonly maxMessageBytes?: number;
}

const DEFAULTS = { maxConnections: 64, ownerIdleTimeoutMs: 30_000, maxMessageBytes: 64 * 1024 * 1024 };

export interface PgliteServer {
  /** Bound TCP port when `tcp` was given (useful with port 0). */
  readonly tcpPort: number | undefined;
  stats(): { connections: number; queuedBatches: number };
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
const NO = Buffer.from('N');
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
const ROLLBACK = simpleQuery('ROLLBACK');
// Message types that end a unit of work: Sync, simple Query, Flush, FunctionCall, CopyDone, CopyFail.
const UNIT_END = new Set([0x53, 0x51, 0x48, 0x46, 0x63, 0x66]);
const FLUSH = 0x48;
const TERMINATE = 0x58;

interface Unit {
  readonly bytes: Buffer;
  /** Ends with Flush: the client waits for answers and then continues the same exchange. */
  readonly flush: boolean;
}

interface Connection {
  readonly socket: Socket;
  started: boolean;
  buffer: Buffer;
  /** Messages of the unit being collected (since the last unit end). */
  pending: Buffer[];
  pendingBytes: number;
  units: Unit[];
  closed: boolean;
}

export async function startPgliteServer(db: PGlite, options: PgliteServerOptions = {}): Promise<PgliteServer> {
  const maxConnections = options.maxConnections ?? DEFAULTS.maxConnections;
  const ownerIdleTimeoutMs = options.ownerIdleTimeoutMs ?? DEFAULTS.ownerIdleTimeoutMs;
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULTS.maxMessageBytes;
  const connections = new Set<Connection>();
  const ready: Connection[] = [];
  let owner: Connection | null = null;
  let ownerTimer: NodeJS.Timeout | null = null;
  let pumping = false;
  let closing = false;

  const accept = (socket: Socket): void => {
    if (closing || connections.size >= maxConnections) {
      // Answered after the client's startup message, as PostgreSQL does, then destroyed: a client
      // that never reads or never writes must not keep the socket (and close()) waiting.
      const refuse = setTimeout(() => socket.destroy(), 2000);
      refuse.unref();
      socket.on('error', () => undefined);
      socket.once('data', () => {
        socket.end(errorResponse('53300', 'too many connections to the embedded database'), () => socket.destroy());
      });
      return;
    }
    const conn: Connection = {
      socket, started: false, buffer: Buffer.alloc(0), pending: [], pendingBytes: 0, units: [], closed: false,
    };
    connections.add(conn);
    socket.setNoDelay(true);
    socket.on('data', (chunk) => onData(conn, chunk));
    socket.on('error', () => drop(conn));
    socket.on('close', () => drop(conn));
  };

  const onData = (conn: Connection, chunk: Buffer): void => {
    conn.buffer = conn.buffer.length === 0 ? chunk : Buffer.concat([conn.buffer, chunk]);
    for (;;) {
      const buf = conn.buffer;
      if (!conn.started) {
        if (buf.length < 8) return;
        const length = buf.readInt32BE(0);
        if (length < 8 || length > 10_000) return void conn.socket.destroy();
        if (buf.length < length) return;
        const code = buf.readInt32BE(4);
        const message = buf.subarray(0, length);
        conn.buffer = buf.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          conn.socket.write(NO);
        } else if (code === PROTOCOL_3) {
          conn.started = true;
          enqueue(conn, { bytes: Buffer.from(message), flush: false });
        } else {
          // CancelRequest (PGlite has no backend to signal) or an unknown protocol: close.
          conn.socket.destroy();
          return;
        }
        continue;
      }
      if (buf.length < 5) return;
      const length = buf.readInt32BE(1);
      if (length < 4 || length > maxMessageBytes) return void conn.socket.destroy();
      if (buf.length < length + 1) return;
      const type = buf[0]!;
      const message = buf.subarray(0, length + 1);
      conn.buffer = buf.subarray(length + 1);
      if (type === TERMINATE) {
        conn.socket.end();
        return;
      }
      conn.pending.push(message);
      conn.pendingBytes += message.length;
      if (conn.pendingBytes > maxMessageBytes) return void conn.socket.destroy();
      if (UNIT_END.has(type)) {
        const bytes = Buffer.concat(conn.pending);
        conn.pending = [];
        conn.pendingBytes = 0;
        enqueue(conn, { bytes, flush: type === FLUSH });
      }
    }
  };

  const enqueue = (conn: Connection, unit: Unit): void => {
    conn.units.push(unit);
    if (conn.units.length === 1 && conn !== owner) ready.push(conn);
    if (conn === owner) armOwnerTimer();
    void pump();
  };

  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    try {
      for (;;) {
        let conn: Connection | undefined;
        if (owner !== null) {
          if (owner.units.length === 0) break;
          conn = owner;
        } else {
          conn = ready.shift();
          if (conn === undefined) break;
          if (conn.closed || conn.units.length === 0) continue;
        }
        const unit = conn.units.shift()!;
        await run(conn, unit);
        if (conn.closed) {
          setOwner(null);
          await release();
          continue;
        }
        const holds = unit.flush || db.isInTransaction();
        setOwner(holds ? conn : null);
        if (!holds && conn.units.length > 0) ready.push(conn);
      }
    } finally {
      pumping = false;
    }
  };

  const run = async (conn: Connection, unit: Unit): Promise<void> => {
    try {
      await db.runExclusive(() => db.execProtocolRawStream(unit.bytes, {
        onRawData: (bytes) => {
          if (!conn.closed) conn.socket.write(Buffer.from(bytes));
        },
      }));
    } catch {
      // PGlite reports SQL errors in-band; a throw here means the unit could not run at all.
      conn.socket.destroy();
      conn.closed = true;
    }
  };

  const setOwner = (conn: Connection | null): void => {
    if (ownerTimer !== null) clearTimeout(ownerTimer);
    ownerTimer = null;
    owner = conn;
    if (conn !== null) armOwnerTimer();
  };

  const armOwnerTimer = (): void => {
    if (ownerTimer !== null) clearTimeout(ownerTimer);
    ownerTimer = setTimeout(() => {
      ownerTimer = null;
      if (owner !== null && owner.units.length === 0) owner.socket.destroy();
    }, ownerIdleTimeoutMs);
    ownerTimer.unref();
  };

  // The backend is left by a client that went away: end its exchange and transaction.
  const release = async (): Promise<void> => {
    if (db.closed) return;
    await db.runExclusive(async () => {
      await db.execProtocolRaw(SYNC);
      if (db.isInTransaction()) await db.execProtocolRaw(ROLLBACK);
    });
  };

  const drop = (conn: Connection): void => {
    if (conn.closed && !connections.has(conn)) return;
    conn.closed = true;
    conn.units = [];
    connections.delete(conn);
    if (owner === conn) {
      setOwner(null);
      if (!pumping) {
        pumping = true;
        release().catch(() => undefined).finally(() => {
          pumping = false;
          void pump();
        });
      }
    }
  };

  const servers: Server[] = [];
  const listen = (server: Server, bind: (done: () => void) => void): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      bind(() => {
        server.off('error', reject);
        resolve();
      });
    });

  if (options.socketPath !== undefined) {
    const server = createServer(accept);
    servers.push(server);
    await listen(server, (done) => server.listen(options.socketPath, done));
  }
  let tcpPort: number | undefined;
  if (options.tcp !== undefined) {
    const server = createServer(accept);
    servers.push(server);
    try {
      await listen(server, (done) => server.listen(options.tcp!.port, options.tcp!.host, done));
    } catch (err) {
      await Promise.all(servers.slice(0, -1).map((s) => new Promise((r) => s.close(r))));
      throw err;
    }
    const address = server.address();
    tcpPort = typeof address === 'object' && address !== null ? address.port : undefined;
  }

  return {
    tcpPort,
    stats: () => ({ connections: connections.size, queuedBatches: [...connections].reduce((n, c) => n + c.units.length, 0) }),
    async close() {
      closing = true;
      const closed = servers.map((s) => new Promise((resolve) => s.close(resolve)));
      for (const conn of connections) conn.socket.destroy();
      await Promise.all(closed);
      if (ownerTimer !== null) clearTimeout(ownerTimer);
      // Let a unit that is running finish before the caller closes PGlite.
      while (pumping) await new Promise((resolve) => setTimeout(resolve, 5));
      if (!db.closed && db.isInTransaction()) await release().catch(() => undefined);
      ready.length = 0;
    },
  };
}

function simpleQuery(text: string): Buffer {
  const body = Buffer.from(text + '\0');
  const out = Buffer.allocUnsafe(5 + body.length);
  out[0] = 0x51;
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

function errorResponse(sqlstate: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${sqlstate}\0M${message}\0\0`);
  const out = Buffer.allocUnsafe(5 + fields.length);
  out[0] = 0x45;
  out.writeInt32BE(4 + fields.length, 1);
  fields.copy(out, 5);
  return out;
}
