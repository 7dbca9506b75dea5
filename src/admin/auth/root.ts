// The root user, created at first start (by the primary, after the migrations): its password is
// DEFAULT_ROOT_PASSWORD, or a generated one written once to the log. Either way it must be changed
// at the first login. Later starts leave the user alone (a changed DEFAULT_ROOT_PASSWORD does not
// reset it; `npm run cli -- users reset-password root` does).
import type { Sql } from '../../db/client.js';
import { insertAudit } from '../../db/audit-log.js';
import { findUserByName, insertRootIfMissing } from '../../db/users.js';
import { generatePassword, hashPassword } from './passwords.js';

export const ROOT_USERNAME = 'root';

export interface RootCreated {
  /** The generated password when DEFAULT_ROOT_PASSWORD was empty; null when it was given. */
  readonly generatedPassword: string | null;
}

/** Creates the root user unless one exists; null when it existed. */
export async function ensureRootUser(sql: Sql, defaultPassword: string): Promise<RootCreated | null> {
  if ((await findUserByName(sql, ROOT_USERNAME)) !== null) return null;
  const generated = defaultPassword === '' ? generatePassword() : null;
  const created = await insertRootIfMissing(sql, ROOT_USERNAME, await hashPassword(generated ?? defaultPassword));
  if (!created) return null;
  await insertAudit(sql, { actor: 'system', ip: null, action: 'user.create', target: ROOT_USERNAME, accountId: null, detail: { root: true } });
  return { generatedPassword: generated };
}
