// The `postgres` client for either a real PostgreSQL server (POSTGRES_URL) or the embedded PGlite
// served on a Unix socket by the primary (src/primary/embedded-db.ts). Only src/db/ writes SQL.
import postgres from 'postgres';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;
/** `sql` or a transaction: repository functions accept either. */
export type Queryable = Sql | TransactionSql;

export interface DatabaseOptions {
  /** POSTGRES_URL. Either this or `socketPath`. */
  readonly postgresUrl?: string;
  /** The embedded database's Unix socket (startEmbeddedDatabase().socketPath). */
  readonly socketPath?: string;
  /** Pool size per process (POSTGRES_MAX_CONNECTIONS). Default 10. */
  readonly maxConnections?: number;
  /**
   * POSTGRES_MIN_CONNECTIONS. Default 0. `postgres` has no minimum pool: with a value above 0,
   * that many connections are opened by `ready()` and idle connections are not closed.
   */
  readonly minConnections?: number;
  /** POSTGRES_IDLE_TIMEOUT in ms; 0 disables. Default 10,000. */
  readonly idleTimeoutMs?: number;
  /** POSTGRES_CONNECT_TIMEOUT in ms. Default 10,000. */
  readonly connectTimeoutMs?: number;
  /** search_path for a real PostgreSQL server (tests use one schema per run); not with socketPath. Default: the server's. */
  readonly schema?: string;
}

export const DATABASE_DEFAULTS = Object.freeze({
  maxConnections: 10,
  minConnections: 0,
  idleTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
});

export interface Database {
  readonly kind: 'postgres' | 'embedded';
  readonly sql: Sql;
  /** Opens `minConnections` connections; resolves when the server answered. */
  ready(): Promise<void>;
  /** One round trip (`select 1`), false on any failure: for /.health and /.ready. */
  ping(timeoutMs?: number): Promise<boolean>;
  /** Waits up to `timeoutMs` for queries in flight, then closes every connection. */
  close(timeoutMs?: number): Promise<void>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function openDatabase(options: DatabaseOptions): Database {
  const { postgresUrl, socketPath, schema } = options;
  if ((postgresUrl === undefined) === (socketPath === undefined)) {
    throw new Error('openDatabase needs exactly one of postgresUrl and socketPath');
  }
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  // The embedded backend is one session for every client: a search_path would apply to all of them.
  if (schema !== undefined && socketPath !== undefined) throw new Error('schema is for a PostgreSQL server only');
  const max = options.maxConnections ?? DATABASE_DEFAULTS.maxConnections;
  const min = Math.min(options.minConnections ?? DATABASE_DEFAULTS.minConnections, max);
  const idleMs = options.idleTimeoutMs ?? DATABASE_DEFAULTS.idleTimeoutMs;
  const common = {
    max,
    // postgres takes seconds; 0/undefined disables.
    idle_timeout: min > 0 || idleMs === 0 ? undefined : Math.max(idleMs / 1000, 0.001),
    connect_timeout: (options.connectTimeoutMs ?? DATABASE_DEFAULTS.connectTimeoutMs) / 1000,
    // postgres waits (0.5–1) × min(3^n / 100, 20) s before its n-th reconnection, so after a 10 s
    // outage a pool could sit out 10–20 s more with the database back (writes and /.health stuck;
    // test/reliability/postgres-down.test.ts). A failed attempt is cheap: retry within a second.
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
    connection: { application_name: 'palisade', ...(schema === undefined ? {} : { search_path: schema }) },
  };
  const sql = socketPath !== undefined
    // The embedded backend is one session shared by every connection (src/db/pglite-server.ts):
    // no named prepared statements, which would pile up there across reconnects.
    ? postgres({ ...common, path: socketPath, user: 'postgres', database: 'postgres', prepare: false })
    : postgres(postgresUrl!, common);
  return {
    kind: socketPath !== undefined ? 'embedded' : 'postgres',
    sql,
    async ready() {
      const n = Math.max(min, 1);
      const reserved = await Promise.all(Array.from({ length: n }, () => sql.reserve()));
      await reserved[0]!`select 1`;
      for (const r of reserved) r.release();
    },
    async ping(timeoutMs = 2000) {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          sql`select 1`,
          new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), timeoutMs); }),
        ]);
        return true;
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },
    close(timeoutMs = 5000) {
      return sql.end({ timeout: timeoutMs / 1000 });
    },
  };
}

/** Seconds before the `attempt`-th reconnection in a row: 50 ms doubling up to 1 s, with jitter. */
export function reconnectDelaySeconds(attempt: number): number {
  return Math.min(0.05 * 2 ** attempt, 1) * (0.5 + Math.random() / 2);
}

/** A PostgreSQL unique violation (SQLSTATE 23505), optionally of constraint `constraint`. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint_name?: unknown } | null;
  return e !== null && typeof e === 'object' && e.code === '23505' &&
    (constraint === undefined || e.constraint_name === constraint);
}
