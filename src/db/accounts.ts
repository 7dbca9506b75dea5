// accounts: who owns API keys and whose monthly usage counts against a plan.
import { randomBase62 } from '../keys/secrets.js';
import type { Queryable } from './client.js';
import { toBool, toDate } from './dialect.js';

export interface Account {
  readonly id: string;
  readonly name: string;
  readonly isDefault: boolean;
  /** Holds the one key POST /api_key/generate made; no other key may join it (migration 002). */
  readonly generated: boolean;
  /** A deactivated account's keys stop working (migration 005). */
  readonly active: boolean;
  readonly createdAt: Date;
}

interface AccountRow { id: string; name: string; is_default: unknown; generated: unknown; active: unknown; created_at: unknown }

const toAccount = (r: AccountRow): Account => Object.freeze({
  id: r.id, name: r.name, isDefault: toBool(r.is_default), generated: toBool(r.generated), active: toBool(r.active), createdAt: toDate(r.created_at),
});

/** `acc_` + 16 base62. */
export function newAccountId(): string {
  return `acc_${randomBase62(16)}`;
}

/**
 * The account created on first setup (DEFAULT_ACCOUNT_NAME). Idempotent and safe when several
 * processes call it at once: the first setup wins, later calls return that account even if the
 * configured name changed since.
 */
export async function ensureDefaultAccount(q: Queryable, name: string): Promise<Account> {
  checkName(name);
  for (const statement of q.dialect.insertRows('accounts', { id: 'text', name: 'text', is_default: 'bool' }, [[newAccountId(), name, true]], { ignore: true })) {
    await q.run(statement);
  }
  const [row] = await q<AccountRow[]>`select * from accounts where is_default`;
  if (row !== undefined) return toAccount(row);
  // An ordinary account already had that name: it becomes the default one.
  await q`update accounts set is_default = ${true} where name = ${name} and not "generated"`;
  const [named] = await q<AccountRow[]>`select * from accounts where is_default`;
  if (named === undefined) throw new Error('the default account could not be created');
  return toAccount(named);
}

/**
 * Throws a unique violation (isUniqueViolation) when the name is taken. `generated`: the account of
 * one generated key (src/keys/api-keys.ts creates it with the key). Default false.
 */
export async function createAccount(q: Queryable, name: string, generated = false): Promise<Account> {
  checkName(name);
  const id = newAccountId();
  await q`insert into accounts (id, name, "generated") values (${id}, ${name}, ${generated})`;
  const [row] = await q<AccountRow[]>`select * from accounts where id = ${id}`;
  return toAccount(row!);
}

/** Is `id` the account of a generated key? False also when there is no such account. */
export async function isGeneratedAccount(q: Queryable, id: string): Promise<boolean> {
  const [row] = await q<{ generated: unknown }[]>`select "generated" from accounts where id = ${id}`;
  return row !== undefined && toBool(row.generated);
}

export async function listAccounts(q: Queryable): Promise<Account[]> {
  return (await q<AccountRow[]>`select * from accounts order by created_at, id`).map(toAccount);
}

export async function findAccount(q: Queryable, idOrName: string): Promise<Account | null> {
  const [row] = await q<AccountRow[]>`select * from accounts where id = ${idOrName} or name = ${idOrName} order by (id = ${idOrName}) desc limit 1`;
  return row === undefined ? null : toAccount(row);
}

/** Throws a unique violation when the name is taken; false when there is no such account. */
export async function renameAccount(q: Queryable, id: string, name: string): Promise<boolean> {
  checkName(name);
  const rows = await q`update accounts set name = ${name} where id = ${id}`;
  return rows.count === 1;
}

/** Activates or deactivates; false when there is no such account. */
export async function setAccountActive(q: Queryable, id: string, active: boolean): Promise<boolean> {
  const rows = await q`update accounts set active = ${active} where id = ${id}`;
  return rows.count === 1;
}

function checkName(name: string): void {
  if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
    throw new Error('an account name must have 1 to 200 characters');
  }
}
