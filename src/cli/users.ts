// `users list` and `users reset-password USERNAME`: a forgotten password (root's too) gets a new
// generated one, printed once, that must be changed at the next login; the user's sessions end.
import { generatePassword } from '../admin/auth/passwords.js';
import { notFound } from '../admin/context.js';
import { listUsers, resetPassword, userView } from '../admin/users.js';
import { findUserByName } from '../db/users.js';
import { type Context, UsageError } from './context.js';

export async function listUsersCommand(_rest: string[], ctx: Context): Promise<void> {
  const users = (await listUsers(ctx.admin)).map(userView);
  ctx.out(users.map((u) => `${u.id}  ${u.username.padEnd(20)}  ${String(u.role).padEnd(9)}  ${u.accountId ?? '*'}${u.disabled ? '  (disabled)' : ''}`).join('\n') || '(no users)', users);
}

export async function resetPasswordCommand(rest: string[], ctx: Context): Promise<void> {
  if (rest.length !== 1) throw new UsageError('users reset-password needs exactly one USERNAME');
  const user = (await findUserByName(ctx.db.sql, rest[0]!.toLowerCase())) ?? notFound(`no user "${rest[0]!.slice(0, 64)}"`);
  const password = generatePassword();
  await resetPassword(ctx.admin, user.id, password);
  ctx.out(`user:     ${user.username}\npassword: ${password}\nIt must be changed at the next login.`, { username: user.username, password });
}
