// Where state and data live: the embedded database and the shared-memory state file, Redis,
// the SQL database (PostgreSQL, MySQL, MariaDB, libSQL; src/db/engines.ts), ClickHouse, uploads and snapshots.
import { engineProblems } from '../db/engines.js';
import { snapshotProblems } from '../db/snapshot-files.js';
import { redisUrlProblems } from '../store/redis-url.js';
import { bool, type Check, cron, ms, oneOf, optional, type Parser, str, uint, v } from './variable.js';

const hostPort: Parser<string | null> = (s) => (s.trim() === '' ? null : s.trim());
/** `auto` (null: by REDIS_URL's form) or a count. */
const replicas: Parser<number | null> = (s) => (s.trim() === 'auto' ? null : uint(0, 16)(s));

export const STORE_VARIABLES = {
  DEFAULT_ACCOUNT_NAME: v('Data', 'Default Account', str, 'Account created on first setup.'),
  EMBEDDED_DB_DATABASE_LOCATION: v('Data', 'db/palisade', str, 'Embedded PGlite database directory (relative to DATA_DIR).'),
  EMBEDDED_DB_DATABASE_ADDR: v('Data', '', hostPort, 'Optional loopback TCP address (host:port) for the embedded database besides its Unix socket; non-loopback addresses are refused (it has no authentication). The spec default :::4080 is not used for that reason.'),
  EMBEDDED_DB_REDIS_LOCATION: v('Data', 'db/state.shm', str, 'Shared-memory state file (relative to DATA_DIR).'),
  EMBEDDED_DB_REDIS_ADDR: v('Data', '', hostPort, 'Not used: the shared-memory state store has no network listener; use REDIS_URL for several nodes.'),
  REDIS_URL: v('Data', '', optional, 'External Redis for the state store (several nodes): redis://[user:password@]host:port (rediss:// for TLS) for one server; redis+cluster://[user:password@]host:port,host:port for a Redis Cluster (any reachable subset of its nodes); redis+sentinel://[user:password@]host:port,host:port/master-name[/db] for a master watched by Redis Sentinel (the sentinels are asked without the password). rediss+cluster:// and rediss+sentinel:// use TLS. See docs/scaling.md.', true),
  REDIS_CLAIM_REPLICAS: v('Data', 'auto', replicas, 'Replicas that must acknowledge a used challenge (Redis WAIT) before verification answers, at most those its master has (ROLE, read with every claim): a failover promotes a replica, and one that acknowledged knows every used challenge, so no payload verifies twice. Claims the replicas do not acknowledge within REDIS_COMMAND_TIMEOUT answer 503 and stay spent. A master with fewer replicas (none, after a failover took its only one) waits for those it has: a replica that attaches later receives the claims in its first synchronisation. auto: 1 for redis+cluster:// and redis+sentinel://, 0 for one server (set 1 for a managed Redis whose failover promotes a replica behind one address).'),
  REDIS_COMMAND_TIMEOUT: v('Data', '5000', ms, 'Redis command timeout (ms); a request never waits longer.'),
  REDIS_CONNECT_TIMEOUT: v('Data', '10000', ms, 'Redis connect timeout (ms).'),
  REDIS_MAX_RETRIES: v('Data', '2', uint(0, 100), 'Redis retries per request.'),
  REDIS_ALLOW_EVICTION: v('Data', '0', bool, 'Start even when Redis maxmemory-policy is not noeviction (with a warning). Any other policy can evict used-challenge keys under memory pressure and so accept a replay: leave 0 unless Redis can never reach maxmemory.'),
  POSTGRES_URL: v('Data', '', optional, 'External PostgreSQL instead of the embedded database (set one database URL at most).', true),
  POSTGRES_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'PostgreSQL pool size per process (also the embedded database).'),
  POSTGRES_MIN_CONNECTIONS: v('Data', '0', uint(0, 1000), 'Minimum PostgreSQL pool size: that many connections are opened at start and never closed for idleness.'),
  POSTGRES_IDLE_TIMEOUT: v('Data', '10000', ms, 'Idle connection timeout (ms); 0 disables.'),
  POSTGRES_CONNECT_TIMEOUT: v('Data', '10000', ms, 'PostgreSQL connect timeout (ms).'),
  MYSQL_URL: v('Data', '', optional, 'External MySQL (mysql://user:password@host:port/database) instead of the embedded database.', true),
  MARIADB_URL: v('Data', '', optional, 'External MariaDB (mysql://user:password@host:port/database) instead of the embedded database.', true),
  MSSQL_URL: v('Data', '', optional, 'Not supported: start-up fails when set, listing the supported engines.', true),
  ORACLE_URL: v('Data', '', optional, 'Not supported: start-up fails when set, listing the supported engines.', true),
  LIBSQL_URL: v('Data', '', optional, 'SQLite through libSQL instead of the embedded database: a file: URL (file:/path/palisade.db); network URLs are refused.', true),
  TURBOLITE_URL: v('Data', '', optional, 'Not supported: start-up fails when set, listing the supported engines.', true),
  MYSQL_CONNECT_TIMEOUT: v('Data', '10000', ms, 'MySQL connect timeout (ms).'),
  MARIADB_CONNECT_TIMEOUT: v('Data', '10000', ms, 'MariaDB connect timeout (ms).'),
  MSSQL_CONNECT_TIMEOUT: v('Data', '10000', ms, 'For MSSQL_URL (not supported).'),
  MYSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'MySQL pool size per process.'),
  MARIADB_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'MariaDB pool size per process.'),
  MSSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For MSSQL_URL (not supported).'),
  LIBSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'libSQL connections per process (reads run beside the one writer at a time).'),
  CLICKHOUSE_URL: v('Data', '', optional, 'External analytics store (Enterprise; not supported yet).', true),
  CLICKHOUSE_BATCH_INTERVAL: v('Data', '1000', ms, 'ClickHouse flush interval (ms).'),
  CLICKHOUSE_BATCH_MAX: v('Data', '100', uint(1), 'ClickHouse flush size.'),
  STORAGE_PROVIDER: v('Data', 'local', oneOf('local', 's3', 'azure'), 'Upload storage: local (STORAGE_LOCAL_DIR), s3 or azure.'),
  STORAGE_LOCAL_DIR: v('Data', 'uploads', str, 'Local upload directory (relative to DATA_DIR).'),
  SNAPSHOTS_STORAGE_PROVIDER: v('Data', 'local', oneOf('local', 's3', 'azure'), 'Snapshot storage: local; s3 and azure are refused at start-up (not implemented yet).'),
  SNAPSHOTS_STORAGE_LOCAL_DIR: v('Data', 'backups', str, 'Local snapshot directory (relative to DATA_DIR).'),
  SNAPSHOTS_MAIN_SCHEDULE: v('Data', '', cron, 'Database snapshot schedule (cron); empty disables. One node at a time writes it (a lease); restore with npm run cli -- restore FILE.'),
  SNAPSHOTS_REDIS_SCHEDULE: v('Data', '', cron, 'Redis state snapshot schedule (cron; needs REDIS_URL); empty disables. Written next to database snapshots as .redis.jsonl.gz, by one node at a time; restore with npm run cli -- restore FILE.'),
  SNAPSHOTS_DB_PREFIX: v('Data', 'palisade-backups/db:${iso_date()}', str, 'Path of a database snapshot below SNAPSHOTS_STORAGE_LOCAL_DIR, without the .jsonl.gz suffix; ${iso_date()} is the time of the snapshot (2026-11-27T16:30:00Z).'),
} as const;

/** At most one database URL, of a supported engine (src/db/engines.ts). */
export const checkStores: Check = (out) => [...engineProblems(out), ...snapshotProblems(out), ...redisUrlProblems(out.REDIS_URL)];
