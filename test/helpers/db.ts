// Databases for tests: the embedded PGlite (in memory or on disk, served on a socket in a fresh
// temporary directory), the real PostgreSQL (a fresh schema per database, dropped on close), the
// machine's MariaDB (a fresh database, dropped on close) or SQLite through libSQL (a fresh file).
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import { openDatabase, type Database } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { PalisadeError } from '../../src/errors.js';
import type { RequestContext } from '../../src/http/types.js';
import { createKeySecrets, deriveApiKeySecretKey, type KeySecrets } from '../../src/keys/secrets.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/primary/embedded-db.js';
import { MARIADB_URL, POSTGRES_URL, requireService } from './services.js';

export type DbKind = 'pglite' | 'postgres' | 'mariadb' | 'libsql';

/** Every engine the repository suites run on. */
export const DB_KINDS: readonly DbKind[] = ['pglite', 'postgres', 'mariadb', 'libsql'];

/** Which engines can run here (a server that is unreachable fails under CI=true, else is skipped loudly). */
export async function dbAvailability(): Promise<Record<DbKind, boolean>> {
  return { pglite: true, postgres: await requireService('postgres'), mariadb: await requireService('mariadb'), libsql: true };
}

// The template depends on the PGlite build: keyed by its version (package.json next to dist/).
const PGLITE_VERSION = (JSON.parse(readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8',
)) as { version: string }).version;

/**
 * A fresh data directory holding an initialised, empty PGlite at `db/palisade`. initdb runs once
 * per machine (a template in the temp directory, created atomically); each call copies it, which is
 * several times faster than a new in-memory database (initdb every time).
 */
export async function freshPgliteDataDir(): Promise<string> {
  const template = join(tmpdir(), `pal-pglite-template-${PGLITE_VERSION}`);
  if (!existsSync(join(template, 'READY'))) {
    const building = mkdtempSync(join(tmpdir(), 'pal-pglite-build-'));
    const db = await PGlite.create({ dataDir: join(building, 'pgdata') });
    await db.close();
    writeFileSync(join(building, 'READY'), '');
    try {
      renameSync(building, template);
    } catch {
      // Another process made it first.
      rmSync(building, { recursive: true, force: true });
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'pal-db-'));
  mkdirSync(join(dir, 'db'));
  cpSync(join(template, 'pgdata'), join(dir, 'db', 'palisade'), { recursive: true });
  return dir;
}

export interface TestDatabase {
  readonly kind: DbKind;
  readonly db: Database;
  /** Another pool on the same database (a second "process"). */
  openAnother(): Database;
  /** Connection facts for a child process: openDatabase() options. */
  readonly target: { socketPath?: string; postgresUrl?: string; schema?: string; mysqlUrl?: string; libsqlUrl?: string };
  /** The tables of this database. */
  tables(): Promise<string[]>;
  close(): Promise<void>;
}

export interface OpenTestDatabaseOptions {
  /** Apply migrations. Default true. */
  readonly migrate?: boolean;
  /** PGlite in this data directory (kept on close) instead of a fresh one (removed on close). */
  readonly dataDir?: string;
}

/** Null when `kind` is postgres and the server is not reachable (skipped loudly, or failing under CI). */
export async function openTestDatabase(kind: DbKind, options: OpenTestDatabaseOptions = {}): Promise<TestDatabase | null> {
  if (kind === 'pglite') {
    const dir = options.dataDir ?? await freshPgliteDataDir();
    const embedded: EmbeddedDatabase = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
    const open = () => openDatabase({ socketPath: embedded.socketPath, maxConnections: 4 });
    const db = open();
    const extra: Database[] = [];
    if (options.migrate !== false) await migrate(db.sql);
    return {
      kind, db, target: { socketPath: embedded.socketPath },
      tables: () => pgTables(db),
      openAnother() { const d = open(); extra.push(d); return d; },
      async close() {
        for (const d of [db, ...extra]) await d.close(1);
        await embedded.close();
        if (options.dataDir === undefined) rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (kind === 'mariadb') return openMariadb(options);
  if (kind === 'libsql') return openLibsql(options);
  if (!(await requireService('postgres'))) return null;
  const schema = `pal_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create schema ${schema}`);
  const open = () => openDatabase({ postgresUrl: POSTGRES_URL, schema, maxConnections: 4 });
  const db = open();
  const extra: Database[] = [];
  if (options.migrate !== false) await migrate(db.sql);
  return {
    kind, db, target: { postgresUrl: POSTGRES_URL, schema },
    tables: () => pgTables(db),
    openAnother() { const d = open(); extra.push(d); return d; },
    async close() {
      for (const d of [db, ...extra]) await d.close(1);
      await admin.unsafe(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

async function pgTables(db: Database): Promise<string[]> {
  return (await db.sql<{ tablename: string }[]>`select tablename from pg_tables where schemaname = current_schema()`).map((r) => r.tablename);
}

async function openMariadb(options: OpenTestDatabaseOptions): Promise<TestDatabase | null> {
  if (!(await requireService('mariadb'))) return null;
  const name = `pal_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = await mysql.createConnection({ uri: MARIADB_URL });
  await admin.query(`create database ${name} character set utf8mb4 collate utf8mb4_bin`);
  const url = new URL(MARIADB_URL);
  url.pathname = `/${name}`;
  const open = () => openDatabase({ mysqlUrl: url.toString(), maxConnections: 4 });
  const db = open();
  const extra: Database[] = [];
  if (options.migrate !== false) await migrate(db.sql);
  return {
    kind: 'mariadb', db, target: { mysqlUrl: url.toString() },
    async tables() {
      return (await db.sql<{ t: string }[]>`select table_name as t from information_schema.tables where table_schema = database()`).map((r) => r.t);
    },
    openAnother() { const d = open(); extra.push(d); return d; },
    async close() {
      for (const d of [db, ...extra]) await d.close(1000);
      await admin.query(`drop database ${name}`);
      await admin.end();
    },
  };
}

async function openLibsql(options: OpenTestDatabaseOptions): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'pal-libsql-'));
  const url = `file:${join(dir, 'palisade.db')}`;
  const open = () => openDatabase({ libsqlUrl: url, maxConnections: 4 });
  const db = open();
  const extra: Database[] = [];
  if (options.migrate !== false) await migrate(db.sql);
  return {
    kind: 'libsql', db, target: { libsqlUrl: url },
    async tables() {
      return (await db.sql<{ name: string }[]>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`).map((r) => r.name);
    },
    openAnother() { const d = open(); extra.push(d); return d; },
    async close() {
      for (const d of [db, ...extra]) await d.close(1000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Key secrets with fixed test values. */
export function testKeySecrets(): KeySecrets {
  return createKeySecrets(deriveApiKeySecretKey('test-palisade-hmac-secret-0123456789'), 'test-hashing-salt-0123456789');
}

export interface FakeRequest {
  method?: string;
  path?: string;
  query?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | null;
  ip?: string;
}

/** A RequestContext as the HTTP adapter would build it (header names lower-case). */
export function fakeRequest(r: FakeRequest = {}): RequestContext {
  const body = r.body === undefined || r.body === null ? null : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = v;
  const rawQuery = r.query ?? '';
  return {
    method: r.method ?? 'GET',
    path: r.path ?? '/',
    rawQuery,
    query: new URLSearchParams(rawQuery),
    headers,
    ip: r.ip ?? '203.0.113.7',
    body,
    json() {
      if (body === null || body.length === 0) throw new PalisadeError('INVALID_JSON');
      try {
        return JSON.parse(body.toString('utf8')) as unknown;
      } catch {
        throw new PalisadeError('INVALID_JSON');
      }
    },
    startedAt: 0,
  };
}

/**
 * Database variables for a service under test on `kind`, each time a database of its own: nothing
 * for the embedded database, a fresh MariaDB database, a fresh libSQL file, a fresh PostgreSQL
 * database. null when the server is not reachable (outside CI: skipped loudly). drop() removes it.
 */
export async function serviceDatabase(kind: DbKind): Promise<{ env: Record<string, string>; drop(): Promise<void> } | null> {
  const name = `pal_svc_${randomBytes(5).toString('hex')}`;
  switch (kind) {
    case 'pglite':
      return { env: {}, drop: async () => undefined };
    case 'libsql': {
      const dir = mkdtempSync(join(tmpdir(), 'pal-libsql-svc-'));
      return { env: { LIBSQL_URL: `file:${join(dir, 'palisade.db')}` }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
    }
    case 'mariadb': {
      if (!(await requireService('mariadb'))) return null;
      const admin = await mysql.createConnection({ uri: MARIADB_URL });
      await admin.query(`create database ${name} character set utf8mb4 collate utf8mb4_bin`);
      await admin.end();
      const url = new URL(MARIADB_URL);
      url.pathname = `/${name}`;
      return {
        env: { MARIADB_URL: url.toString() },
        async drop() {
          const c = await mysql.createConnection({ uri: MARIADB_URL });
          await c.query(`drop database if exists ${name}`);
          await c.end();
        },
      };
    }
    case 'postgres': {
      if (!(await requireService('postgres'))) return null;
      const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => undefined });
      await admin.unsafe(`create database ${name}`);
      await admin.end();
      const url = new URL(POSTGRES_URL);
      url.pathname = `/${name}`;
      return {
        env: { POSTGRES_URL: url.toString() },
        async drop() {
          const c = postgres(POSTGRES_URL, { max: 1, onnotice: () => undefined });
          await c.unsafe(`drop database if exists ${name} with (force)`);
          await c.end();
        },
      };
    }
  }
}
