// Snapshots of the main database in one engine-neutral form: every row of every durable table, read
// in one consistent view, as gzip'd JSON lines; a snapshot restores on any engine (a PostgreSQL
// snapshot into MariaDB, PGlite into libSQL, …). The catalogue below lists the tables in the order
// rows must go back (foreign keys); a test checks it covers every table and column the migrations
// create, so a migration that adds one must add it here.
//
// File: line 1 {"palisade":"snapshot","format":1,"kind":"main","version":<migration>,"engine":…,"createdAt":…}
// then per table {"table":"accounts","columns":[…]} followed by one JSON array per row.
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import type { Queryable, Sql } from './client.js';
import { fragment, join, json, list, raw, toBool, toDateOrNull, toJson, toStrings, type Fragment } from './dialect.js';
import { MIGRATIONS } from './migrations/index.js';

/** How a column's value is written to and read from a snapshot. */
type Kind = 'text' | 'int' | 'float' | 'bool' | 'time' | 'list' | 'json';

interface TableSpec {
  readonly name: string;
  /** Primary key columns (keyset paging). */
  readonly key: readonly string[];
  readonly columns: Readonly<Record<string, Kind>>;
  /** An auto-increment id: not written back (the engine numbers restored rows, in the same order). */
  readonly serial?: string;
}

const T = (name: string, key: readonly string[], columns: Record<string, Kind>, serial?: string): TableSpec =>
  Object.freeze({ name, key, columns: Object.freeze(columns), ...(serial ? { serial } : {}) });

/** Every durable table, parents first. Not here: schema_migrations (the header's version), leases (transient). */
export const SNAPSHOT_TABLES: readonly TableSpec[] = Object.freeze([
  T('plans', ['name'], { name: 'text', request_limit: 'int', created_at: 'time', updated_at: 'time' }),
  T('accounts', ['id'], { id: 'text', name: 'text', is_default: 'bool', generated: 'bool', active: 'bool', created_at: 'time' }),
  T('users', ['id'], {
    id: 'text', username: 'text', password_hash: 'text', is_root: 'bool', account_id: 'text', role: 'text', must_change_password: 'bool',
    session_version: 'int', totp_secret: 'text', totp_enabled: 'bool', totp_last_step: 'int', disabled: 'bool', created_at: 'time',
    updated_at: 'time', last_login_at: 'time',
  }),
  T('api_keys', ['id'], {
    id: 'text', account_id: 'text', name: 'text', hostnames: 'list', plan: 'text', challenge_policy: 'json', rate_limit: 'text',
    enabled: 'bool', free_hostname: 'text', secret_nonce: 'text', secret_hash: 'text', created_at: 'time', updated_at: 'time',
    revoked_at: 'time', last_used_at: 'time',
  }),
  T('usage_monthly', ['api_key_id', 'month'], {
    api_key_id: 'text', month: 'text', account_id: 'text', requests: 'int', good: 'int', neutral: 'int', bad: 'int',
  }),
  T('usage_referrers', ['api_key_id', 'month', 'origin'], { api_key_id: 'text', month: 'text', origin: 'text', requests: 'int' }),
  T('usage_flushes', ['id'], { id: 'text', flushed_at: 'time' }),
  T('request_logs', ['id'], {
    id: 'int', time: 'time', api_key_id: 'text', account_id: 'text', ip: 'text', method: 'text', path: 'text', status: 'int',
    duration_ms: 'float', country: 'text', threats: 'text', node: 'text', classification: 'text', hmac: 'text',
  }, 'id'),
  T('key_audit', ['id'], { id: 'int', time: 'time', api_key_id: 'text', action: 'text', actor: 'text', detail: 'json' }, 'id'),
  T('audit_log', ['id'], {
    id: 'int', time: 'time', actor: 'text', ip: 'text', action: 'text', target: 'text', account_id: 'text', detail: 'json',
  }, 'id'),
  T('training_data', ['id'], {
    id: 'text', account_id: 'text', grp: 'text', text: 'text', threshold: 'float', weight: 'float', source: 'text', created_at: 'time',
  }),
  T('spam_submissions', ['id'], {
    id: 'text', time: 'time', account_id: 'text', api_key_id: 'text', source: 'text', score: 'float', reasons: 'text', text: 'text',
    text_hash: 'text', fields: 'text', email_domain: 'text', ip: 'text', country: 'text',
  }),
]);

/** Tables the snapshot leaves out on purpose. */
export const SNAPSHOT_EXCLUDED = Object.freeze(['schema_migrations', 'leases']);

const PAGE = 2000;
const q = (name: string) => `"${name}"`;

function outValue(kind: Kind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'int': return String(v);
    case 'float': return Number(v);
    case 'bool': return toBool(v);
    case 'time': return toDateOrNull(v)!.toISOString();
    case 'list': return toStrings(v);
    case 'json': return toJson(v);
    default: return String(v);
  }
}

function inValue(kind: Kind, v: unknown): unknown {
  if (v === null) return null;
  switch (kind) {
    case 'bool': return v === true;
    case 'time': return new Date(v as string);
    case 'list': return list(v as string[]);
    case 'json': return json(v);
    case 'float': return Number(v);
    default: return v;
  }
}

export interface SnapshotHeader {
  readonly palisade: 'snapshot';
  readonly format: 1;
  readonly kind: 'main';
  readonly version: number;
  readonly engine: string;
  readonly createdAt: string;
}

export interface SnapshotStats {
  readonly rows: Readonly<Record<string, number>>;
}

/** The snapshot's lines, one consistent read of every table. */
async function* snapshotLines(tx: Queryable, createdAt: Date, counts: Record<string, number>): AsyncGenerator<string> {
  const [v] = await tx<{ v: unknown }[]>`select max(id) as v from schema_migrations`;
  const header: SnapshotHeader = {
    palisade: 'snapshot', format: 1, kind: 'main', version: Number(v?.v ?? 0), engine: tx.dialect.name, createdAt: createdAt.toISOString(),
  };
  yield `${JSON.stringify(header)}\n`;
  for (const table of SNAPSHOT_TABLES) {
    const columns = Object.keys(table.columns);
    yield `${JSON.stringify({ table: table.name, columns })}\n`;
    counts[table.name] = 0;
    let after: unknown[] | null = null;
    for (;;) {
      const keys = table.key.map(q).join(', ');
      const where: Fragment = after === null ? raw('') : fragment`where (${raw(keys)}) > (${join(after.map((x) => fragment`${x}`), ', ')})`;
      const rows = await tx.run(fragment`select ${raw(columns.map(q).join(', '))} from ${raw(q(table.name))} ${where} order by ${raw(keys)} limit ${raw(String(PAGE))}`);
      for (const row of rows) yield `${JSON.stringify(columns.map((c) => outValue(table.columns[c]!, row[c])))}\n`;
      counts[table.name] += rows.length;
      if (rows.length < PAGE) break;
      const last = rows[rows.length - 1]!;
      after = table.key.map((k) => last[k]);
    }
  }
}

/** Writes a snapshot of the database to `file` (gzip'd JSON lines). */
export async function writeSnapshot(sql: Sql, file: string, now = new Date()): Promise<SnapshotStats> {
  const counts: Record<string, number> = {};
  await sql.consistentRead(async (tx) => {
    await pipeline(Readable.from(snapshotLines(tx, now, counts)), createGzip(), createWriteStream(file, { mode: 0o600, flags: 'wx' }));
  });
  return { rows: counts };
}

export interface RestoreResult extends SnapshotStats {
  readonly header: SnapshotHeader;
}

/**
 * Replaces every row of the snapshot's tables with the snapshot's, in one transaction (on MySQL,
 * whose DDL is not involved here, one transaction too). The database is migrated first by the
 * caller; a snapshot from a newer schema than this build's is refused.
 */
export async function restoreSnapshot(sql: Sql, file: string): Promise<RestoreResult> {
  const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  const it = lines[Symbol.asyncIterator]();
  const first = await it.next();
  const header = (first.done ? null : JSON.parse(first.value)) as SnapshotHeader | null;
  if (header === null || header.palisade !== 'snapshot' || header.format !== 1 || header.kind !== 'main') {
    throw new Error(`${file} is not a Palisade database snapshot`);
  }
  const latest = MIGRATIONS.at(-1)!.id;
  if (!(Number.isInteger(header.version) && header.version <= latest)) {
    throw new Error(`the snapshot is of schema version ${header.version}; this build knows up to ${latest}: restore with a newer Palisade`);
  }
  const counts: Record<string, number> = {};
  await sql.begin(async (tx) => {
    for (const table of [...SNAPSHOT_TABLES].reverse()) await tx.unsafe(`delete from ${q(table.name)}`);
    let table: TableSpec | null = null;
    let columns: string[] = [];
    let pending: unknown[][] = [];
    const flush = async () => {
      if (table === null || pending.length === 0) return;
      const spec = table;
      const keep = columns.map((c, i) => [c, i] as const).filter(([c]) => c !== spec.serial && spec.columns[c] !== undefined);
      for (const row of pending) {
        await tx`insert into ${raw(q(spec.name))} (${raw(keep.map(([c]) => q(c)).join(', '))})
          values (${join(keep.map(([c, i]) => fragment`${inValue(spec.columns[c]!, row[i] ?? null)}`), ', ')})`;
      }
      counts[spec.name] = (counts[spec.name] ?? 0) + pending.length;
      pending = [];
    };
    for (let next = await it.next(); !next.done; next = await it.next()) {
      if (next.value === '') continue;
      const item = JSON.parse(next.value) as unknown;
      if (Array.isArray(item)) {
        if (table === null) throw new Error('a row before its table');
        pending.push(item);
        if (pending.length >= 500) await flush();
        continue;
      }
      await flush();
      const { table: name, columns: cols } = item as { table: string; columns: string[] };
      table = SNAPSHOT_TABLES.find((t) => t.name === name) ?? null;
      if (table === null) throw new Error(`unknown table ${name} in the snapshot`);
      columns = cols;
      counts[name] = 0;
    }
    await flush();
  });
  return { header, rows: counts };
}
