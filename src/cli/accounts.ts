// `accounts create NAME`, `accounts list`, and the --account flag of other commands.
import { createAccount, ensureDefaultAccount, findAccount, listAccounts } from '../db/accounts.js';
import { isUniqueViolation } from '../db/client.js';
import { type Context, UsageError } from './context.js';

export async function createAccountCommand(rest: string[], ctx: Context): Promise<void> {
  const name = rest.join(' ').trim();
  if (name === '') throw new UsageError('accounts create needs NAME');
  try {
    const account = await createAccount(ctx.db.sql, name);
    ctx.out(`${account.id}  ${account.name}`, { id: account.id, name: account.name });
  } catch (err) {
    if (isUniqueViolation(err)) throw new Error(`an account named "${name}" exists`);
    throw err;
  }
}

export async function listAccountsCommand(_rest: string[], ctx: Context): Promise<void> {
  const accounts = await listAccounts(ctx.db.sql);
  ctx.out(
    accounts.map((a) => `${a.id}  ${a.name}${a.isDefault ? '  (default)' : ''}${a.generated ? '  (generated key)' : ''}`).join('\n'),
    accounts.map((a) => ({
      id: a.id, name: a.name, isDefault: a.isDefault, generated: a.generated, createdAt: a.createdAt.toISOString(),
    })),
  );
}

/** --account: a name or id; the default account when not given. */
export async function resolveAccount(ctx: Context, given: string | undefined) {
  if (given === undefined) return ensureDefaultAccount(ctx.db.sql, ctx.config.DEFAULT_ACCOUNT_NAME);
  const account = await findAccount(ctx.db.sql, given);
  if (account === null) throw new Error(`no account "${given}" (accounts list)`);
  return account;
}
