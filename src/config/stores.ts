// Where state and data live: the embedded database and the shared-memory state file, Redis,
// PostgreSQL (and the engines not supported yet), ClickHouse, uploads and snapshots.
import { bool, type Check, cron, ms, oneOf, optional, type Parser, str, uint, v } from './variable.js';

const hostPort: Parser<string | null> = (s) => (s.trim() === '' ? null : s.trim());

export const STORE_VARIABLES = {
  DEFAULT_ACCOUNT_NAME: v('Data', 'Default Account', str, 'Account created on first setup.'),
  EMBEDDED_DB_DATABASE_LOCATION: v('Data', 'db/palisade', str, 'Embedded PGlite database directory (relative to DATA_DIR).'),
  EMBEDDED_DB_DATABASE_ADDR: v('Data', '', hostPort, 'Optional loopback TCP address (host:port) for the embedded database besides its Unix socket; non-loopback addresses are refused (it has no authentication). The spec default :::4080 is not used for that reason.'),
  EMBEDDED_DB_REDIS_LOCATION: v('Data', 'db/state.shm', str, 'Shared-memory state file (relative to DATA_DIR).'),
  EMBEDDED_DB_REDIS_ADDR: v('Data', '', hostPort, 'Not used: the shared-memory state store has no network listener; use REDIS_URL for several nodes.'),
  REDIS_URL: v('Data', '', optional, 'External Redis for the state store (several nodes).', true),
  REDIS_COMMAND_TIMEOUT: v('Data', '5000', ms, 'Redis command timeout (ms); a request never waits longer.'),
  REDIS_CONNECT_TIMEOUT: v('Data', '10000', ms, 'Redis connect timeout (ms).'),
  REDIS_MAX_RETRIES: v('Data', '2', uint(0, 100), 'Redis retries per request.'),
  REDIS_ALLOW_EVICTION: v('Data', '0', bool, 'Start even when Redis maxmemory-policy is not noeviction (with a warning). Any other policy can evict used-challenge keys under memory pressure and so accept a replay: leave 0 unless Redis can never reach maxmemory.'),
  POSTGRES_URL: v('Data', '', optional, 'External PostgreSQL instead of the embedded database.', true),
  POSTGRES_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'PostgreSQL pool size per process.'),
  POSTGRES_MIN_CONNECTIONS: v('Data', '0', uint(0, 1000), 'Minimum PostgreSQL pool size.'),
  POSTGRES_IDLE_TIMEOUT: v('Data', '10000', ms, 'Idle connection timeout (ms); 0 disables.'),
  POSTGRES_CONNECT_TIMEOUT: v('Data', '10000', ms, 'PostgreSQL connect timeout (ms).'),
  MYSQL_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  MARIADB_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  MSSQL_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  ORACLE_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  LIBSQL_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  TURBOLITE_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  MYSQL_CONNECT_TIMEOUT: v('Data', '10000', ms, 'For MYSQL_URL (not supported yet).'),
  MARIADB_CONNECT_TIMEOUT: v('Data', '10000', ms, 'For MARIADB_URL (not supported yet).'),
  MSSQL_CONNECT_TIMEOUT: v('Data', '10000', ms, 'For MSSQL_URL (not supported yet).'),
  MYSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For MYSQL_URL (not supported yet).'),
  MARIADB_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For MARIADB_URL (not supported yet).'),
  MSSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For MSSQL_URL (not supported yet).'),
  LIBSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For LIBSQL_URL (not supported yet).'),
  CLICKHOUSE_URL: v('Data', '', optional, 'External analytics store (Enterprise; not supported yet).', true),
  CLICKHOUSE_BATCH_INTERVAL: v('Data', '1000', ms, 'ClickHouse flush interval (ms).'),
  CLICKHOUSE_BATCH_MAX: v('Data', '100', uint(1), 'ClickHouse flush size.'),
  STORAGE_PROVIDER: v('Data', 'local', oneOf('local', 's3', 'azure'), 'Upload storage: local (STORAGE_LOCAL_DIR), s3 or azure.'),
  STORAGE_LOCAL_DIR: v('Data', 'uploads', str, 'Local upload directory (relative to DATA_DIR).'),
  SNAPSHOTS_STORAGE_PROVIDER: v('Data', 'local', oneOf('local', 's3', 'azure'), 'Snapshot storage: local (SNAPSHOTS_STORAGE_LOCAL_DIR), s3 or azure.'),
  SNAPSHOTS_STORAGE_LOCAL_DIR: v('Data', 'backups', str, 'Local snapshot directory (relative to DATA_DIR).'),
  SNAPSHOTS_MAIN_SCHEDULE: v('Data', '', cron, 'Database snapshot schedule (cron); empty disables.'),
  SNAPSHOTS_REDIS_SCHEDULE: v('Data', '', cron, 'State snapshot schedule (cron); empty disables.'),
  SNAPSHOTS_DB_PREFIX: v('Data', 'palisade-backups/db:${iso_date()}', str, 'Path prefix of stored snapshots.'),
} as const;

/** Only PostgreSQL and the embedded database are implemented. */
export const checkStores: Check = (out) => {
  const problems: string[] = [];
  for (const engine of ['MYSQL_URL', 'MARIADB_URL', 'MSSQL_URL', 'ORACLE_URL', 'LIBSQL_URL', 'TURBOLITE_URL'] as const) {
    if (out[engine]) problems.push(`not supported yet: ${engine} (use POSTGRES_URL or the embedded database)`);
  }
  return problems;
};
