// Which database engines run today (DESIGN.md section 3): PostgreSQL through POSTGRES_URL, or the
// embedded PGlite. The spec's other engines fail start-up, naming the variable.
import { isIP } from 'node:net';

export const UNSUPPORTED_ENGINE_VARIABLES = [
  'MYSQL_URL', 'MARIADB_URL', 'MSSQL_URL', 'ORACLE_URL', 'LIBSQL_URL', 'TURBOLITE_URL',
] as const;

/** Throws `not supported yet: <VAR>` for the first other engine URL that is set (non-empty). */
export function assertSupportedEngine(values: Readonly<Record<string, string | null | undefined>>): void {
  for (const name of UNSUPPORTED_ENGINE_VARIABLES) {
    const value = values[name];
    if (typeof value === 'string' && value.trim() !== '') throw new Error(`not supported yet: ${name}`);
  }
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
