// Connections to each engine, behind one shape: run a statement (text with the dialect's
// placeholders and encoded parameters) and get plain rows and the affected-row count, run a
// transaction, hold the migration lock, close. PostgreSQL through `postgres` (a server or the
// embedded PGlite's socket), MySQL/MariaDB through `mysql2`, SQLite through `@libsql/client`.
import { createClient, type Client as LibsqlClient } from '@libsql/client';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { MYSQL, POSTGRES, SQLITE, type Dialect } from './dialect.js';

export type Row = Record<string, any>;

export interface Result {
  readonly rows: Row[];
  /** Rows returned by a query, or changed (matched, for an UPDATE) by a statement. */
  readonly count: number;
}

export type Runner = (text: string, params: readonly unknown[]) => Promise<Result>;

export interface Driver {
  readonly dialect: Dialect;
  run: Runner;
  /** `fn` inside one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (run: Runner) => Promise<T>): Promise<T>;
  /**
   * `fn` holding the migration lock of this database, so that processes starting together apply
   * each migration once. PostgreSQL and SQLite: one transaction (DDL included). MySQL: a named
   * lock on one connection, statements committed as they run (its DDL is not transactional).
   */
  exclusive<T>(fn: (run: Runner) => Promise<T>): Promise<T>;
  /** `fn` reading one consistent view of the whole database (read-only), as of its start. */
  consistentRead<T>(fn: (run: Runner) => Promise<T>): Promise<T>;
  /** Opens the pool's minimum connections; resolves when the server answered. */
  ready(): Promise<void>;
  close(timeoutMs: number): Promise<void>;
}

export interface PoolOptions {
  readonly maxConnections: number;
  readonly minConnections: number;
  /** 0 disables. */
  readonly idleTimeoutMs: number;
  readonly connectTimeoutMs: number;
}

/** First key of the PostgreSQL advisory lock: 'PALI' as int32. The second is the schema's hash. */
const LOCK_CLASS = 0x50414c49;

export function postgresDriver(target: { url?: string; socketPath?: string; schema?: string }, pool: PoolOptions): Driver {
  const embedded = target.socketPath !== undefined;
  const min = Math.min(pool.minConnections, pool.maxConnections);
  const common = {
    max: pool.maxConnections,
    // postgres takes seconds; 0/undefined disables.
    idle_timeout: min > 0 || pool.idleTimeoutMs === 0 ? undefined : Math.max(pool.idleTimeoutMs / 1000, 0.001),
    connect_timeout: pool.connectTimeoutMs / 1000,
    // postgres waits (0.5–1) × min(3^n / 100, 20) s before its n-th reconnection, so after a 10 s
    // outage a pool could sit out 10–20 s more with the database back (writes and /.health stuck;
    // test/reliability/postgres-down.test.ts). A failed attempt is cheap: retry within a second.
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
    connection: { application_name: 'palisade', ...(target.schema === undefined ? {} : { search_path: target.schema }) },
  };
  const sql = embedded
    // The embedded backend is one session shared by every connection (src/db/pglite-server.ts):
    // no named prepared statements, which would pile up there across reconnects.
    ? postgres({ ...common, path: target.socketPath, user: 'postgres', database: 'postgres', prepare: false })
    : postgres(target.url!, common);
  const options = { prepare: !embedded };
  const runOn = (q: postgres.Sql | postgres.TransactionSql): Runner => async (text, params) => {
    const result = await q.unsafe(text, params as never[], options);
    return { rows: [...result] as Row[], count: result.count ?? result.length };
  };
  return {
    dialect: POSTGRES,
    run: runOn(sql),
    transaction: (fn) => sql.begin((tx) => fn(runOn(tx))) as Promise<never>,
    exclusive: (fn) => sql.begin(async (tx) => {
      // Transaction-scoped, not session: the embedded database shares one session among all clients.
      await tx`select pg_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(coalesce(current_schema(), ''))::int)`;
      return fn(runOn(tx));
    }) as Promise<never>,
    consistentRead: (fn) => sql.begin('isolation level repeatable read read only', (tx) => fn(runOn(tx))) as Promise<never>,
    async ready() {
      const reserved = await Promise.all(Array.from({ length: Math.max(min, 1) }, () => sql.reserve()));
      await reserved[0]!`select 1`;
      for (const r of reserved) r.release();
    },
    close: (timeoutMs) => sql.end({ timeout: timeoutMs / 1000 }),
  };
}

/** Seconds before the `attempt`-th reconnection in a row: 50 ms doubling up to 1 s, with jitter. */
export function reconnectDelaySeconds(attempt: number): number {
  return Math.min(0.05 * 2 ** attempt, 1) * (0.5 + Math.random() / 2);
}

/**
 * MySQL or MariaDB. Every session runs in ANSI mode ("double-quoted" identifiers, || concatenation)
 * with strict tables, in UTC; 64-bit integers come back as decimal strings, as from PostgreSQL.
 */
export function mysqlDriver(url: string, pool: PoolOptions): Driver {
  const p = mysql.createPool({
    uri: url,
    connectionLimit: pool.maxConnections,
    maxIdle: Math.max(pool.minConnections, 0) || pool.maxConnections,
    ...(pool.idleTimeoutMs > 0 ? { idleTimeout: pool.idleTimeoutMs } : {}),
    connectTimeout: pool.connectTimeoutMs,
    timezone: 'Z',
    dateStrings: false,
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: false,
    charset: 'utf8mb4_bin',
    // mysql2's own parser for DOUBLE text can land one unit in the last place off (99.71428571428572
    // for 99.71428571428571), which breaks request-log HMACs: JavaScript's parser is exact.
    typeCast: (field, next) => {
      if (field.type === 'DOUBLE' || field.type === 'FLOAT') {
        const text = field.string();
        return text === null ? null : Number(text);
      }
      return next();
    },
  });
  p.pool.on('connection', (conn) => {
    conn.query(`SET SESSION sql_mode = 'ANSI,STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION', time_zone = '+00:00'`);
  });
  const runOn = (c: mysql.Pool | mysql.PoolConnection): Runner => async (text, params) => {
    const [result] = await c.query(text, params as unknown[]);
    if (Array.isArray(result)) return { rows: result as Row[], count: result.length };
    return { rows: [], count: (result as mysql.ResultSetHeader).affectedRows };
  };
  return {
    dialect: MYSQL,
    run: runOn(p),
    async transaction(fn) {
      const conn = await p.getConnection();
      try {
        await conn.beginTransaction();
        try {
          const out = await fn(runOn(conn));
          await conn.commit();
          return out;
        } catch (err) {
          await conn.rollback().catch(() => undefined);
          throw err;
        }
      } finally {
        conn.release();
      }
    },
    async exclusive(fn) {
      const conn = await p.getConnection();
      try {
        const [rows] = await conn.query(`select get_lock(concat('palisade_migrate_', database()), 600) as ok`);
        if (String((rows as Row[])[0]?.ok) !== '1') throw new Error('the migration lock was not granted within 600 s');
        try {
          return await fn(runOn(conn));
        } finally {
          await conn.query(`select release_lock(concat('palisade_migrate_', database()))`).catch(() => undefined);
        }
      } finally {
        conn.release();
      }
    },
    async consistentRead(fn) {
      const conn = await p.getConnection();
      try {
        await conn.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        await conn.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
        try {
          return await fn(runOn(conn));
        } finally {
          await conn.rollback().catch(() => undefined);
        }
      } finally {
        conn.release();
      }
    },
    async ready() {
      const conns = await Promise.all(Array.from({ length: Math.max(Math.min(pool.minConnections, pool.maxConnections), 1) }, () => p.getConnection()));
      try {
        await conns[0]!.query('select 1');
      } finally {
        for (const c of conns) c.release();
      }
    },
    async close(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([p.end(), new Promise((r) => { timer = setTimeout(r, timeoutMs); })]).finally(() => clearTimeout(timer));
    },
  };
}

/** Writers to each SQLite file from this process, one at a time (libsqlDriver). */
const fileWriters = new Map<string, { tail: Promise<unknown> }>();

function serialized<T>(file: string, fn: () => Promise<T>): Promise<T> {
  let lane = fileWriters.get(file);
  if (lane === undefined) fileWriters.set(file, lane = { tail: Promise.resolve() });
  const run = lane.tail.then(fn, fn);
  lane.tail = run.catch(() => undefined);
  return run;
}

/**
 * SQLite through libSQL, on a `file:` database. Several processes may open the file: WAL mode and
 * a busy timeout (the connect timeout) let a writer wait for another's lock instead of failing.
 * Transactions begin IMMEDIATE, so two writers queue at BEGIN rather than deadlock later.
 *
 * libSQL runs statements synchronously, so a writer that waits for the file's lock blocks this
 * whole process, including the transaction that holds the lock: within a process, transactions
 * and every statement but a SELECT take turns (one lane per file, shared by every client on it).
 * SELECTs run beside them on the pool's other connections (WAL readers never wait for writers).
 */
export function libsqlDriver(url: string, pool: PoolOptions): Driver {
  if (!/^file:/i.test(url)) {
    throw new Error(`LIBSQL_URL must be a file: URL (a libSQL server over the network is not supported yet), got "${url.replace(/\/\/[^@/]*@/, '//<hidden>@')}"`);
  }
  const client: LibsqlClient = createClient({ url, concurrency: pool.maxConnections, timeout: pool.connectTimeoutMs, intMode: 'number' } as never);
  const file = url.replace(/^file:(\/\/)?/i, '').replace(/\?.*$/, '');
  let prepared: Promise<void> | null = null;
  // WAL persists in the file (foreign keys are per connection, and libSQL enforces them by default).
  // Switching needs the file to itself: while another process holds it, SQLite answers BUSY at
  // once rather than waiting, so the switch is retried until the connect timeout.
  const prepare = () => (prepared ??= serialized(file, async () => {
    const until = Date.now() + pool.connectTimeoutMs;
    for (;;) {
      try {
        const rs = await client.execute('PRAGMA journal_mode');
        if (String(rs.rows[0]?.[0]).toLowerCase() !== 'wal') await client.execute('PRAGMA journal_mode = WAL');
        return;
      } catch (err) {
        if (!/SQLITE_BUSY/.test(String((err as { code?: unknown }).code ?? (err as Error).message)) || Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }).catch((err: unknown) => { prepared = null; throw err; }));
  type Exec = { execute(stmt: { sql: string; args: never[] }): Promise<{ columns: string[]; rows: ArrayLike<unknown>[]; rowsAffected: number }> };
  const runOn = (c: Exec): Runner => async (text, params) => {
    const rs = await c.execute({ sql: text, args: params as never[] });
    const rows = rs.rows.map((r) => {
      const o: Row = {};
      rs.columns.forEach((name, i) => { o[name] = r[i]; });
      return o;
    });
    return { rows, count: rs.columns.length > 0 ? rows.length : rs.rowsAffected };
  };
  const inTransaction = async <T>(fn: (run: Runner) => Promise<T>): Promise<T> => {
    await prepare();
    return serialized(file, () => transaction(fn));
  };
  const transaction = async <T>(fn: (run: Runner) => Promise<T>): Promise<T> => {
    const tx = await client.transaction('write');
    try {
      const out = await fn(runOn(tx as unknown as Exec));
      await tx.commit();
      return out;
    } catch (err) {
      await tx.rollback().catch(() => undefined);
      throw err;
    } finally {
      tx.close();
    }
  };
  const direct = runOn(client as unknown as Exec);
  return {
    dialect: SQLITE,
    run: async (text, params) => {
      await prepare();
      return /^\s*select\b/i.test(text) ? direct(text, params) : serialized(file, () => direct(text, params));
    },
    transaction: inTransaction,
    exclusive: inTransaction,
    // A read transaction in WAL mode sees the file as of its first read and blocks no writer.
    async consistentRead(fn) {
      await prepare();
      const tx = await client.transaction('read');
      try {
        return await fn(runOn(tx as unknown as Exec));
      } finally {
        tx.close();
      }
    },
    async ready() { await prepare(); await client.execute('select 1'); },
    async close() { client.close(); },
  };
}
