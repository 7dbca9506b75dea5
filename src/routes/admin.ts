// The admin API under /api/admin/ (docs/admin.md): login and sessions, then accounts, users, API
// keys, plans, usage, request logs, the audit log, training data, spam submissions and the
// effective configuration, each route with the roles that may use it. Every request passes
// APP_IP_WHITELIST; every route but login needs a session (the HttpOnly cookie); every write needs
// the session's CSRF token in X-CSRF-Token; a user whose password must change can only change it.
// The work itself is the admin domain's (src/admin/), which the CLI shares.
import { describeConfig } from '../config/describe.js';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/client.js';
import { ensureDefaultAccount, findAccount } from '../db/accounts.js';
import { findUserById, findUserByName, touchUserLogin, updateUser as updateUserRow, type Role, type User } from '../db/users.js';
import { isPalisadeError, PalisadeError, errorBodyOf } from '../errors.js';
import type { Router } from '../http/router.js';
import type { Reply, RequestContext } from '../http/types.js';
import type { KeySecrets } from '../keys/secrets.js';
import type { Logger } from '../log.js';
import { threatsStatus } from '../intel/threats-status.js';
import { ipMatches, type RateRule } from '../parse.js';
import { ipKey } from '../store/limit-key.js';
import type { StateStore } from '../store/state-store.js';
import { retryAfterSeconds } from '../abuse/rate-limited.js';
import { accountView, createAccount, getAccount, listAllAccounts, renameAccount, setAccountStatus } from '../admin/accounts.js';
import { PASSWORD_MAX_LENGTH, prepareDummyHash, verifyPassword } from '../admin/auth/passwords.js';
import {
  clearedSessionCookie, createSessions, csrfMatches, type SessionClaims, sessionCookie, sessionTokenOf,
} from '../admin/auth/sessions.js';
import { newTotpSecret, totpUri, totpValid } from '../admin/auth/totp.js';
import { type AdminContext, AdminError, audit } from '../admin/context.js';
import {
  addTraining, auditLog, getSubmission, listSubmissions, listTraining, logView, promoteSubmission, removeTraining, requestLogs,
  stats, submissionView, trainingView, usageOfKey, usageSummary,
} from '../admin/data.js';
import { bool, dateParam, intParam, num, object, only, param, strings, text } from '../admin/input.js';
import {
  createKey, getKey, keyHistory, keyView, listKeys, reassignKeyHostname, releaseKeyHostname, revokeKey, rotateKey, updateKey,
} from '../admin/keys.js';
import { listAllPlans, setPlan } from '../admin/plans.js';
import { changeOwnPassword, createUser, deleteUser, getUser, listUsers, resetPassword, updateUser, userView } from '../admin/users.js';

export const ADMIN_API_PREFIX = '/api/admin';

export interface AdminDeps {
  readonly config: Config;
  readonly sql: Sql;
  readonly secrets: KeySecrets;
  readonly store: StateStore;
  readonly logger: Logger;
  /** Every process's log lines (JSON), for the live request log; returns the unsubscribe function. */
  subscribeLogs(onLine: (jsonLine: string) => void): Promise<() => void>;
}

/** Headers of every admin API answer. */
const API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
});

/**
 * What a route may need: read (any role of the account), write (member or admin: training data,
 * spam submissions), manage (admin: API keys, users, the account's name), root (accounts, plans,
 * hostnames, settings, the live log). As in ALTCHA's console, keys are the account admin's.
 */
type Need = 'read' | 'write' | 'manage' | 'root';

interface Principal {
  readonly user: User;
  readonly claims: SessionClaims;
  readonly root: boolean;
}

interface Call {
  readonly req: RequestContext;
  readonly params: readonly string[];
  /** null only on public routes (login). */
  readonly p: Principal | null;
  readonly admin: AdminContext;
}

type RouteFn = (c: Call) => Promise<Reply>;

interface AdminRoute {
  readonly method: string;
  readonly pattern: RegExp;
  readonly fn: RouteFn;
  /** No session needed (login). */
  readonly public?: boolean;
  /** Allowed while the user must change the password. */
  readonly beforePasswordChange?: boolean;
}

const reply = (body: unknown, status = 200, headers?: Record<string, string>): Reply =>
  ({ status, body: JSON.stringify(body), headers: headers ? { ...API_HEADERS, ...headers } : API_HEADERS });

function errorReply(err: PalisadeError): Reply {
  const headers: Record<string, string> = { ...API_HEADERS };
  if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(err.retryAfter)));
  return { status: err.statusCode, body: errorBodyOf(err), headers };
}

function toPalisade(err: unknown): PalisadeError | null {
  if (isPalisadeError(err)) return err;
  if (err instanceof AdminError) return new PalisadeError(err.code, err.message);
  return null;
}

/**
 * Writes (login included) come from the console's own pages: a browser names another site in Origin
 * or Sec-Fetch-Site, and a form cannot send application/json. This stops login CSRF, where the
 * session cookie does not exist yet; the CSRF token guards every other write.
 */
function refuseCrossSite(req: RequestContext): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw new PalisadeError('CSRF_INVALID', 'Cross-site requests are refused.');
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      throw new PalisadeError('CSRF_INVALID', 'Cross-site requests are refused.');
    }
    if (host !== (req.headers.host ?? '')) throw new PalisadeError('CSRF_INVALID', 'Cross-site requests are refused.');
  }
  const type = req.headers['content-type'];
  if (req.body !== null && req.body.length > 0 && (type === undefined || type.split(';', 1)[0]!.trim().toLowerCase() !== 'application/json')) {
    throw new PalisadeError('UNSUPPORTED_MEDIA_TYPE');
  }
}

/** May `p` do `need` in `accountId` (null: across accounts, root only)? */
function can(p: Principal, need: Need, accountId: string | null): boolean {
  if (p.root) return true;
  if (need === 'root' || accountId === null || accountId !== p.user.accountId) return false;
  const role = p.user.role as Role;
  if (need === 'read') return true;
  if (need === 'write') return role === 'member' || role === 'admin';
  return role === 'admin';
}

/** Refuses with FORBIDDEN unless `p` may do `need` in `accountId`. */
function require(p: Principal, need: Need, accountId: string | null): void {
  if (!can(p, need, accountId)) throw new PalisadeError('FORBIDDEN', need === 'root' ? 'Only the root user may do this.' : `Your role may not do this in account ${accountId ?? '(all)'}.`);
}

/**
 * The account a list or write concerns: the `accountId` given (checked against the role), else the
 * user's own; root without one means every account (undefined).
 */
function scope(p: Principal, given: string | undefined, need: Need): string | undefined {
  if (given === undefined) {
    if (p.root) return undefined;
    require(p, need, p.user.accountId);
    return p.user.accountId!;
  }
  require(p, need, given);
  return given;
}

/** A resource of `accountId` that `p` may not even read is answered as missing. */
function visible(p: Principal, accountId: string | null, what: string): void {
  if (!can(p, 'read', accountId)) throw new PalisadeError('NOT_FOUND', `no ${what}`);
}

function compile(path: string): RegExp {
  return new RegExp(`^${path.replace(/:[a-z]+/g, '([^/]+)')}$`);
}

export function registerAdminRoutes(router: Router, deps: AdminDeps): void {
  const { config, sql, store, logger } = deps;
  prepareDummyHash();
  const sessions = createSessions({ secret: config.secrets.JWT_SECRET, issuer: config.JWT_ISSUER, ttlSeconds: config.JWT_TTL / 1000 });
  const whitelist = config.APP_IP_WHITELIST;
  const cookiePath = `${config.APP_BASE_PATH}/`;
  const tls = Boolean(config.HTTP2_CERT && config.HTTP2_KEY);
  const secure = (req: RequestContext) => tls || req.headers['x-forwarded-proto'] === 'https';
  const ipRule: RateRule | null = config.ADMIN_LOGIN_RATE_LIMIT;
  const userRule: RateRule | null = config.ADMIN_LOGIN_USER_RATE_LIMIT;
  const settings = { POW_MAX_MEMORY: config.POW_MAX_MEMORY, DEFAULT_ACCOUNT_NAME: config.DEFAULT_ACCOUNT_NAME, PASSWORD_MIN_LENGTH: config.PASSWORD_MIN_LENGTH, TZ: config.TZ };
  const adminOf = (req: RequestContext, user: User | null): AdminContext =>
    ({ sql, secrets: deps.secrets, settings, actor: { name: user === null ? 'anonymous' : `admin:${user.username}`, ip: req.ip } });

  const allowed = (req: RequestContext) => whitelist.empty || ipMatches(whitelist, req.ip);

  /** The session of the request, or SESSION_REQUIRED. */
  const principal = async (req: RequestContext): Promise<Principal> => {
    const token = sessionTokenOf(req.headers.cookie);
    const claims = token === null ? null : await sessions.verify(token);
    const user = claims === null ? null : await findUserById(sql, claims.userId);
    if (claims === null || user === null || user.disabled || user.sessionVersion !== claims.sessionVersion) throw new PalisadeError('SESSION_REQUIRED');
    if (!user.isRoot) {
      const account = await findAccount(sql, user.accountId!);
      if (account === null || !account.active) throw new PalisadeError('SESSION_REQUIRED', 'The account of this user is deactivated.');
    }
    return { user, claims, root: user.isRoot };
  };

  const newSession = async (req: RequestContext, user: User) => {
    const { token, claims } = await sessions.issue(user.id, user.sessionVersion);
    return { cookie: sessionCookie(token, { path: cookiePath, maxAgeSeconds: sessions.ttlSeconds, secure: secure(req) }), claims };
  };

  const me = async (user: User, csrf: string) => {
    const account = user.accountId === null ? null : await findAccount(sql, user.accountId);
    return { user: userView(user), account: account === null ? null : accountView(account), csrfToken: csrf };
  };

  /**
   * 429 when `rule` is past its limit for `key`. Failed attempts are counted (`count`); an attempt
   * refused here is counted too, which starts the rule's block (a peek alone never would).
   */
  const loginLimit = async (rule: RateRule | null, key: string, count: boolean) => {
    if (rule === null) return;
    let r = count ? await store.hit(key, rule) : await store.peek(key, rule);
    if (!r.allowed && !count) r = await store.hit(key, rule);
    if (!r.allowed) throw new PalisadeError('RATE_LIMITED', undefined, retryAfterSeconds(r, Date.now()));
  };

  /** The account named (checked against the role), else the user's own; root's default is the default account. */
  const ownAccount = async (c: Call, given: string | undefined, need: Need) => {
    const p = c.p!;
    const account = given !== undefined ? await getAccount(c.admin, given)
      : p.user.accountId !== null ? await getAccount(c.admin, p.user.accountId)
        : await ensureDefaultAccount(sql, config.DEFAULT_ACCOUNT_NAME);
    require(p, need, account.id);
    return account;
  };

  const routes: AdminRoute[] = [];
  const add = (method: string, path: string, fn: RouteFn, extra: Partial<AdminRoute> = {}) =>
    routes.push({ method, pattern: compile(path), fn, ...extra });
  const self = (c: Call) => c.p!;
  const body = (c: Call) => object(c.req.json());
  const id = (c: Call, i = 0) => c.params[i]!;

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
      if (!totpValid(user.totpSecret!, code)) {
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
    if (enabled) {
      if (p.user.totpSecret === null) throw new PalisadeError('INVALID_PARAMETER', 'Call POST /api/admin/me/totp/setup first.');
      if (!totpValid(p.user.totpSecret, b.code)) throw new PalisadeError('INVALID_PARAMETER', 'code is not a valid one-time code of the secret.');
    } else {
      const password = text(b, 'password', { max: PASSWORD_MAX_LENGTH });
      if (!(await verifyPassword(p.user.passwordHash, password))) throw new PalisadeError('LOGIN_FAILED', 'The password is wrong.');
    }
    await sql.begin(async (tx) => {
      await updateUserRow(tx, p.user.id, enabled ? { totpEnabled: true } : { totpEnabled: false, totpSecret: null });
      await audit(c.admin, tx, enabled ? 'user.totp-on' : 'user.totp-off', p.user.id, p.user.accountId);
    });
    return reply({ totpEnabled: enabled });
  });

  // --- accounts
  add('GET', '/accounts', async (c) => {
    const p = self(c);
    const all = await listAllAccounts(c.admin);
    return reply(all.filter((a) => can(p, 'read', a.id)).map(accountView));
  });
  add('POST', '/accounts', async (c) => {
    require(self(c), 'root', null);
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
    if (name !== undefined) require(p, 'manage', account.id);
    if (active !== undefined) require(p, 'root', null);
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
    require(p, 'manage', account.id);
    const user = await createUser(c.admin, {
      username: text(b, 'username', { max: 64 }), password: text(b, 'password', { max: PASSWORD_MAX_LENGTH }), accountId: account.id, role: text(b, 'role', { max: 16 }),
    });
    return reply(userView(user), 201);
  });
  const targetUser = async (c: Call) => {
    const user = await getUser(c.admin, id(c));
    visible(self(c), user.accountId, 'user');
    require(self(c), 'manage', user.accountId);
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
    if (plan !== undefined) require(p, 'root', null);
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
    require(self(c), need, key.accountId);
    return key;
  };
  add('GET', '/keys/:id', async (c) => reply(keyView(await keyFor(c, 'read'))));
  add('PATCH', '/keys/:id', async (c) => {
    const key = await keyFor(c, 'manage');
    const b = body(c);
    only(b, ['name', 'hostnames', 'plan', 'challengePolicy', 'rateLimit']);
    const plan = text(b, 'plan', { max: 64, optional: true });
    if (plan !== undefined) require(self(c), 'root', null);
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
    require(self(c), 'root', null);
    const b = body(c);
    only(b, ['hostname']);
    return reply(await releaseKeyHostname(c.admin, text(b, 'hostname', { max: 300 })));
  });
  add('POST', '/hostnames/reassign', async (c) => {
    require(self(c), 'root', null);
    const b = body(c);
    only(b, ['hostname', 'apiKey']);
    return reply(await reassignKeyHostname(c.admin, text(b, 'hostname', { max: 300 }), text(b, 'apiKey', { max: 64 })));
  });

  // --- plans
  add('GET', '/plans', async (c) => reply(await listAllPlans(c.admin)));
  add('PUT', '/plans/:id', async (c) => {
    require(self(c), 'root', null);
    const b = body(c);
    only(b, ['requestLimit']);
    if (!('requestLimit' in b)) throw new PalisadeError('INVALID_PARAMETER', 'requestLimit is needed (a number, or null for unlimited)');
    const limit = b.requestLimit === null ? null : num(b, 'requestLimit')!;
    return reply(await setPlan(c.admin, id(c), limit));
  });

  // --- usage, statistics, request logs, audit
  const keyFilter = async (c: Call): Promise<{ accountId: string | undefined; apiKeyId: string | undefined }> => {
    const apiKey = param(c.req.query, 'apiKey', 64);
    if (apiKey !== undefined) {
      const key = await getKey(c.admin, apiKey);
      visible(self(c), key.accountId, `key ${apiKey}`);
      return { accountId: key.accountId, apiKeyId: key.id };
    }
    return { accountId: scope(self(c), param(c.req.query, 'accountId', 64), 'read'), apiKeyId: undefined };
  };
  add('GET', '/usage', async (c) => {
    const accountId = scope(self(c), param(c.req.query, 'accountId', 64), 'read');
    return reply(await usageSummary(c.admin, accountId, param(c.req.query, 'month', 7)));
  });
  add('GET', '/stats', async (c) => {
    const unit = param(c.req.query, 'unit', 4) ?? 'hour';
    if (unit !== 'hour' && unit !== 'day') throw new PalisadeError('INVALID_PARAMETER', 'unit is hour or day');
    const span = intParam(c.req.query, 'span', 1, unit === 'hour' ? 24 * 14 : 366) ?? (unit === 'hour' ? 24 : 30);
    const f = await keyFilter(c);
    return reply(await stats(c.admin, { ...(f.accountId ? { accountId: f.accountId } : {}), ...(f.apiKeyId ? { apiKeyId: f.apiKeyId } : {}), unit, span }));
  });
  add('GET', '/logs', async (c) => {
    const q = c.req.query;
    const f = await keyFilter(c);
    const status = param(q, 'status', 3);
    let statusMin: number | undefined;
    let statusMax: number | undefined;
    if (status !== undefined) {
      const m = /^([1-5])(\d\d|xx)$/.exec(status);
      if (m === null) throw new PalisadeError('INVALID_PARAMETER', 'status is a code (404) or a class (4xx)');
      statusMin = m[2] === 'xx' ? Number(m[1]) * 100 : Number(status);
      statusMax = m[2] === 'xx' ? statusMin + 99 : statusMin;
    }
    const before = param(q, 'before', 20);
    if (before !== undefined && !/^\d{1,18}$/.test(before)) throw new PalisadeError('INVALID_PARAMETER', 'before is a log id');
    const rows = await requestLogs(c.admin, {
      ...(f.accountId ? { accountId: f.accountId } : {}), ...(f.apiKeyId ? { apiKeyId: f.apiKeyId } : {}),
      statusMin, statusMax, pathPrefix: param(q, 'path', 200), since: dateParam(q, 'since'), until: dateParam(q, 'until'),
      before, limit: intParam(q, 'limit', 1, 1000) ?? 100,
    });
    const items = rows.map(logView);
    return reply({ items, next: items.length === 0 ? null : items[items.length - 1]!.id, ttlSeconds: config.REQUEST_LOGS_TTL / 1000 });
  });
  add('GET', '/audit', async (c) => {
    const accountId = scope(self(c), param(c.req.query, 'accountId', 64), 'read');
    const before = param(c.req.query, 'before', 20);
    if (before !== undefined && !/^\d{1,18}$/.test(before)) throw new PalisadeError('INVALID_PARAMETER', 'before is an audit entry id');
    const items = await auditLog(c.admin, { ...(accountId ? { accountId } : {}), ...(before ? { before } : {}), limit: intParam(c.req.query, 'limit', 1, 1000) ?? 100 });
    return reply({ items, next: items.length === 0 ? null : items[items.length - 1]!.id });
  });

  // --- training data and spam submissions
  add('GET', '/training', async (c) => {
    const account = await ownAccount(c, param(c.req.query, 'accountId', 64), 'read');
    return reply((await listTraining(c.admin, account.id, param(c.req.query, 'group', 64))).map(trainingView));
  });
  add('POST', '/training', async (c) => {
    const b = body(c);
    only(b, ['accountId', 'text', 'group', 'threshold', 'weight']);
    const account = await ownAccount(c, text(b, 'accountId', { max: 64, optional: true }), 'write');
    const example = await addTraining(c.admin, {
      accountId: account.id, text: text(b, 'text', { max: 10_000 }), group: text(b, 'group', { max: 64, optional: true }),
      threshold: num(b, 'threshold'), weight: num(b, 'weight'),
    });
    return reply(trainingView(example), 201);
  });
  add('DELETE', '/training/:id', async (c) => {
    const account = await ownAccount(c, param(c.req.query, 'accountId', 64), 'write');
    await removeTraining(c.admin, account.id, id(c), account.name);
    return reply({ id: id(c), removed: true });
  });
  add('GET', '/submissions', async (c) => {
    const accountId = scope(self(c), param(c.req.query, 'accountId', 64), 'read');
    return reply((await listSubmissions(c.admin, accountId, intParam(c.req.query, 'limit', 1, 1000))).map(submissionView));
  });
  add('POST', '/submissions/:id/promote', async (c) => {
    const s = await getSubmission(c.admin, id(c));
    visible(self(c), s.accountId, 'spam submission');
    require(self(c), 'write', s.accountId);
    const b = body(c);
    only(b, ['group', 'threshold', 'weight']);
    const example = await promoteSubmission(c.admin, s, { group: text(b, 'group', { max: 64, optional: true }), threshold: num(b, 'threshold'), weight: num(b, 'weight') });
    return reply(trainingView(example), 201);
  });

  // --- threat sources (root): what `npm run cli -- threats status` prints (docs/threats.md)
  add('GET', '/threats', async (c) => {
    require(self(c), 'root', null);
    return reply(threatsStatus(config).data);
  });

  // --- the effective configuration (root)
  add('GET', '/settings', async (c) => {
    require(self(c), 'root', null);
    return reply({ version: config.version, variables: redactedConfig(config) });
  });

  const find = (method: string, path: string) => {
    let pathMatched = false;
    for (const r of routes) {
      const m = r.pattern.exec(path);
      if (m === null) continue;
      pathMatched = true;
      if (r.method === method || (method === 'HEAD' && r.method === 'GET')) return { route: r, params: m.slice(1) };
    }
    return pathMatched ? 'method' as const : null;
  };

  const handle = async (req: RequestContext): Promise<Reply> => {
    try {
      if (!allowed(req)) throw new PalisadeError('ADMIN_IP_FORBIDDEN');
      const sub = req.path.slice(ADMIN_API_PREFIX.length);
      const found = find(req.method, sub);
      if (found === null) throw new PalisadeError('NOT_FOUND');
      if (found === 'method') throw new PalisadeError('METHOD_NOT_ALLOWED');
      let params: string[];
      try {
        params = found.params.map((s) => decodeURIComponent(s));
      } catch {
        throw new PalisadeError('INVALID_PARAMETER', 'a path segment is not valid percent-encoding');
      }
      const { route } = found;
      if (req.method !== 'GET' && req.method !== 'HEAD') refuseCrossSite(req);
      let p: Principal | null = null;
      if (!route.public) {
        p = await principal(req);
        if (req.method !== 'GET' && req.method !== 'HEAD' && !csrfMatches(req.headers['x-csrf-token'], p.claims.csrf)) {
          throw new PalisadeError('CSRF_INVALID');
        }
        if (p.user.mustChangePassword && !route.beforePasswordChange) throw new PalisadeError('PASSWORD_CHANGE_REQUIRED');
      }
      return await route.fn({ req, params, p, admin: adminOf(req, p?.user ?? null) });
    } catch (err) {
      const e = toPalisade(err);
      if (e === null) throw err;
      return errorReply(e);
    }
  };

  router.addPrefix(`${ADMIN_API_PREFIX}/`, handle);

  // The live request log: the access-log lines of every process as Server-Sent Events (root only).
  router.addStream('GET', `${ADMIN_API_PREFIX}/logs/live`, async (req, stream) => {
    let denied: PalisadeError | null = null;
    try {
      if (!allowed(req)) throw new PalisadeError('ADMIN_IP_FORBIDDEN');
      const p = await principal(req);
      if (p.user.mustChangePassword) throw new PalisadeError('PASSWORD_CHANGE_REQUIRED');
      if (!p.root) throw new PalisadeError('FORBIDDEN', 'Only the root user may follow the live log.');
    } catch (err) {
      denied = toPalisade(err);
      if (denied === null) throw err;
    }
    if (denied !== null) {
      // A stream has begun with status 200: the refusal is one event, then the end.
      stream.write(`event: error\ndata: ${errorBodyOf(denied)}\n\n`);
      stream.end();
      return;
    }
    let unsubscribe: (() => void) | null = null;
    stream.onClose(() => unsubscribe?.());
    stream.write(': live request log\n\n');
    unsubscribe = await deps.subscribeLogs((line) => {
      if (!line.includes('"type":"access"')) return;
      if (!stream.write(`data: ${line}\n\n`)) {
        unsubscribe?.();
        stream.drop();
      }
    });
    if (stream.closed) unsubscribe();
  }, { contentType: 'text/event-stream' });
}

/** The configuration with secrets hidden and credentials in URLs masked. */
export function redactedConfig(config: Config): Record<string, unknown> {
  const out = describeConfig(config);
  for (const [name, value] of Object.entries(out)) {
    if (typeof value === 'string') out[name] = value.replace(/\/\/[^/@\s]+@/g, '//***@');
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      // Parsed values (rate rules, CIDR lists): their source text is enough.
      const v = value as Record<string, unknown>;
      out[name] = typeof v.source === 'string' || Array.isArray(v.source) ? v.source : String(JSON.stringify(v)).slice(0, 500);
    }
  }
  return out;
}
