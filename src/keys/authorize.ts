// Who may call what (PROTOCOL.md section 4), as functions over the RequestContext contract.
//
// Browser endpoints: `?apiKey=key_…` and the request's Origin (else Referer) host matching one of
// the key's hostnames (src/keys/hostnames.ts).
//
// Server endpoints: `Authorization: Bearer sec_…`, or `Authorization: Bearer key_…` with
//   X-Hmac-Signature      = hex(HMAC-SHA256(secret, salt + "\n" + METHOD + "\n" + path-with-query + "\n" + body))
//   X-Hmac-Signature-Salt = "<unix seconds>.<16 to 100 random characters [A-Za-z0-9_-]>"
// The salt carries its signing time so that a captured request cannot be replayed at all: it is
// accepted within ±5 minutes of that time and only once (claimSalt remembers it until the window
// closes plus CLAIM_CLOCK_SKEW). A salt without a time could be replayed once its claim expired.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { PalisadeError } from '../errors.js';
import { claimUntil, DEFAULT_CLOCK_SKEW_MS } from '../store/state-store.js';
import type { RequestContext } from '../http/types.js';
import { hostMatches, requestOrigin } from './hostnames.js';
import type { KeyCache } from './key-cache.js';
import { isKeyId, isSecret } from './secrets.js';
import type { ApiKey } from './types.js';

/** Salts are accepted this far from their time, in either direction. */
export const SIGNATURE_SALT_WINDOW_MS = 5 * 60_000;

const SALT = /^(\d{10})\.([A-Za-z0-9_-]{16,100})$/;
const SIGNATURE = /^[0-9a-fA-F]{64}$/;
const EMPTY = Buffer.alloc(0);
// A first curl usually forgets the header a browser always sends: say which one is missing.
const NO_ORIGIN = 'This API key lists hostnames: send the page\'s Origin header (or a Referer) naming one of them.';

/**
 * `?apiKey=` names an enabled key, and the origin is allowed for it. Throws API_KEY_REQUIRED,
 * API_KEY_INVALID or ORIGIN_NOT_ALLOWED (synchronously, or as a rejection once the key had to be
 * loaded). The key itself when this process's cached copy is fresh, else a Promise of it.
 */
export function authorizeBrowser(req: RequestContext, cache: KeyCache): ApiKey | Promise<ApiKey> {
  const id = req.query.get('apiKey');
  if (id === null || id === '') throw new PalisadeError('API_KEY_REQUIRED');
  if (!isKeyId(id)) throw new PalisadeError('API_KEY_INVALID');
  const cached = cache.peekKey(id);
  if (cached !== undefined) return allowedForBrowser(req, cached);
  return cache.getKey(id).then((key) => allowedForBrowser(req, key));
}

function allowedForBrowser(req: RequestContext, key: ApiKey | null): ApiKey {
  if (key === null || !key.enabled) throw new PalisadeError('API_KEY_INVALID');
  if (key.hostnames.length > 0) {
    const origin = requestOrigin(req.headers);
    if (origin === null) throw new PalisadeError('ORIGIN_NOT_ALLOWED', NO_ORIGIN);
    if (!hostMatches(key.hostnames, origin.host)) throw new PalisadeError('ORIGIN_NOT_ALLOWED');
  }
  return key;
}

/** Claims a salt once (StateStore.claimOnce): true the first time, remembered until epoch ms `untilMs`. */
export type ClaimSalt = (id: string, untilMs: number) => Promise<boolean>;

export interface AuthorizeServerOptions {
  /** APP_BASE_PATH: clients sign the path they requested, which includes it. Default ''. */
  readonly basePath?: string;
  /** Clock (tests). Default Date.now. */
  readonly now?: () => number;
  /** CLAIM_CLOCK_SKEW: a salt stays claimed until its window closes plus this. Default 60 s. */
  readonly clockSkewMs?: number;
}

/**
 * A server-side caller: Bearer secret, or Bearer key id plus an HMAC signature of the request.
 * Throws AUTHORIZATION_REQUIRED, API_KEY_INVALID, INVALID_SIGNATURE, INVALID_SIGNATURE_SALT,
 * SIGNATURE_SALT_EXPIRED or SIGNATURE_SALT_REUSED. `claimSalt` receives `hmac:<key id>:<salt>`.
 */
export async function authorizeServer(
  req: RequestContext, cache: KeyCache, claimSalt: ClaimSalt, options: AuthorizeServerOptions = {},
): Promise<ApiKey> {
  const header = req.headers.authorization;
  if (header === undefined || header.length > 200) throw new PalisadeError('AUTHORIZATION_REQUIRED');
  const m = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!m) throw new PalisadeError('AUTHORIZATION_REQUIRED');
  const token = m[1]!;

  if (isSecret(token)) {
    const key = await cache.getKeyBySecret(token);
    if (key === null || !key.enabled) throw new PalisadeError('API_KEY_INVALID');
    return key;
  }
  if (!isKeyId(token)) throw new PalisadeError('API_KEY_INVALID');

  const signature = req.headers['x-hmac-signature'];
  const salt = req.headers['x-hmac-signature-salt'];
  if (signature === undefined || !SIGNATURE.test(signature)) throw new PalisadeError('INVALID_SIGNATURE');
  if (salt === undefined) throw new PalisadeError('INVALID_SIGNATURE_SALT');
  const s = SALT.exec(salt);
  if (!s) throw new PalisadeError('INVALID_SIGNATURE_SALT');
  const key = await cache.getKey(token);
  if (key === null || !key.enabled) throw new PalisadeError('API_KEY_INVALID');

  const path = (options.basePath ?? '') + req.path + (req.rawQuery === '' ? '' : `?${req.rawQuery}`);
  const expected = createHmac('sha256', key.secret)
    .update(`${salt}\n${req.method}\n${path}\n`)
    .update(req.body ?? EMPTY)
    .digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw new PalisadeError('INVALID_SIGNATURE');

  const signedAt = Number(s[1]) * 1000;
  const now = (options.now ?? Date.now)();
  if (Math.abs(now - signedAt) > SIGNATURE_SALT_WINDOW_MS) throw new PalisadeError('SIGNATURE_SALT_EXPIRED');
  // Claimed only once the signature holds: nobody can burn another caller's salts. Kept until the
  // salt's window closes, a moment the salt itself names.
  const until = claimUntil(signedAt + SIGNATURE_SALT_WINDOW_MS, now, options.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS);
  if (!(await claimSalt(`hmac:${key.id}:${salt}`, until))) throw new PalisadeError('SIGNATURE_SALT_REUSED');
  return key;
}

/** Requests of an account in a month: durable plus buffered (src/usage/account-usage.ts). */
export interface AccountRequestCounter {
  requests(accountId: string, month: string): Promise<number> | number;
  currentMonth(): string;
}

/**
 * `checkPlanLimit(key)`: throws PLAN_LIMIT_EXCEEDED (429) once the key's account has used its
 * plan's monthly requests. Keys without a limit pass without a lookup.
 */
export function createPlanLimitCheck(counter: AccountRequestCounter): (key: ApiKey) => void | Promise<void> {
  return (key) => {
    const limit = key.requestLimit;
    // Unlimited plans (the default) cost nothing, not even a Promise.
    if (limit === undefined || limit === null) return;
    const over = (used: number) => {
      if (used >= limit) throw new PalisadeError('PLAN_LIMIT_EXCEEDED');
    };
    const used = counter.requests(key.accountId, counter.currentMonth());
    return typeof used === 'number' ? over(used) : used.then(over);
  };
}
