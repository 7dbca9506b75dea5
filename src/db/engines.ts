// Which database engine a configuration names (DESIGN.md section 3): PostgreSQL (POSTGRES_URL),
// MySQL (MYSQL_URL), MariaDB (MARIADB_URL), SQLite through libSQL (LIBSQL_URL, a file: URL), or the
// embedded PGlite when none is set. MSSQL_URL, ORACLE_URL and TURBOLITE_URL have no server here to
// test a driver against: start-up refuses them, listing the supported engines.
import { isIP } from 'node:net';
import type { DatabaseOptions } from './client.js';

export const SUPPORTED_ENGINE_VARIABLES = ['POSTGRES_URL', 'MYSQL_URL', 'MARIADB_URL', 'LIBSQL_URL'] as const;
export const UNSUPPORTED_ENGINE_VARIABLES = ['MSSQL_URL', 'ORACLE_URL', 'TURBOLITE_URL'] as const;

export const SUPPORTED_ENGINES_TEXT =
  'supported: POSTGRES_URL (PostgreSQL), MYSQL_URL (MySQL), MARIADB_URL (MariaDB), LIBSQL_URL (SQLite through libSQL, a file: URL), ' +
  'or none of them for the embedded database';

/** The configuration (or any record of its variables). */
type Values = object;

const get = (values: Values, name: string): unknown => (values as Record<string, unknown>)[name];

const isSet = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

/** What is wrong with the engine variables (empty when they name at most one supported engine). */
export function engineProblems(values: Values): string[] {
  const problems: string[] = [];
  for (const name of UNSUPPORTED_ENGINE_VARIABLES) {
    if (isSet(get(values, name))) problems.push(`${name} is not supported (no driver in this build); ${SUPPORTED_ENGINES_TEXT}`);
  }
  const set = SUPPORTED_ENGINE_VARIABLES.filter((n) => isSet(get(values, n)));
  if (set.length > 1) problems.push(`${set.join(' and ')} are all set: set one database (${SUPPORTED_ENGINES_TEXT})`);
  const libsql = get(values, 'LIBSQL_URL');
  if (isSet(libsql) && !/^file:./i.test(libsql.trim())) {
    problems.push('LIBSQL_URL must be a file: URL such as file:/var/lib/palisade/palisade.db (a libSQL server over the network is not supported yet)');
  }
  return problems;
}

/** Throws the first engine problem (engineProblems). */
export function assertSupportedEngine(values: Values): void {
  const [problem] = engineProblems(values);
  if (problem !== undefined) throw new Error(problem);
}

export type EngineVariable = (typeof SUPPORTED_ENGINE_VARIABLES)[number];

/** The external database the configuration names, or null for the embedded one. */
export function externalEngine(values: Values): EngineVariable | null {
  return SUPPORTED_ENGINE_VARIABLES.find((n) => isSet(get(values, n))) ?? null;
}

/**
 * openDatabase() options for an external engine, with its pool settings: POSTGRES_MAX_CONNECTIONS,
 * _MIN_CONNECTIONS, _IDLE_TIMEOUT and _CONNECT_TIMEOUT; MYSQL_/MARIADB_MAX_CONNECTIONS and
 * _CONNECT_TIMEOUT; LIBSQL_MAX_CONNECTIONS. Null for the embedded database (embeddedOptions).
 */
export function externalDatabaseOptions(values: Values): DatabaseOptions | null {
  // Each variable by its literal name, so that the configuration reference's test sees it read.
  const v = values as Record<string, unknown>;
  const url = (x: unknown) => String(x).trim();
  switch (externalEngine(values)) {
    case null: return null;
    case 'POSTGRES_URL': return { postgresUrl: url(v['POSTGRES_URL']), ...postgresPool(values) };
    case 'MYSQL_URL':
      return { mysqlUrl: url(v['MYSQL_URL']), maxConnections: v['MYSQL_MAX_CONNECTIONS'] as number, connectTimeoutMs: v['MYSQL_CONNECT_TIMEOUT'] as number };
    case 'MARIADB_URL':
      return {
        mysqlUrl: url(v['MARIADB_URL']), maxConnections: v['MARIADB_MAX_CONNECTIONS'] as number, connectTimeoutMs: v['MARIADB_CONNECT_TIMEOUT'] as number,
      };
    case 'LIBSQL_URL': return { libsqlUrl: url(v['LIBSQL_URL']), maxConnections: v['LIBSQL_MAX_CONNECTIONS'] as number };
  }
}

/** The POSTGRES_* pool settings (PostgreSQL and the embedded database). */
export function postgresPool(values: Values) {
  const v = values as Record<string, unknown>;
  return {
    maxConnections: v['POSTGRES_MAX_CONNECTIONS'] as number,
    minConnections: v['POSTGRES_MIN_CONNECTIONS'] as number,
    idleTimeoutMs: v['POSTGRES_IDLE_TIMEOUT'] as number,
    connectTimeoutMs: v['POSTGRES_CONNECT_TIMEOUT'] as number,
  };
}

export interface LoopbackAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * EMBEDDED_DB_DATABASE_ADDR: `host:port`, `[v6]:port`. Only loopback hosts (127.0.0.0/8, ::1,
 * localhost) are accepted: the embedded database has no authentication, so anything reachable from
 * elsewhere would hand the data to anyone. Port 0 picks a free port.
 */
export function parseEmbeddedDbAddr(addr: string): LoopbackAddress {
  const text = addr.trim();
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:]*):(\d{1,5})$/.exec(text) ?? /^(.*):(\d{1,5})$/.exec(text);
  if (!m) throw new Error(`EMBEDDED_DB_DATABASE_ADDR "${addr}" is not host:port`);
  const host = m[1]!.toLowerCase();
  const port = Number(m[2]);
  if (port > 65535) throw new Error(`EMBEDDED_DB_DATABASE_ADDR "${addr}": port out of range`);
  if (!isLoopback(host)) {
    throw new Error(
      `EMBEDDED_DB_DATABASE_ADDR "${addr}" is not a loopback address: the embedded database has no authentication, ` +
      'so it listens only on 127.0.0.0/8, ::1 or localhost (use POSTGRES_URL to share a database between hosts)',
    );
  }
  return { host, port };
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
  return false;
}
