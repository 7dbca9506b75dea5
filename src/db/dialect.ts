// Every difference between the SQL engines, in one place: PostgreSQL (a server or the embedded
// PGlite), MySQL/MariaDB and SQLite (libSQL). The repositories write one portable statement and
// ask the dialect for the few shapes that differ: DDL types in migrations, placeholders, upserts,
// bulk inserts, batched deletes, row locks and how values travel. Connections live in drivers.ts.
//
// Portable SQL, as the repositories write it: identifiers in "double quotes" (MySQL sessions run
// with ANSI_QUOTES), strings in 'single quotes', `||` concatenation (PIPES_AS_CONCAT), no
// RETURNING (MySQL has none; the driver reports affected rows), no casts (`::`), times as
// parameters from JavaScript rather than now().

export type EngineName = 'postgres' | 'mysql' | 'sqlite';

/** A column's type for bulk inserts (PostgreSQL's unnest needs it; SQLite stores times as text). */
export type ColumnType = 'text' | 'bigint' | 'int' | 'smallint' | 'double' | 'real' | 'bool' | 'timestamp';

/** A piece of SQL with its parameters, spliced into a statement as is (not as a parameter). */
export class Fragment {
  constructor(readonly strings: readonly string[], readonly values: readonly unknown[]) {
    if (strings.length !== values.length + 1) throw new Error('a fragment has one more string than values');
  }
}

/** Trusted SQL text (never user input). */
export function raw(text: string): Fragment {
  return new Fragment([text], []);
}

/** A fragment from a template: `fragment\`a = ${1}\``. */
export function fragment(strings: TemplateStringsArray | readonly string[], ...values: unknown[]): Fragment {
  return new Fragment([...strings], values);
}

/** The fragments joined by `separator`. */
export function join(parts: readonly Fragment[], separator: string): Fragment {
  const strings: string[] = [''];
  const values: unknown[] = [];
  parts.forEach((p, i) => {
    if (i > 0) strings[strings.length - 1] += separator;
    strings[strings.length - 1] += p.strings[0]!;
    for (let k = 0; k < p.values.length; k++) {
      values.push(p.values[k]);
      strings.push(p.strings[k + 1]!);
    }
  });
  return new Fragment(strings, values);
}

/** A list of strings for a list column (api_keys.hostnames): text[] in PostgreSQL, JSON text elsewhere. */
export class ListValue {
  constructor(readonly items: readonly string[]) {}
}
export const list = (items: readonly string[]): ListValue => new ListValue(items);

/** A JSON document for a json column: jsonb in PostgreSQL, json in MySQL, text in SQLite. */
export class JsonValue {
  constructor(readonly value: unknown) {}
}
export const json = (value: unknown): JsonValue => new JsonValue(value);

/** What an INSERT does with a row whose unique key exists. */
export type OnConflict =
  | { readonly ignore: true }
  /** Update: `add` columns are incremented by the new row's value, `set` columns take it. */
  | { readonly keys: readonly string[]; readonly add?: readonly string[]; readonly set?: readonly string[] };

/** The vocabulary migrations are written in (src/db/migrations): one text, every engine. */
export interface Ddl {
  /** Unbounded text, never indexed. */
  readonly text: string;
  /** Text of at most `chars` characters, which may be a key or indexed (MySQL needs a bound). */
  str(chars: number): string;
  readonly bigint: string;
  readonly smallint: string;
  readonly double: string;
  /** A 4-byte float in PostgreSQL; a double elsewhere (MySQL FLOAT reads back 0.7 as 0.699999988). */
  readonly real: string;
  readonly bool: string;
  readonly timestamp: string;
  /** The current time as a column default. */
  readonly now: string;
  readonly json: string;
  /** A default for a text or JSON column (MySQL takes those only as an expression). */
  defaultText(literal: string): string;
  /** A non-null list of strings (ListValue), default empty. */
  readonly textList: string;
  /** An auto-increment 64-bit primary key column (type and PRIMARY KEY). */
  readonly serialKey: string;
  /** Appended after CREATE TABLE (...): MySQL's engine, character set and binary collation. */
  readonly table: string;
  /** `column` matches the regular expression `re` (POSIX ERE subset common to all three). */
  matches(column: string, re: string): string;
  /** Length of `column` in characters. */
  length(column: string): string;
  /** Statement(s): at most one row of `table` has `column` true. */
  uniqueWhereTrue(index: string, table: string, column: string): string;
  /** Statement(s) adding the columns (`name type ...` each). */
  addColumns(table: string, columns: readonly string[]): string;
}

export interface Dialect {
  readonly name: EngineName;
  readonly ddl: Ddl;
  /** The `i`-th (1-based) parameter's placeholder. */
  placeholder(i: number): string;
  /** A parameter as the driver sends it. */
  encode(value: unknown): unknown;
  /** Statements inserting `rows` (values in `columns` order), in chunks the engine accepts. */
  insertRows(table: string, columns: Readonly<Record<string, ColumnType>>, rows: readonly (readonly unknown[])[], onConflict?: OnConflict): Fragment[];
  /** Appended to a SELECT inside a transaction to lock its rows until the end ('' where the whole database is locked). */
  readonly forUpdate: string;
  /** Deletes at most `limit` rows of `table` matching `where`; `key` is its primary key column. */
  deleteBatch(table: string, key: string, where: Fragment, limit: number): Fragment;
  /** The error is a unique-key violation. */
  isUniqueViolation(err: unknown): boolean;
  /** The error is a foreign-key violation (a row names one that does not exist). */
  isForeignKeyViolation(err: unknown): boolean;
}

const ISO_NOW = `(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

/** Rows per INSERT: PostgreSQL takes any number through unnest; the others bind one parameter per value. */
function chunks<T>(rows: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

function valuesList(columns: number, rows: readonly (readonly unknown[])[]): Fragment {
  return join(rows.map((r) => {
    if (r.length !== columns) throw new Error(`a row has ${r.length} values for ${columns} columns`);
    return new Fragment(['(', ...Array.from({ length: columns - 1 }, () => ', '), ')'], r);
  }), ', ');
}

const quote = (name: string) => `"${name}"`;

/** PostgreSQL: a server or the embedded PGlite. */
const POSTGRES_TYPES: Readonly<Record<ColumnType, string>> = {
  text: 'text', bigint: 'bigint', int: 'integer', smallint: 'smallint', double: 'float8', real: 'real', bool: 'boolean', timestamp: 'timestamptz',
};

/** An array literal ('{"a","b",NULL}') for unnest(): elements quoted, so one form serves every type. */
export function postgresArrayLiteral(values: readonly unknown[]): string {
  return `{${values.map((v) => {
    if (v === null || v === undefined) return 'NULL';
    const text = v instanceof Date ? v.toISOString() : typeof v === 'boolean' ? (v ? 't' : 'f') : String(v);
    return `"${text.replace(/[\\"]/g, '\\$&')}"`;
  }).join(',')}}`;
}

function conflictClause(onConflict: OnConflict | undefined, table: string, excluded: (c: string) => string, style: 'on-conflict' | 'duplicate-key'): string {
  if (onConflict === undefined) return '';
  if ('ignore' in onConflict) return style === 'on-conflict' ? ' on conflict do nothing' : '';
  const sets = [
    ...(onConflict.add ?? []).map((c) => `${quote(c)} = ${style === 'on-conflict' ? `${quote(table)}.` : ''}${quote(c)} + ${excluded(c)}`),
    ...(onConflict.set ?? []).map((c) => `${quote(c)} = ${excluded(c)}`),
  ].join(', ');
  return style === 'on-conflict'
    ? ` on conflict (${onConflict.keys.map(quote).join(', ')}) do update set ${sets}`
    : ` on duplicate key update ${sets}`;
}

export const POSTGRES: Dialect = Object.freeze({
  name: 'postgres',
  ddl: Object.freeze({
    text: 'text',
    str: () => 'text',
    bigint: 'bigint', smallint: 'smallint', double: 'double precision', real: 'real', bool: 'boolean',
    timestamp: 'timestamptz', now: 'now()', json: 'jsonb', defaultText: (l: string) => `DEFAULT '${l}'`,
    textList: `text[] NOT NULL DEFAULT '{}'`,
    serialKey: 'bigserial PRIMARY KEY',
    table: '',
    matches: (c: string, re: string) => `${c} ~ '${re}'`,
    length: (c: string) => `length(${c})`,
    uniqueWhereTrue: (index: string, table: string, column: string) => `CREATE UNIQUE INDEX ${index} ON ${table} (${column}) WHERE ${column}`,
    addColumns: (table: string, columns: readonly string[]) => `ALTER TABLE ${table} ${columns.map((c) => `ADD COLUMN ${c}`).join(', ')}`,
  }),
  placeholder: (i: number) => `$${i}`,
  encode(value: unknown): unknown {
    // `postgres` asks the server for the parameters' types first and serializes by them: a JSON
    // value goes as is (it stringifies it for json/jsonb), a text[] as its literal (passed through).
    if (value instanceof ListValue) return postgresArrayLiteral(value.items);
    if (value instanceof JsonValue) return value.value;
    return value;
  },
  insertRows(table, columns, rows, onConflict) {
    if (rows.length === 0) return [];
    // All rows as one typed array per column: the statement text is the same whatever the row
    // count, so the server parses and plans it once per connection.
    const names = Object.keys(columns);
    const arrays = names.map((_, i) => rows.map((r) => r[i]));
    const casts = names.map((n) => `::${POSTGRES_TYPES[columns[n]!]}[]`);
    const head = `insert into ${quote(table)} (${names.map(quote).join(', ')}) select * from unnest(`;
    return [new Fragment(
      [head, ...casts.slice(0, -1).map((c) => `${c}, `), `${casts.at(-1)!})${conflictClause(onConflict, table, (c) => `excluded.${quote(c)}`, 'on-conflict')}`],
      arrays.map(postgresArrayLiteral),
    )];
  },
  forUpdate: ' for update',
  deleteBatch: (table, key, where, limit) =>
    fragment`delete from ${raw(quote(table))} where ${raw(quote(key))} in (select ${raw(quote(key))} from ${raw(quote(table))} where ${where} limit ${raw(String(limit))})`,
  isUniqueViolation: (err) => errorField(err, 'code') === '23505',
  isForeignKeyViolation: (err) => errorField(err, 'code') === '23503',
} satisfies Dialect);

/** MySQL and MariaDB (through mysql2; sessions in ANSI mode, UTC). */
export const MYSQL: Dialect = Object.freeze({
  name: 'mysql',
  ddl: Object.freeze({
    text: 'text',
    str: (chars: number) => `varchar(${chars})`,
    bigint: 'bigint', smallint: 'smallint', double: 'double', real: 'double', bool: 'boolean',
    timestamp: 'datetime(3)', now: 'CURRENT_TIMESTAMP(3)', json: 'json', defaultText: (l: string) => `DEFAULT ('${l}')`,
    textList: `json NOT NULL DEFAULT ('[]')`,
    serialKey: 'bigint AUTO_INCREMENT PRIMARY KEY',
    table: ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin',
    matches: (c: string, re: string) => `${c} REGEXP '${re}'`,
    length: (c: string) => `char_length(${c})`,
    // No partial indexes: a generated column that is 1 for true and NULL otherwise, unique.
    uniqueWhereTrue: (index: string, table: string, column: string) =>
      `ALTER TABLE ${table} ADD COLUMN ${column}_one tinyint AS (CASE WHEN ${column} THEN 1 END) STORED;\nCREATE UNIQUE INDEX ${index} ON ${table} (${column}_one)`,
    addColumns: (table: string, columns: readonly string[]) => `ALTER TABLE ${table} ${columns.map((c) => `ADD COLUMN ${c}`).join(', ')}`,
  }),
  placeholder: () => '?',
  encode(value: unknown): unknown {
    if (value instanceof ListValue) return JSON.stringify(value.items);
    if (value instanceof JsonValue) return JSON.stringify(value.value);
    return value;
  },
  insertRows(table, columns, rows, onConflict) {
    const names = Object.keys(columns);
    const verb = onConflict !== undefined && 'ignore' in onConflict ? 'insert ignore into' : 'insert into';
    return chunks(rows, 1000).map((chunk) => fragment`${raw(`${verb} ${quote(table)} (${names.map(quote).join(', ')}) values `)}${valuesList(names.length, chunk)}${raw(conflictClause(onConflict, table, (c) => `values(${quote(c)})`, 'duplicate-key'))}`);
  },
  forUpdate: ' for update',
  // MySQL refuses LIMIT in an IN subquery; a single-table DELETE takes one.
  deleteBatch: (table, _key, where, limit) => fragment`delete from ${raw(quote(table))} where ${where} limit ${raw(String(limit))}`,
  isUniqueViolation: (err) => errorField(err, 'errno') === 1062 || errorField(err, 'code') === 'ER_DUP_ENTRY',
  isForeignKeyViolation: (err) => errorField(err, 'errno') === 1452 || errorField(err, 'code') === 'ER_NO_REFERENCED_ROW_2',
} satisfies Dialect);

/** SQLite through libSQL: times as ISO-8601 text (sorts and compares as time), booleans as 0/1. */
export const SQLITE: Dialect = Object.freeze({
  name: 'sqlite',
  ddl: Object.freeze({
    text: 'text',
    str: () => 'text',
    bigint: 'integer', smallint: 'integer', double: 'real', real: 'real', bool: 'boolean',
    timestamp: 'text', now: ISO_NOW, json: 'text', defaultText: (l: string) => `DEFAULT '${l}'`,
    textList: `text NOT NULL DEFAULT '[]'`,
    serialKey: 'integer PRIMARY KEY AUTOINCREMENT',
    table: '',
    matches: (c: string, re: string) => `${c} REGEXP '${re}'`,
    length: (c: string) => `length(${c})`,
    uniqueWhereTrue: (index: string, table: string, column: string) => `CREATE UNIQUE INDEX ${index} ON ${table} (${column}) WHERE ${column}`,
    addColumns: (table: string, columns: readonly string[]) => columns.map((c) => `ALTER TABLE ${table} ADD COLUMN ${c}`).join(';\n'),
  }),
  placeholder: () => '?',
  encode(value: unknown): unknown {
    if (value instanceof ListValue) return JSON.stringify(value.items);
    if (value instanceof JsonValue) return JSON.stringify(value.value);
    if (value instanceof Date) return value.toISOString();
    if (typeof value === 'boolean') return value ? 1 : 0;
    return value;
  },
  insertRows(table, columns, rows, onConflict) {
    const names = Object.keys(columns);
    // SQLite binds at most 32,766 parameters per statement.
    const per = Math.max(1, Math.floor(30_000 / names.length));
    return chunks(rows, per).map((chunk) => fragment`${raw(`insert into ${quote(table)} (${names.map(quote).join(', ')}) values `)}${valuesList(names.length, chunk)}${raw(conflictClause(onConflict, table, (c) => `excluded.${quote(c)}`, 'on-conflict'))}`);
  },
  forUpdate: '',
  deleteBatch: POSTGRES.deleteBatch,
  isUniqueViolation: (err) => [errorField(err, 'extendedCode'), errorField(err, 'code')]
    .some((c) => c === 'SQLITE_CONSTRAINT_UNIQUE' || c === 'SQLITE_CONSTRAINT_PRIMARYKEY'),
  isForeignKeyViolation: (err) => [errorField(err, 'extendedCode'), errorField(err, 'code')].some((c) => c === 'SQLITE_CONSTRAINT_FOREIGNKEY'),
} satisfies Dialect);

/** A unique-key violation on any engine. */
export function isUniqueViolation(err: unknown): boolean {
  return POSTGRES.isUniqueViolation(err) || MYSQL.isUniqueViolation(err) || SQLITE.isUniqueViolation(err);
}

/** A foreign-key violation on any engine. */
export function isForeignKeyViolation(err: unknown): boolean {
  return POSTGRES.isForeignKeyViolation(err) || MYSQL.isForeignKeyViolation(err) || SQLITE.isForeignKeyViolation(err);
}

function errorField(err: unknown, name: string): unknown {
  if (err === null || typeof err !== 'object') return undefined;
  const own = (err as Record<string, unknown>)[name];
  if (own !== undefined) return own;
  const cause = (err as { cause?: unknown }).cause;
  return cause !== null && typeof cause === 'object' ? (cause as Record<string, unknown>)[name] : undefined;
}

// Values as the engines return them, read one way: the repositories call these on every column
// whose representation differs (booleans, times, lists, JSON, 64-bit counters).

export function toBool(v: unknown): boolean {
  return v === true || v === 1 || v === 1n || v === '1' || v === 't';
}

export function toDate(v: unknown): Date {
  if (v instanceof Date) return v;
  if (typeof v === 'string' || typeof v === 'number') return new Date(v);
  throw new TypeError(`not a time: ${String(v)}`);
}

export function toDateOrNull(v: unknown): Date | null {
  return v === null || v === undefined ? null : toDate(v);
}

export function toStrings(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === 'string') return (JSON.parse(v) as unknown[]).map(String);
  if (Buffer.isBuffer(v)) return toStrings(v.toString('utf8'));
  throw new TypeError('not a list');
}

export function toJson<T = unknown>(v: unknown): T {
  if (typeof v === 'string') return JSON.parse(v) as T;
  if (Buffer.isBuffer(v)) return JSON.parse(v.toString('utf8')) as T;
  return v as T;
}

/** A 64-bit counter as a decimal string (as PostgreSQL returns bigint). */
export function toCount(v: unknown): string {
  return v === null || v === undefined ? '0' : String(v);
}
