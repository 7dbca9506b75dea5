// Every migration in order. An id is applied once per database (schema_migrations).
// Adding one: a module NNN-name.ts exporting its DDL as a function of the dialect vocabulary
// (src/db/dialect.ts, Ddl: types, defaults, checks that differ between engines) and, when rows
// must change, `data(q)` written in portable statements; then one line below.
import type { Queryable } from '../client.js';
import type { Ddl } from '../dialect.js';
import m001 from './001-initial.js';
import * as m002 from './002-own-accounts.js';
import m003 from './003-request-log-intel.js';
import m004 from './004-classifier.js';
import m005 from './005-leases.js';
import m006 from './006-request-log-node.js';
import m007 from './007-admin.js';

export interface Migration {
  readonly id: number;
  readonly name: string;
  /** Statements separated by `;` at the end of a line. */
  readonly ddl: (t: Ddl) => string;
  /** Row changes after the DDL, in the same migration. */
  readonly data?: (q: Queryable) => Promise<void>;
}

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  { id: 1, name: 'initial', ddl: m001 },
  { id: 2, name: 'own-accounts', ddl: m002.ddl, data: m002.data },
  { id: 3, name: 'request-log-intel', ddl: m003 },
  { id: 4, name: 'classifier', ddl: m004 },
  { id: 5, name: 'leases', ddl: m005 },
  { id: 6, name: 'request-log-node', ddl: m006 },
  { id: 7, name: 'admin', ddl: m007 },
]);

/** The DDL's statements, comments removed. */
export function statements(ddl: string): string[] {
  return ddl.split('\n').map((l) => l.replace(/^\s*--.*$/, '')).join('\n')
    .split(/;\s*(?:\n|$)/).map((s) => s.trim()).filter((s) => s !== '');
}
