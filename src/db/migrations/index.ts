// Every migration in order. An id is applied once per database (schema_migrations).
import m001 from './001-initial.js';
import m002 from './002-own-accounts.js';
import m003 from './003-request-log-intel.js';
import m004 from './004-classifier.js';
import m005 from './005-admin.js';

export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  { id: 1, name: 'initial', sql: m001 },
  { id: 2, name: 'own-accounts', sql: m002 },
  { id: 3, name: 'request-log-intel', sql: m003 },
  { id: 4, name: 'classifier', sql: m004 },
  { id: 5, name: 'admin', sql: m005 },
]);
