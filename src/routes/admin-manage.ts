// The admin API's management routes (docs/admin.md): accounts, users, API keys, hostnames held by
// generated keys, plans; each checks the caller's role in the account concerned.
import { PalisadeError } from '../errors.js';
import { accountView, createAccount, getAccount, listAllAccounts, renameAccount, setAccountStatus } from '../admin/accounts.js';
import { PASSWORD_MAX_LENGTH } from '../admin/auth/passwords.js';
import { usageOfKey } from '../admin/data.js';
import { bool, num, only, param, strings, text } from '../admin/input.js';
import { createKey, getKey, keyHistory, keyView, listKeys, reassignKeyHostname, releaseKeyHostname, revokeKey, rotateKey, updateKey } from '../admin/keys.js';
import { listAllPlans, setPlan } from '../admin/plans.js';
import { createUser, deleteUser, getUser, listUsers, resetPassword, updateUser, userView } from '../admin/users.js';
import { body, can, id, type Call, type Kit, type Need, needRole, reply, scope, self, visible } from './admin-kit.js';

export function manageRoutes(kit: Kit): void {
  const { add, ownAccount } = kit;
  // --- accounts
  add('GET', '/accounts', async (c) => {
    const p = self(c);
    const all = await listAllAccounts(c.admin);
    return reply(all.filter((a) => can(p, 'read', a.id)).map(accountView));
  });
  add('POST', '/accounts', async (c) => {
    needRole(self(c), 'root', null);
    const b = body(c);
    only(b, ['name']);
    return reply(accountView(await createAccount(c.admin, text(b, 'name'))), 201);
  });
  add('GET', '/accounts/:id', async (c) => {
    const account = await getAccount(c.admin, id(c));
    visible(self(c), account.id, 'account');
    return reply(accountView(account));
  });
  add('PATCH', '/accounts/:id', async (c) => {
    const p = self(c);
    const account = await getAccount(c.admin, id(c));
    visible(p, account.id, 'account');
    const b = body(c);
    only(b, ['name', 'active']);
    const name = text(b, 'name', { optional: true });
    const active = bool(b, 'active');
    if (name === undefined && active === undefined) throw new PalisadeError('INVALID_PARAMETER', 'name or active is needed');
    if (name !== undefined) needRole(p, 'manage', account.id);
    if (active !== undefined) needRole(p, 'root', null);
    let out = account;
    if (name !== undefined) out = await renameAccount(c.admin, account.id, name);
    if (active !== undefined) out = await setAccountStatus(c.admin, account.id, active);
    return reply(accountView(out));
  });

  // --- users
  add('GET', '/users', async (c) => {
    const accountId = scope(self(c), param(c.req.query, 'accountId'), 'read');
    return reply((await listUsers(c.admin, accountId)).map(userView));
  });
  add('POST', '/users', async (c) => {
    const p = self(c);
    const b = body(c);
    only(b, ['username', 'password', 'accountId', 'role']);
    const accountId = text(b, 'accountId', { max: 64, optional: true }) ?? p.user.accountId;
    if (accountId === null) throw new PalisadeError('INVALID_PARAMETER', 'accountId is needed');
    const account = await getAccount(c.admin, accountId);
    needRole(p, 'manage', account.id);
    const user = await createUser(c.admin, {
      username: text(b, 'username', { max: 64 }), password: text(b, 'password', { max: PASSWORD_MAX_LENGTH }), accountId: account.id, role: text(b, 'role', { max: 16 }),
    });
    return reply(userView(user), 201);
  });
  const targetUser = async (c: Call) => {
    const user = await getUser(c.admin, id(c));
    visible(self(c), user.accountId, 'user');
    needRole(self(c), 'manage', user.accountId);
    if (user.id === self(c).user.id) throw new PalisadeError('INVALID_PARAMETER', 'Change your own user under /api/admin/me.');
    return user;
  };
  add('GET', '/users/:id', async (c) => {
    const user = await getUser(c.admin, id(c));
    visible(self(c), user.accountId, 'user');
    return reply(userView(user));
  });
  add('PATCH', '/users/:id', async (c) => {
    const user = await targetUser(c);
    const b = body(c);
    only(b, ['role', 'disabled']);
    const role = text(b, 'role', { max: 16, optional: true });
    const disabled = bool(b, 'disabled');
    if (role === undefined && disabled === undefined) throw new PalisadeError('INVALID_PARAMETER', 'role or disabled is needed');
    return reply(userView(await updateUser(c.admin, user.id, { ...(role !== undefined ? { role } : {}), ...(disabled !== undefined ? { disabled } : {}) })));
  });
  add('POST', '/users/:id/password', async (c) => {
    const user = await targetUser(c);
    const b = body(c);
    only(b, ['password']);
    await resetPassword(c.admin, user.id, text(b, 'password', { max: PASSWORD_MAX_LENGTH }));
    return reply({ id: user.id, mustChangePassword: true });
  });
  add('DELETE', '/users/:id', async (c) => {
    const user = await targetUser(c);
    await deleteUser(c.admin, user.id);
    return reply({ id: user.id, deleted: true });
  });

  // --- keys
  add('GET', '/keys', async (c) => {
    const accountId = scope(self(c), param(c.req.query, 'accountId'), 'read');
    return reply((await listKeys(c.admin, accountId)).map(keyView));
  });
  add('POST', '/keys', async (c) => {
    const p = self(c);
    const b = body(c);
    only(b, ['accountId', 'name', 'hostnames', 'plan', 'challengePolicy', 'rateLimit']);
    const account = await ownAccount(c, text(b, 'accountId', { max: 64, optional: true }), 'manage');
    const plan = text(b, 'plan', { max: 64, optional: true });
    // A plan other than the default is the operator's choice (plans are what accounts pay for).
    if (plan !== undefined) needRole(p, 'root', null);
    const { key, secret } = await createKey(c.admin, {
      accountId: account.id, hostnames: strings(b, 'hostnames', 100, 300) ?? [], name: text(b, 'name', { min: 0, optional: true }),
      ...(plan !== undefined ? { plan } : {}),
      ...(b.challengePolicy !== undefined ? { challengePolicy: b.challengePolicy } : {}),
      ...(b.rateLimit !== undefined ? { rateLimit: b.rateLimit } : {}),
    });
    return reply({ ...keyView(key), secret }, 201);
  });
  const keyFor = async (c: Call, need: Need) => {
    const key = await getKey(c.admin, id(c));
    visible(self(c), key.accountId, `key ${id(c).slice(0, 64)}`);
    needRole(self(c), need, key.accountId);
    return key;
  };
  add('GET', '/keys/:id', async (c) => reply(keyView(await keyFor(c, 'read'))));
  add('PATCH', '/keys/:id', async (c) => {
    const key = await keyFor(c, 'manage');
    const b = body(c);
    only(b, ['name', 'hostnames', 'plan', 'challengePolicy', 'rateLimit']);
    const plan = text(b, 'plan', { max: 64, optional: true });
    if (plan !== undefined) needRole(self(c), 'root', null);
    const hostnames = strings(b, 'hostnames', 100, 300);
    const name = text(b, 'name', { min: 0, optional: true });
    return reply(keyView(await updateKey(c.admin, key.id, {
      ...(name !== undefined ? { name } : {}), ...(hostnames !== undefined ? { hostnames } : {}), ...(plan !== undefined ? { plan } : {}),
      ...(b.challengePolicy !== undefined ? { challengePolicy: b.challengePolicy } : {}),
      ...(b.rateLimit !== undefined ? { rateLimit: b.rateLimit } : {}),
    })));
  });
  add('POST', '/keys/:id/revoke', async (c) => {
    const key = await keyFor(c, 'manage');
    await revokeKey(c.admin, key.id);
    return reply(keyView(await getKey(c.admin, key.id)));
  });
  add('POST', '/keys/:id/rotate', async (c) => {
    const key = await keyFor(c, 'manage');
    const secret = await rotateKey(c.admin, key.id);
    return reply({ ...keyView(await getKey(c.admin, key.id)), secret });
  });
  add('GET', '/keys/:id/audit', async (c) => reply(await keyHistory(c.admin, (await keyFor(c, 'read')).id)));
  add('GET', '/keys/:id/usage', async (c) => {
    const key = await keyFor(c, 'read');
    return reply(await usageOfKey(c.admin, key.id, key.accountId, param(c.req.query, 'month', 7)));
  });
  add('POST', '/hostnames/release', async (c) => {
    needRole(self(c), 'root', null);
    const b = body(c);
    only(b, ['hostname']);
    return reply(await releaseKeyHostname(c.admin, text(b, 'hostname', { max: 300 })));
  });
  add('POST', '/hostnames/reassign', async (c) => {
    needRole(self(c), 'root', null);
    const b = body(c);
    only(b, ['hostname', 'apiKey']);
    return reply(await reassignKeyHostname(c.admin, text(b, 'hostname', { max: 300 }), text(b, 'apiKey', { max: 64 })));
  });

  // --- plans
  add('GET', '/plans', async (c) => reply(await listAllPlans(c.admin)));
  add('PUT', '/plans/:id', async (c) => {
    needRole(self(c), 'root', null);
    const b = body(c);
    only(b, ['requestLimit']);
    if (!('requestLimit' in b)) throw new PalisadeError('INVALID_PARAMETER', 'requestLimit is needed (a number, or null for unlimited)');
    const limit = b.requestLimit === null ? null : num(b, 'requestLimit')!;
    return reply(await setPlan(c.admin, id(c), limit));
  });

}
