// The admin API's session routes (docs/admin.md): login with its rate limits and constant-time
// failures, logout, /me, /session, the password change and two-factor login.
import { findAccount } from '../db/accounts.js';
import { claimTotpStep, findUserById, findUserByName, touchUserLogin, updateUser as updateUserRow } from '../db/users.js';
import { isPalisadeError, PalisadeError } from '../errors.js';
import { ipKey } from '../store/limit-key.js';
import { PASSWORD_MAX_LENGTH, verifyPassword } from '../admin/auth/passwords.js';
import { clearedSessionCookie } from '../admin/auth/sessions.js';
import { newTotpSecret, totpStep, totpUri } from '../admin/auth/totp.js';
import { audit } from '../admin/context.js';
import { bool, only, text } from '../admin/input.js';
import { changeOwnPassword } from '../admin/users.js';
import { body, type Kit, reply, self } from './admin-kit.js';

export function sessionRoutes(kit: Kit): void {
  const { add, config, sql, logger, principal, newSession, me, adminOf, loginLimit, cookiePath, secure } = kit;
  const ipRule = config.ADMIN_LOGIN_RATE_LIMIT;
  const userRule = config.ADMIN_LOGIN_USER_RATE_LIMIT;
  // --- sessions
  add('POST', '/login', async (c) => {
    if (!config.PASSWORD_LOGIN_ENABLED) throw new PalisadeError('LOGIN_DISABLED');
    const b = body(c);
    only(b, ['username', 'password', 'totp']);
    const username = text(b, 'username', { max: 64 }).trim().toLowerCase();
    const password = text(b, 'password', { max: PASSWORD_MAX_LENGTH });
    const code = text(b, 'totp', { max: 16, optional: true });
    const ipLimitKey = `admin-login|${ipKey(c.req.ip)}`;
    const userLimitKey = `admin-login-user|${username}`;
    await loginLimit(ipRule, ipLimitKey, false);
    await loginLimit(userRule, userLimitKey, false);
    // The password is checked whether or not the user exists (a dummy hash otherwise): the same time either way.
    const user = await findUserByName(sql, username);
    const ok = await verifyPassword(user?.passwordHash ?? null, password);
    let accountActive = true;
    if (ok && user !== null && !user.isRoot) accountActive = (await findAccount(sql, user.accountId!))?.active === true;
    if (!ok || user === null || user.disabled || !accountActive) {
      await loginLimit(ipRule, ipLimitKey, true).catch(() => undefined);
      await loginLimit(userRule, userLimitKey, true).catch(() => undefined);
      logger.info({ username, ip: c.req.ip }, 'admin login failed');
      throw new PalisadeError('LOGIN_FAILED');
    }
    if (user.totpEnabled) {
      if (code === undefined) throw new PalisadeError('TOTP_REQUIRED');
      const step = totpStep(user.totpSecret!, code);
      // A code is accepted once, even within its 30 seconds.
      if (step === null || !(await claimTotpStep(sql, user.id, step))) {
        await loginLimit(userRule, userLimitKey, true).catch(() => undefined);
        throw new PalisadeError('LOGIN_FAILED', 'The one-time code is not valid.');
      }
    }
    await touchUserLogin(sql, user.id);
    await audit(adminOf(c.req, user), sql, 'user.login', user.id, user.accountId);
    const { cookie, claims } = await newSession(c.req, user);
    return reply(await me(user, claims.csrf), 200, { 'set-cookie': cookie });
  }, { public: true });

  add('POST', '/logout', async (c) => {
    const p = self(c);
    await sql.begin(async (tx) => {
      await updateUserRow(tx, p.user.id, { endSessions: true });
      await audit(c.admin, tx, 'user.logout', p.user.id, p.user.accountId);
    });
    return reply({ loggedOut: true }, 200, { 'set-cookie': clearedSessionCookie({ path: cookiePath, secure: secure(c.req) }) });
  }, { beforePasswordChange: true });

  add('GET', '/me', async (c) => reply(await me(self(c).user, self(c).claims.csrf)), { beforePasswordChange: true });

  // The console's first question: 200 either way ({user: null} without a valid session), so that a
  // visitor who is not logged in sees no failed request.
  add('GET', '/session', async (c) => {
    try {
      const p = await principal(c.req);
      return reply(await me(p.user, p.claims.csrf));
    } catch (err) {
      if (isPalisadeError(err) && err.code === 'SESSION_REQUIRED') return reply({ user: null, account: null, csrfToken: null });
      throw err;
    }
  }, { public: true });

  add('POST', '/me/password', async (c) => {
    const p = self(c);
    const b = body(c);
    only(b, ['currentPassword', 'newPassword']);
    const current = text(b, 'currentPassword', { max: PASSWORD_MAX_LENGTH });
    const next = text(b, 'newPassword', { max: PASSWORD_MAX_LENGTH });
    if (!(await verifyPassword(p.user.passwordHash, current))) throw new PalisadeError('LOGIN_FAILED', 'The current password is wrong.');
    if (current === next) throw new PalisadeError('INVALID_PARAMETER', 'The new password must differ from the current one.');
    await changeOwnPassword(c.admin, p.user, next);
    // Every session ended with the change; this one goes on with a new token.
    const user = (await findUserById(sql, p.user.id))!;
    const { cookie, claims } = await newSession(c.req, user);
    return reply(await me(user, claims.csrf), 200, { 'set-cookie': cookie });
  }, { beforePasswordChange: true });

  add('POST', '/me/totp/setup', async (c) => {
    const p = self(c);
    if (p.user.totpEnabled) throw new PalisadeError('INVALID_PARAMETER', 'Two-factor login is already on; turn it off first.');
    const secret = newTotpSecret();
    await updateUserRow(sql, p.user.id, { totpSecret: secret });
    return reply({ secret, uri: totpUri(secret, p.user.username, config.JWT_ISSUER) });
  });

  add('POST', '/me/totp', async (c) => {
    const p = self(c);
    const b = body(c);
    only(b, ['code', 'enabled', 'password']);
    const enabled = bool(b, 'enabled');
    if (enabled === undefined) throw new PalisadeError('INVALID_PARAMETER', 'enabled must be true or false');
    let step: number | null = null;
    if (enabled) {
      if (p.user.totpSecret === null) throw new PalisadeError('INVALID_PARAMETER', 'Call POST /api/admin/me/totp/setup first.');
      step = totpStep(p.user.totpSecret, b.code);
      if (step === null) throw new PalisadeError('INVALID_PARAMETER', 'code is not a valid one-time code of the secret.');
    } else {
      const password = text(b, 'password', { max: PASSWORD_MAX_LENGTH });
      if (!(await verifyPassword(p.user.passwordHash, password))) throw new PalisadeError('LOGIN_FAILED', 'The password is wrong.');
    }
    await sql.begin(async (tx) => {
      await updateUserRow(tx, p.user.id, enabled ? { totpEnabled: true } : { totpEnabled: false, totpSecret: null });
      // The code that turned it on cannot log in as well.
      if (step !== null) await claimTotpStep(tx, p.user.id, step);
      await audit(c.admin, tx, enabled ? 'user.totp-on' : 'user.totp-off', p.user.id, p.user.accountId);
    });
    return reply({ totpEnabled: enabled });
  });

}
