// users: who may log in to the console and the admin API. The root user (one at most) sees
// everything; every other user has one role in one account. Passwords are kept as Argon2id strings
// only; session_version is raised to end every session of a user at once.
import { randomBase62 } from '../keys/secrets.js';
import { isUniqueViolation, type Queryable } from './client.js';
import { fragment, join, raw, toBool, toDate, toDateOrNull } from './dialect.js';

export type Role = 'admin' | 'member' | 'read-only';
export const ROLES: readonly Role[] = Object.freeze(['admin', 'member', 'read-only']);
export const USERNAME = /^[a-z0-9][a-z0-9_.@-]{0,63}$/;

export interface User {
  readonly id: string;
  readonly username: string;
  readonly passwordHash: string;
  readonly isRoot: boolean;
  /** null for root. */
  readonly accountId: string | null;
  /** null for root. */
  readonly role: Role | null;
  readonly mustChangePassword: boolean;
  readonly sessionVersion: number;
  readonly totpSecret: string | null;
  readonly totpEnabled: boolean;
  readonly disabled: boolean;
  readonly createdAt: Date;
  readonly lastLoginAt: Date | null;
}

interface Row {
  id: string; username: string; password_hash: string; is_root: boolean; account_id: string | null; role: Role | null;
  must_change_password: boolean; session_version: number; totp_secret: string | null; totp_enabled: boolean;
  disabled: boolean; created_at: Date; last_login_at: Date | null;
}

// Booleans come back as 0/1 and times as text from some engines (src/db/dialect.ts).
const toUser = (r: Row): User => Object.freeze({
  id: r.id, username: r.username, passwordHash: r.password_hash, isRoot: toBool(r.is_root), accountId: r.account_id, role: r.role,
  mustChangePassword: toBool(r.must_change_password), sessionVersion: Number(r.session_version), totpSecret: r.totp_secret,
  totpEnabled: toBool(r.totp_enabled), disabled: toBool(r.disabled), createdAt: toDate(r.created_at), lastLoginAt: toDateOrNull(r.last_login_at),
});

/** `usr_` + 16 base62. */
export function newUserId(): string {
  return `usr_${randomBase62(16)}`;
}

export interface NewUser {
  readonly username: string;
  readonly passwordHash: string;
  readonly isRoot?: boolean;
  readonly accountId?: string | null;
  readonly role?: Role | null;
  readonly mustChangePassword?: boolean;
}

/** Throws a unique violation (isUniqueViolation) when the username is taken (or a second root). */
export async function insertUser(q: Queryable, u: NewUser): Promise<User> {
  const id = newUserId();
  await q`
    insert into users (id, username, password_hash, is_root, account_id, role, must_change_password)
    values (${id}, ${u.username}, ${u.passwordHash}, ${u.isRoot ?? false}, ${u.accountId ?? null},
      ${u.role ?? null}, ${u.mustChangePassword ?? false})`;
  const [row] = await q<Row[]>`select * from users where id = ${id}`;
  return toUser(row!);
}

/** Inserts the root user unless one exists; true when this call created it. */
export async function insertRootIfMissing(q: Queryable, username: string, passwordHash: string): Promise<boolean> {
  try {
    await q`
      insert into users (id, username, password_hash, is_root, must_change_password)
      values (${newUserId()}, ${username}, ${passwordHash}, ${true}, ${true})`;
    return true;
  } catch (err) {
    // Another node created it first (the unique root index or username).
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}

export async function findUserById(q: Queryable, id: string): Promise<User | null> {
  const [row] = await q<Row[]>`select * from users where id = ${id}`;
  return row === undefined ? null : toUser(row);
}

export async function findUserByName(q: Queryable, username: string): Promise<User | null> {
  const [row] = await q<Row[]>`select * from users where username = ${username}`;
  return row === undefined ? null : toUser(row);
}

/** Every user, or the users of one account; root first, then by name. */
export async function listUsers(q: Queryable, accountId?: string): Promise<User[]> {
  const rows = accountId === undefined
    ? await q<Row[]>`select * from users order by is_root desc, username`
    : await q<Row[]>`select * from users where account_id = ${accountId} order by username`;
  return rows.map(toUser);
}

export interface UserPatch {
  readonly role?: Role;
  readonly disabled?: boolean;
  readonly passwordHash?: string;
  readonly mustChangePassword?: boolean;
  readonly totpSecret?: string | null;
  readonly totpEnabled?: boolean;
  /** Raise session_version: every session of the user ends. */
  readonly endSessions?: boolean;
}

/** False when there is no such user. */
export async function updateUser(q: Queryable, id: string, patch: UserPatch): Promise<boolean> {
  const set: Record<string, unknown> = {};
  if (patch.role !== undefined) set.role = patch.role;
  if (patch.disabled !== undefined) set.disabled = patch.disabled;
  if (patch.passwordHash !== undefined) set.password_hash = patch.passwordHash;
  if (patch.mustChangePassword !== undefined) set.must_change_password = patch.mustChangePassword;
  if (patch.totpSecret !== undefined) set.totp_secret = patch.totpSecret;
  if (patch.totpEnabled !== undefined) set.totp_enabled = patch.totpEnabled;
  const bump = patch.endSessions === true ? 1 : 0;
  // Column names come from the patch's own fields above, never from the caller's keys.
  const assignments = Object.entries(set).map(([column, value]) => fragment`${raw(column)} = ${value}`);
  assignments.push(fragment`session_version = session_version + ${bump}`, fragment`updated_at = ${new Date()}`);
  const rows = await q`update users set ${join(assignments, ', ')} where id = ${id}`;
  return rows.count === 1;
}

/** Records `step` as the user's last accepted TOTP step; false when it is not after the last one (a replayed code). */
export async function claimTotpStep(q: Queryable, id: string, step: number): Promise<boolean> {
  const rows = await q`update users set totp_last_step = ${step} where id = ${id} and totp_last_step < ${step}`;
  return rows.count === 1;
}

export async function touchUserLogin(q: Queryable, id: string): Promise<void> {
  await q`update users set last_login_at = ${new Date()} where id = ${id}`;
}

/** False when there is no such user (root is never deleted). */
export async function deleteUser(q: Queryable, id: string): Promise<boolean> {
  const rows = await q`delete from users where id = ${id} and is_root = ${false}`;
  return rows.count === 1;
}
