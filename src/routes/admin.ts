// The admin API under /api/admin/ (docs/admin.md): login and sessions, then accounts, users, API
// keys, plans, usage, request logs, the audit log, training data, spam submissions and the
// effective configuration, each route with the roles that may use it. Every request passes
// APP_IP_WHITELIST; every route but login needs a session (the HttpOnly cookie); every write needs
// the session's CSRF token in X-CSRF-Token; a user whose password must change can only change it.
// This file holds that frame; the routes are in admin-session.ts, admin-manage.ts and
// admin-data.ts, the shared parts in admin-kit.ts. The work itself is the admin domain's
// (src/admin/), which the CLI shares.
import type { Config } from '../config/index.js';
import type { Sql } from '../db/client.js';
import { ensureDefaultAccount, findAccount } from '../db/accounts.js';
import { findUserById, type User } from '../db/users.js';
import { PalisadeError, errorBodyOf } from '../errors.js';
import type { Router } from '../http/router.js';
import type { Reply, RequestContext } from '../http/types.js';
import type { KeySecrets } from '../keys/secrets.js';
import type { Logger } from '../log.js';
import { ipMatches, type RateRule } from '../parse.js';
import type { StateStore } from '../store/state-store.js';
import { retryAfterSeconds } from '../abuse/rate-limited.js';
import { accountView, getAccount } from '../admin/accounts.js';
import { prepareDummyHash } from '../admin/auth/passwords.js';
import { createSessions, csrfMatches, sessionCookie, sessionTokenOf } from '../admin/auth/sessions.js';
import { type AdminContext } from '../admin/context.js';
import { userView } from '../admin/users.js';
import { type AdminRoute, type Call, compile, errorReply, type Kit, type Need, needRole, type Principal, refuseCrossSite, type RouteFn, toPalisade } from './admin-kit.js';
import { sessionRoutes } from './admin-session.js';
import { manageRoutes } from './admin-manage.js';
import { dataRoutes } from './admin-data.js';

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

export function registerAdminRoutes(router: Router, deps: AdminDeps): void {
  const { config, sql, store, logger } = deps;
  prepareDummyHash();
  const sessions = createSessions({ secret: config.secrets.JWT_SECRET, issuer: config.JWT_ISSUER, ttlSeconds: config.JWT_TTL / 1000 });
  const whitelist = config.APP_IP_WHITELIST;
  const cookiePath = `${config.APP_BASE_PATH}/`;
  const tls = Boolean(config.HTTP2_CERT && config.HTTP2_KEY);
  const secure = (req: RequestContext) => tls || req.headers['x-forwarded-proto'] === 'https';
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
    needRole(p, need, account.id);
    return account;
  };

  const routes: AdminRoute[] = [];
  const add = (method: string, path: string, fn: RouteFn, extra: Partial<AdminRoute> = {}) =>
    routes.push({ method, pattern: compile(path), fn, ...extra });

  const kit: Kit = {
    config, sql, store, logger, add, principal, newSession, me, adminOf, ownAccount, loginLimit, cookiePath, secure,
  };
  sessionRoutes(kit);
  manageRoutes(kit);
  dataRoutes(kit);

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

