// What every admin domain function is given (src/admin/): the database, the key secrets, the few
// settings the domain needs, and the actor the audit log names. The console and the admin API
// (src/routes/admin.ts) and the CLI (src/cli/) call the same functions: authorisation is the
// caller's (the API checks roles before calling; the CLI is the operator), validation and the audit
// log are here.
import type { Queryable, Sql } from '../db/client.js';
import { insertAudit } from '../db/audit-log.js';
import type { KeySecrets } from '../keys/secrets.js';

export interface Actor {
  /** admin:<username>, cli:<os user>, system. */
  readonly name: string;
  /** The client IP of an API request; null from the CLI. */
  readonly ip: string | null;
}

export interface AdminSettings {
  readonly POW_MAX_MEMORY: number;
  readonly DEFAULT_ACCOUNT_NAME: string;
  readonly PASSWORD_MIN_LENGTH: number;
  readonly TZ: string;
}

export interface AdminContext {
  readonly sql: Sql;
  readonly secrets: KeySecrets;
  readonly settings: AdminSettings;
  readonly actor: Actor;
}

export type AdminErrorCode = 'INVALID_PARAMETER' | 'NOT_FOUND' | 'CONFLICT' | 'FORBIDDEN';

/** A refusal of the domain: the API answers it as {error: code, statusCode, message}, the CLI prints the message. */
export class AdminError extends Error {
  readonly code: AdminErrorCode;
  constructor(code: AdminErrorCode, message: string) {
    super(message);
    this.name = 'AdminError';
    this.code = code;
  }
}

export const invalid = (message: string): never => { throw new AdminError('INVALID_PARAMETER', message); };
export const notFound = (message: string): never => { throw new AdminError('NOT_FOUND', message); };
export const conflict = (message: string): never => { throw new AdminError('CONFLICT', message); };

/**
 * Writes one audit entry for a change made by `ctx.actor`, through `q`: the change's own transaction,
 * so that a change is never without its entry nor an entry without its change.
 */
export async function audit(ctx: AdminContext, q: Queryable, action: string, target: string | null, accountId: string | null,
  detail: Readonly<Record<string, unknown>> = {}): Promise<void> {
  await insertAudit(q, { actor: ctx.actor.name, ip: ctx.actor.ip, action, target, accountId, detail });
}

/** Runs `fn` in one transaction. */
export function transaction<T>(ctx: AdminContext, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return ctx.sql.begin((tx) => fn(tx)) as Promise<T>;
}

/**
 * Runs `fn`, turning the plain Errors the key and hostname modules throw for bad input (no code, no
 * subclass: not a database failure) into AdminError INVALID_PARAMETER.
 */
export async function refusals<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Error && err.constructor === Error && !('code' in err)) throw new AdminError('INVALID_PARAMETER', err.message);
    throw err;
  }
}
