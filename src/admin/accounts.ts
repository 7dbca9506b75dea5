// Accounts: list, create, rename, deactivate and activate again. A deactivated account's keys read
// as disabled (src/db/api-keys.ts), so workers refuse them once their key cache reloads them
// (CACHE_DURATION_API_KEYS).
import {
  type Account, createAccount as insertAccount, findAccount, listAccounts, renameAccount as renameRow, setAccountActive,
} from '../db/accounts.js';
import { isUniqueViolation } from '../db/client.js';
import { type AdminContext, audit, conflict, invalid, notFound, transaction } from './context.js';

export function accountView(a: Account) {
  return { id: a.id, name: a.name, isDefault: a.isDefault, generated: a.generated, active: a.active, createdAt: a.createdAt.toISOString() };
}

export async function listAllAccounts(ctx: AdminContext): Promise<Account[]> {
  return listAccounts(ctx.sql);
}

/** By id or name; AdminError NOT_FOUND when none. */
export async function getAccount(ctx: AdminContext, idOrName: string): Promise<Account> {
  return (await findAccount(ctx.sql, idOrName)) ?? notFound(`no account "${idOrName.slice(0, 200)}" (accounts list)`);
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 200) invalid('an account name must have 1 to 200 characters');
  return trimmed;
}

export async function createAccount(ctx: AdminContext, name: string): Promise<Account> {
  const checked = checkedName(name);
  try {
    return await transaction(ctx, async (tx) => {
      const account = await insertAccount(tx, checked);
      await audit(ctx, tx, 'account.create', account.id, account.id, { name: checked });
      return account;
    });
  } catch (err) {
    if (isUniqueViolation(err)) conflict(`an account named "${checked}" exists`);
    throw err;
  }
}

export async function renameAccount(ctx: AdminContext, id: string, name: string): Promise<Account> {
  const checked = checkedName(name);
  const before = await getAccount(ctx, id);
  try {
    await transaction(ctx, async (tx) => {
      await renameRow(tx, before.id, checked);
      await audit(ctx, tx, 'account.rename', before.id, before.id, { from: before.name, to: checked });
    });
  } catch (err) {
    if (isUniqueViolation(err)) conflict(`an account named "${checked}" exists`);
    throw err;
  }
  return getAccount(ctx, before.id);
}

/** Deactivating the default account is refused: the CLI and free keys rely on it. */
export async function setAccountStatus(ctx: AdminContext, id: string, active: boolean): Promise<Account> {
  const account = await getAccount(ctx, id);
  if (!active && account.isDefault) invalid('the default account cannot be deactivated');
  await transaction(ctx, async (tx) => {
    await setAccountActive(tx, account.id, active);
    await audit(ctx, tx, active ? 'account.activate' : 'account.deactivate', account.id, account.id);
  });
  return getAccount(ctx, account.id);
}
