// The database client every process uses, whatever the engine: PostgreSQL (POSTGRES_URL), the
// embedded PGlite served on a Unix socket by the primary (src/primary/embedded-db.ts), MySQL or
// MariaDB (MYSQL_URL, MARIADB_URL) and SQLite through libSQL (LIBSQL_URL). Only src/db/ writes SQL.
//
// Statements are tagged templates: sql`select * from t where id = ${id}`. An interpolated value
// is a parameter, unless it is a Fragment (raw(), fragment(), the dialect's helpers), which is
// spliced in. Engine differences stay in dialect.ts (SQL text) and drivers.ts (connections).
import { Fragment, isUniqueViolation as anyUniqueViolation, type Dialect } from './dialect.js';

export { isForeignKeyViolation } from './dialect.js';
import { libsqlDriver, mysqlDriver, postgresDriver, type Driver, type Result, type Row, type Runner } from './drivers.js';

export { reconnectDelaySeconds } from './drivers.js';
export type { Row } from './drivers.js';

/** Rows of a statement (an array type), with the number of rows it returned or changed. */
export type Rows<T extends readonly object[]> = T & { readonly count: number };

/** `sql` or a transaction: repository functions accept either. */
export interface Queryable {
  <T extends readonly object[] = Row[]>(strings: TemplateStringsArray, ...values: unknown[]): Promise<Rows<T>>;
  readonly dialect: Dialect;
  /** Runs a statement built elsewhere (the dialect's insertRows, deleteBatch). */
  run<T extends readonly object[] = Row[]>(statement: Fragment): Promise<Rows<T>>;
  /** Trusted SQL text without parameters (migrations, tests). One statement. */
  unsafe<T extends readonly object[] = Row[]>(text: string): Promise<Rows<T>>;
}

export interface Sql extends Queryable {
  /** `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  begin<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** `fn` under the database's migration lock (drivers.ts says how each engine holds it). */
  exclusive<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** `fn` reading one consistent, read-only view of the database (snapshots). */
  consistentRead<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

export type DatabaseKind = 'postgres' | 'embedded' | 'mysql' | 'libsql';

export interface DatabaseOptions {
  /** POSTGRES_URL. Exactly one of postgresUrl, socketPath, mysqlUrl and libsqlUrl. */
  readonly postgresUrl?: string;
  /** The embedded database's Unix socket (startEmbeddedDatabase().socketPath). */
  readonly socketPath?: string;
  /** MYSQL_URL or MARIADB_URL (mysql://user:password@host:port/database). */
  readonly mysqlUrl?: string;
  /** LIBSQL_URL (file:path). */
  readonly libsqlUrl?: string;
  /** Pool size per process (<ENGINE>_MAX_CONNECTIONS). Default 10. */
  readonly maxConnections?: number;
  /**
   * POSTGRES_MIN_CONNECTIONS. Default 0. With a value above 0, that many connections are opened by
   * `ready()` and idle connections are not closed.
   */
  readonly minConnections?: number;
  /** POSTGRES_IDLE_TIMEOUT in ms; 0 disables. Default 10,000. */
  readonly idleTimeoutMs?: number;
  /** <ENGINE>_CONNECT_TIMEOUT in ms (libSQL: how long a writer waits for the file's lock). Default 10,000. */
  readonly connectTimeoutMs?: number;
  /** search_path for a real PostgreSQL server (tests use one schema per run). Default: the server's. */
  readonly schema?: string;
}

export const DATABASE_DEFAULTS = Object.freeze({
  maxConnections: 10,
  minConnections: 0,
  idleTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
});

export interface Database {
  readonly kind: DatabaseKind;
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
  const { postgresUrl, socketPath, mysqlUrl, libsqlUrl, schema } = options;
  const given = [postgresUrl, socketPath, mysqlUrl, libsqlUrl].filter((v) => v !== undefined).length;
  if (given !== 1) throw new Error('openDatabase needs exactly one of postgresUrl, socketPath, mysqlUrl and libsqlUrl');
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  // The embedded backend is one session for every client: a search_path would apply to all of them.
  if (schema !== undefined && postgresUrl === undefined) throw new Error('schema is for a PostgreSQL server only');
  const pool = {
    maxConnections: options.maxConnections ?? DATABASE_DEFAULTS.maxConnections,
    minConnections: options.minConnections ?? DATABASE_DEFAULTS.minConnections,
    idleTimeoutMs: options.idleTimeoutMs ?? DATABASE_DEFAULTS.idleTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs ?? DATABASE_DEFAULTS.connectTimeoutMs,
  };
  const [kind, driver]: [DatabaseKind, Driver] =
    postgresUrl !== undefined ? ['postgres', postgresDriver({ url: postgresUrl, ...(schema === undefined ? {} : { schema }) }, pool)]
    : socketPath !== undefined ? ['embedded', postgresDriver({ socketPath }, pool)]
    : mysqlUrl !== undefined ? ['mysql', mysqlDriver(mysqlUrl, pool)]
    : ['libsql', libsqlDriver(libsqlUrl!, pool)];
  return databaseOver(kind, driver);
}

function databaseOver(kind: DatabaseKind, driver: Driver): Database {
  const sql = Object.assign(queryable(driver.dialect, driver.run), {
    begin: <T>(fn: (tx: Queryable) => Promise<T>) => driver.transaction((run) => fn(queryable(driver.dialect, run))),
    exclusive: <T>(fn: (tx: Queryable) => Promise<T>) => driver.exclusive((run) => fn(queryable(driver.dialect, run))),
    consistentRead: <T>(fn: (tx: Queryable) => Promise<T>) => driver.consistentRead((run) => fn(queryable(driver.dialect, run))),
  }) as Sql;
  return {
    kind,
    sql,
    ready: () => driver.ready(),
    async ping(timeoutMs = 2000) {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          driver.run('select 1', []),
          new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), timeoutMs); }),
        ]);
        return true;
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },
    close: (timeoutMs = 5000) => driver.close(timeoutMs),
  };
}

function queryable(dialect: Dialect, run: Runner): Queryable {
  const exec = async <T extends readonly object[]>(statement: Fragment): Promise<Rows<T>> => {
    const { text, params } = compile(dialect, statement);
    return asRows<T>(await run(text, params));
  };
  return Object.assign(
    <T extends readonly object[] = Row[]>(strings: TemplateStringsArray, ...values: unknown[]) => exec<T>(new Fragment([...strings], values)),
    {
      dialect,
      run: exec,
      unsafe: async <T extends readonly object[] = Row[]>(text: string) => asRows<T>(await run(text, [])),
    },
  ) as Queryable;
}

function asRows<T extends readonly object[]>(result: Result): Rows<T> {
  return Object.assign(result.rows as unknown as T, { count: result.count });
}

/** The statement's text, with the dialect's placeholders, and its encoded parameters. */
export function compile(dialect: Dialect, statement: Fragment): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  let text = '';
  const walk = (f: Fragment) => {
    text += f.strings[0]!;
    for (let i = 0; i < f.values.length; i++) {
      const v = f.values[i];
      if (v instanceof Fragment) walk(v);
      else {
        params.push(dialect.encode(v));
        text += dialect.placeholder(params.length);
      }
      text += f.strings[i + 1]!;
    }
  };
  walk(statement);
  return { text, params };
}

/** A unique-key violation (PostgreSQL 23505, MySQL 1062, SQLite CONSTRAINT_UNIQUE). */
export function isUniqueViolation(err: unknown): boolean {
  return anyUniqueViolation(err);
}
