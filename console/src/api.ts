// The admin API as the console calls it: same origin, the session in its HttpOnly cookie, the CSRF
// token (from /me or login) in X-CSRF-Token on every write. Paths are relative to the service's
// base path, read from where the console itself is served (…/app/).
export const BASE = location.pathname.replace(/\/app(\/.*)?$/, '');
export const API = `${BASE}/api/admin`;

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Messages for answers that carry only a code. */
const MESSAGES: Record<string, string> = {
  LOGIN_FAILED: 'Wrong username or password.',
  RATE_LIMITED: 'Too many attempts: wait a while and try again.',
  SESSION_REQUIRED: 'Your session has ended: log in again.',
  FORBIDDEN: 'Your role may not do this.',
  CSRF_INVALID: 'The request was refused (CSRF): reload the page.',
  LOGIN_DISABLED: 'Password login is disabled on this service.',
  ADMIN_IP_FORBIDDEN: 'The console is not available from this address.',
  NOT_FOUND: 'Not found.',
  INVALID_PARAMETER: 'A value is not valid.',
};

let csrf: string | null = null;
export const setCsrf = (token: string | null) => { csrf = token; };

/** Called when a request finds the session gone (the app returns to the login page). */
let onSessionLost: () => void = () => {};
export const whenSessionLost = (fn: () => void) => { onSessionLost = fn; };

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf !== null) headers['x-csrf-token'] = csrf;
  const res = await fetch(`${API}${path}`, {
    method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data: any = null;
  try { data = text === '' ? null : JSON.parse(text); } catch { data = { error: 'BAD_RESPONSE', message: text.slice(0, 200) }; }
  if (!res.ok) {
    const code = String(data?.error ?? 'ERROR');
    const err = new ApiError(res.status, code, data?.message ?? MESSAGES[code] ?? `${code} (HTTP ${res.status})`);
    if (res.status === 401 && data?.error === 'SESSION_REQUIRED' && path !== '/me') onSessionLost();
    throw err;
  }
  if (data && typeof data.csrfToken === 'string') csrf = data.csrfToken;
  return data as T;
}

export interface User {
  id: string; username: string; isRoot: boolean; accountId: string | null; role: 'root' | 'admin' | 'member' | 'read-only';
  mustChangePassword: boolean; totpEnabled: boolean; disabled: boolean; createdAt: string; lastLoginAt: string | null;
}
export interface Account { id: string; name: string; isDefault: boolean; generated: boolean; active: boolean; createdAt: string }
export interface Me { user: User; account: Account | null; csrfToken: string }
export interface Key {
  id: string; accountId: string; name: string; hostnames: string[]; plan: string; requestLimit: number | null;
  challengePolicy: Record<string, unknown> | null; rateLimit: string | null; enabled: boolean; freeHostname: string | null;
  createdAt: string; revokedAt: string | null; lastUsedAt: string | null; secret?: string;
}
export interface Plan { name: string; requestLimit: number | null }
export interface StatsRow { bucket: number; requests: number; verifications: number; failures: number; good: number; neutral: number; bad: number }
export interface LogRow {
  id: string; time: string; apiKeyId: string | null; accountId: string | null; ip: string | null; method: string; path: string;
  status: number; durationMs: number; country: string | null; threats: string | null; classification: string | null;
}

/** What the signed-in user may do in an account (the API enforces the same). */
export function can(user: User, need: 'read' | 'write' | 'manage' | 'root', accountId: string | null): boolean {
  if (user.isRoot) return true;
  if (need === 'root' || accountId === null || accountId !== user.accountId) return false;
  if (need === 'read') return true;
  if (need === 'write') return user.role === 'member' || user.role === 'admin';
  return user.role === 'admin';
}
