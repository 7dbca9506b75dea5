// Users of the console and the admin API: the root user (created at first start, src/admin/auth/root.ts)
// and users with one role (admin, member, read-only) in one account. Passwords are checked against
// PASSWORD_MIN_LENGTH and kept as Argon2id hashes only.
import { isUniqueViolation } from '../db/client.js';
import {
  deleteUser as deleteRow, findUserById, insertUser, listUsers as listRows, type Role, ROLES, updateUser as updateRow, type User, USERNAME,
} from '../db/users.js';
import { hashPassword, PASSWORD_MAX_LENGTH } from './auth/passwords.js';
import { type AdminContext, audit, conflict, invalid, notFound, transaction } from './context.js';

/** A user as the API shows it (never the hash nor the TOTP secret). */
export function userView(u: User) {
  return {
    id: u.id, username: u.username, isRoot: u.isRoot, accountId: u.accountId, role: u.isRoot ? 'root' : u.role,
    mustChangePassword: u.mustChangePassword, totpEnabled: u.totpEnabled, disabled: u.disabled,
    createdAt: u.createdAt.toISOString(), lastLoginAt: u.lastLoginAt?.toISOString() ?? null,
  };
}

export function checkPassword(ctx: AdminContext, password: string): void {
  if (password.length < ctx.settings.PASSWORD_MIN_LENGTH) invalid(`the password must have at least ${ctx.settings.PASSWORD_MIN_LENGTH} characters`);
  if (password.length > PASSWORD_MAX_LENGTH) invalid(`the password must have at most ${PASSWORD_MAX_LENGTH} characters`);
}

export function checkRole(role: string): Role {
  if (!(ROLES as readonly string[]).includes(role)) invalid(`role must be one of ${ROLES.join(', ')}`);
  return role as Role;
}

export async function listUsers(ctx: AdminContext, accountId?: string): Promise<User[]> {
  return listRows(ctx.sql, accountId);
}

export async function getUser(ctx: AdminContext, id: string): Promise<User> {
  const user = /^usr_[0-9A-Za-z]{16}$/.test(id) ? await findUserById(ctx.sql, id) : null;
  return user ?? notFound(`no user ${id.slice(0, 64)}`);
}

/** A new user must change the password given here at first login. */
export async function createUser(ctx: AdminContext, input: { username: string; password: string; accountId: string; role: string }): Promise<User> {
  const username = input.username.trim().toLowerCase();
  if (!USERNAME.test(username)) invalid('username is 1-64 of a-z 0-9 _ . @ - starting with a letter or digit');
  const role = checkRole(input.role);
  checkPassword(ctx, input.password);
  const passwordHash = await hashPassword(input.password);
  try {
    return await transaction(ctx, async (tx) => {
      const user = await insertUser(tx, { username, passwordHash, accountId: input.accountId, role, mustChangePassword: true });
      await audit(ctx, tx, 'user.create', user.id, user.accountId, { username, role });
      return user;
    });
  } catch (err) {
    if (isUniqueViolation(err)) conflict(`a user named "${username}" exists`);
    throw err;
  }
}

/** Role and disabled; disabling ends the user's sessions. Root is changed only through its own password. */
export async function updateUser(ctx: AdminContext, id: string, patch: { role?: string; disabled?: boolean }): Promise<User> {
  const user = await getUser(ctx, id);
  if (user.isRoot) invalid('the root user has no role and cannot be disabled');
  const role = patch.role === undefined ? undefined : checkRole(patch.role);
  await transaction(ctx, async (tx) => {
    await updateRow(tx, user.id, {
      ...(role !== undefined ? { role } : {}), ...(patch.disabled !== undefined ? { disabled: patch.disabled } : {}),
      endSessions: patch.disabled === true || (role !== undefined && role !== user.role),
    });
    await audit(ctx, tx, 'user.update', user.id, user.accountId, { ...(role ? { role } : {}), ...(patch.disabled !== undefined ? { disabled: patch.disabled } : {}) });
  });
  return getUser(ctx, user.id);
}

/** Sets a temporary password that must be changed at next login; ends the user's sessions. */
export async function resetPassword(ctx: AdminContext, id: string, password: string): Promise<void> {
  const user = await getUser(ctx, id);
  checkPassword(ctx, password);
  const passwordHash = await hashPassword(password);
  await transaction(ctx, async (tx) => {
    await updateRow(tx, user.id, { passwordHash, mustChangePassword: true, endSessions: true });
    await audit(ctx, tx, 'user.reset-password', user.id, user.accountId);
  });
}

export async function deleteUser(ctx: AdminContext, id: string): Promise<void> {
  const user = await getUser(ctx, id);
  if (user.isRoot) invalid('the root user cannot be deleted');
  await transaction(ctx, async (tx) => {
    await deleteRow(tx, user.id);
    await audit(ctx, tx, 'user.delete', user.id, user.accountId, { username: user.username });
  });
}

/** The user's own new password: every session ends (the caller issues a new one). */
export async function changeOwnPassword(ctx: AdminContext, user: User, password: string): Promise<void> {
  checkPassword(ctx, password);
  const passwordHash = await hashPassword(password);
  await transaction(ctx, async (tx) => {
    await updateRow(tx, user.id, { passwordHash, mustChangePassword: false, endSessions: true });
    await audit(ctx, tx, 'user.change-password', user.id, user.accountId);
  });
}
