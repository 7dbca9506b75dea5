// `accounts create NAME`, `accounts list`, `accounts rename ACCOUNT NAME`, `accounts deactivate|activate
// ACCOUNT`, and the --account flag of other commands; through the admin domain (src/admin/accounts.ts).
import { ensureDefaultAccount } from '../db/accounts.js';
import { accountView, createAccount, getAccount, listAllAccounts, renameAccount, setAccountStatus } from '../admin/accounts.js';
import { type Context, UsageError } from './context.js';

export async function createAccountCommand(rest: string[], ctx: Context): Promise<void> {
  const name = rest.join(' ').trim();
  if (name === '') throw new UsageError('accounts create needs NAME');
  const account = await createAccount(ctx.admin, name);
  ctx.out(`${account.id}  ${account.name}`, { id: account.id, name: account.name });
}

export async function listAccountsCommand(_rest: string[], ctx: Context): Promise<void> {
  const accounts = await listAllAccounts(ctx.admin);
  ctx.out(
    accounts.map((a) => `${a.id}  ${a.name}${a.isDefault ? '  (default)' : ''}${a.generated ? '  (generated key)' : ''}${a.active ? '' : '  (deactivated)'}`).join('\n'),
    accounts.map(accountView),
  );
}

export async function renameAccountCommand(rest: string[], ctx: Context): Promise<void> {
  const [given, ...name] = rest;
  if (given === undefined || name.join(' ').trim() === '') throw new UsageError('accounts rename needs ACCOUNT and NAME');
  const account = await renameAccount(ctx.admin, given, name.join(' '));
  ctx.out(`${account.id}  ${account.name}`, accountView(account));
}

export function accountStatusCommand(active: boolean) {
  return async (rest: string[], ctx: Context): Promise<void> => {
    if (rest.length !== 1) throw new UsageError(`accounts ${active ? 'activate' : 'deactivate'} needs exactly one ACCOUNT`);
    const account = await setAccountStatus(ctx.admin, rest[0]!, active);
    ctx.out(`${account.id}  ${account.name}  ${active ? 'active' : 'deactivated (its keys stop working within CACHE_DURATION_API_KEYS)'}`, accountView(account));
  };
}

/** --account: a name or id; the default account when not given. */
export async function resolveAccount(ctx: Context, given: string | undefined) {
  if (given === undefined) return ensureDefaultAccount(ctx.db.sql, ctx.config.DEFAULT_ACCOUNT_NAME);
  return getAccount(ctx.admin, given);
}
