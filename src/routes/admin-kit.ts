// The admin API's shared parts (src/routes/admin.ts builds them, the route groups use them): the
// answer headers, what a route needs (read, write, manage, root) and who may do it, the caller's
// account scope, cross-site refusals, and the Kit handed to each route group.
import type { Config } from '../config/index.js';
import type { Sql } from '../db/client.js';
import { type Role, type User } from '../db/users.js';
import { isPalisadeError, PalisadeError, errorBodyOf } from '../errors.js';
import type { Reply, RequestContext } from '../http/types.js';
import type { Logger } from '../log.js';
import { type RateRule } from '../parse.js';
import type { StateStore } from '../store/state-store.js';
import { type SessionClaims } from '../admin/auth/sessions.js';
import { type AdminContext, AdminError } from '../admin/context.js';
import { object } from '../admin/input.js';
import type { Account } from '../db/accounts.js';

/** Headers of every admin API answer. */
export const API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
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
export type Need = 'read' | 'write' | 'manage' | 'root';

export interface Principal {
  readonly user: User;
  readonly claims: SessionClaims;
  readonly root: boolean;
}

export interface Call {
  readonly req: RequestContext;
  readonly params: readonly string[];
  /** null only on public routes (login). */
  readonly p: Principal | null;
  readonly admin: AdminContext;
}

export type RouteFn = (c: Call) => Promise<Reply>;

export interface AdminRoute {
  readonly method: string;
  readonly pattern: RegExp;
  readonly fn: RouteFn;
  /** No session needed (login). */
  readonly public?: boolean;
  /** Allowed while the user must change the password. */
  readonly beforePasswordChange?: boolean;
}

export const reply = (body: unknown, status = 200, headers?: Record<string, string>): Reply =>
  ({ status, body: JSON.stringify(body), headers: headers ? { ...API_HEADERS, ...headers } : API_HEADERS });

export function errorReply(err: PalisadeError): Reply {
  const headers: Record<string, string> = { ...API_HEADERS };
  if (err.retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(err.retryAfter)));
  return { status: err.statusCode, body: errorBodyOf(err), headers };
}

export function toPalisade(err: unknown): PalisadeError | null {
  if (isPalisadeError(err)) return err;
  if (err instanceof AdminError) return new PalisadeError(err.code, err.message);
  return null;
}

/**
 * Writes (login included) come from the console's own pages: a browser names another site in Origin
 * or Sec-Fetch-Site, and a form cannot send application/json. This stops login CSRF, where the
 * session cookie does not exist yet; the CSRF token guards every other write.
 */
export function refuseCrossSite(req: RequestContext): void {
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
export function can(p: Principal, need: Need, accountId: string | null): boolean {
  if (p.root) return true;
  if (need === 'root' || accountId === null || accountId !== p.user.accountId) return false;
  const role = p.user.role as Role;
  if (need === 'read') return true;
  if (need === 'write') return role === 'member' || role === 'admin';
  return role === 'admin';
}

/** Refuses with FORBIDDEN unless `p` may do `need` in `accountId`. */
export function needRole(p: Principal, need: Need, accountId: string | null): void {
  if (!can(p, need, accountId)) throw new PalisadeError('FORBIDDEN', need === 'root' ? 'Only the root user may do this.' : `Your role may not do this in account ${accountId ?? '(all)'}.`);
}

/**
 * The account a list or write concerns: the `accountId` given (checked against the role), else the
 * user's own; root without one means every account (undefined).
 */
export function scope(p: Principal, given: string | undefined, need: Need): string | undefined {
  if (given === undefined) {
    if (p.root) return undefined;
    needRole(p, need, p.user.accountId);
    return p.user.accountId!;
  }
  needRole(p, need, given);
  return given;
}

/** A resource of `accountId` that `p` may not even read is answered as missing. */
export function visible(p: Principal, accountId: string | null, what: string): void {
  if (!can(p, 'read', accountId)) throw new PalisadeError('NOT_FOUND', `no ${what}`);
}

export function compile(path: string): RegExp {
  return new RegExp(`^${path.replace(/:[a-z]+/g, '([^/]+)')}$`);
}

/** What the route groups share: the dependencies, the route table, and the session helpers. */
export interface Kit {
  readonly config: Config;
  readonly sql: Sql;
  readonly store: StateStore;
  readonly logger: Logger;
  /** Adds a route (path relative to /api/admin, `:name` segments as parameters). */
  add(method: string, path: string, fn: RouteFn, extra?: Partial<AdminRoute>): void;
  /** The session of the request, or SESSION_REQUIRED. */
  principal(req: RequestContext): Promise<Principal>;
  /** A new session cookie for the user (at its current session version) and its claims. */
  newSession(req: RequestContext, user: User): Promise<{ cookie: string; claims: SessionClaims }>;
  /** The answer of login, /me and /session. */
  me(user: User, csrf: string): Promise<unknown>;
  /** The domain context acting as `user` from the request's IP. */
  adminOf(req: RequestContext, user: User | null): AdminContext;
  /** The account named (checked against the role), else the user's own; root's default is the default account. */
  ownAccount(c: Call, given: string | undefined, need: Need): Promise<Account>;
  /** 429 past a login rule; `count` adds a failed attempt. */
  loginLimit(rule: RateRule | null, key: string, count: boolean): Promise<void>;
  /** Cookie attributes: the path and whether the request came over HTTPS. */
  readonly cookiePath: string;
  secure(req: RequestContext): boolean;
}

/** The caller of a route that needs a session. */
export const self = (c: Call): Principal => c.p!;
/** The body as a JSON object (INVALID_JSON, UNSUPPORTED_MEDIA_TYPE, INVALID_PARAMETER). */
export const body = (c: Call) => object(c.req.json());
/** The `i`-th path parameter. */
export const id = (c: Call, i = 0): string => c.params[i]!;
