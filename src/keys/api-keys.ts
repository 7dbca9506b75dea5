// API key life cycle over the database: create (the secret is returned once), load (the secret is
// derived again), revoke, update, rotate. Every change writes a key_audit entry in the same
// transaction, and runs the caller's `within` hook there too (the admin domain's audit log).
import {
  findApiKey, findApiKeyIdBySecretHash, insertApiKey, revokeApiKey as revokeRow, rotateApiKeySecret as rotateRow,
  updateApiKey as updateRow, type ApiKeyPatch, type ApiKeyRecord,
} from '../db/api-keys.js';
import { createAccount, isGeneratedAccount } from '../db/accounts.js';
import type { Queryable, Sql } from '../db/client.js';
import { insertKeyAudit } from '../db/key-audit.js';
import { normalizeKeyHostname } from './hostnames.js';
import { newKeyId, newSecretNonce, type KeyKind, type KeySecrets } from './secrets.js';
import type { KeyLoader } from './key-cache.js';
import type { ApiKey } from './types.js';

/** Runs inside a change's transaction once it is made (src/admin/ writes its audit entry there). */
export type WithinChange = (tx: Queryable, keyId: string) => Promise<void>;

export interface NewApiKey {
  /**
   * The account of an operator key (required for them; never the account of a generated key). A
   * free key takes none: it gets an account of its own, created with it.
   */
  readonly accountId?: string;
  readonly name?: string;
  /** Hostnames or `*.` wildcards (normalised; invalid entries throw). Default: none = any origin. */
  readonly hostnames?: readonly string[];
  /** Plan name. Default 'unlimited' ('free' for free keys). */
  readonly plan?: string;
  readonly challengePolicy?: Readonly<Record<string, unknown>> | null;
  readonly rateLimit?: string | null;
  /** 'free' keys (`ckey_`) come from POST /api_key/generate: one per hostname, each in its own account. */
  readonly kind?: KeyKind;
}

export interface CreatedApiKey {
  readonly key: ApiKey;
  /** Shown once; derivable again only with the server secret. */
  readonly secret: string;
}

/** The ApiKey the hot paths use, with its derived secret. */
export function toApiKey(record: ApiKeyRecord, secrets: KeySecrets): ApiKey {
  return Object.freeze({
    id: record.id,
    accountId: record.accountId,
    name: record.name,
    hostnames: record.hostnames,
    planId: record.plan,
    challengePolicy: record.challengePolicy,
    rateLimit: record.rateLimit,
    enabled: record.enabled,
    secret: secrets.derive(record.id, record.secretNonce),
    requestLimit: record.requestLimit,
  });
}

export function normalizeHostnames(hostnames: readonly string[]): string[] {
  const out: string[] = [];
  for (const h of hostnames) {
    const n = normalizeKeyHostname(h);
    if (n === null) throw new Error(`invalid hostname "${h.slice(0, 100)}" (a host name, *.example.com or an IP address)`);
    if (!out.includes(n)) out.push(n);
  }
  if (out.length > 100) throw new Error('at most 100 hostnames per key');
  return out;
}

/**
 * Creates a key. A free key gets a new account of its own (in the same transaction), so that no
 * holder of one can spend, read or verify with another key's account; its hostname is unique
 * across the service: a second one throws a unique violation (isUniqueViolation). An operator key
 * is refused in a generated key's account for the same reason.
 */
export async function createApiKey(sql: Sql, secrets: KeySecrets, input: NewApiKey, actor: string, within?: WithinChange): Promise<CreatedApiKey> {
  const kind = input.kind ?? 'standard';
  const hostnames = normalizeHostnames(input.hostnames ?? []);
  if (kind === 'free' && hostnames.length !== 1) throw new Error('a free key has exactly one hostname');
  if (kind === 'free' && input.accountId !== undefined) throw new Error('a free key gets an account of its own');
  if (kind === 'standard' && input.accountId === undefined) throw new Error('a key needs an account');
  const id = newKeyId(kind);
  const nonce = newSecretNonce();
  const secret = secrets.derive(id, nonce);
  await sql.begin(async (tx) => {
    let accountId: string;
    if (kind === 'free') {
      accountId = (await createAccount(tx, `Free key ${id}`, true)).id;
    } else {
      accountId = input.accountId!;
      if (await isGeneratedAccount(tx, accountId)) throw new Error('that account belongs to a generated key; choose another');
    }
    await insertApiKey(tx, {
      id,
      accountId,
      name: input.name ?? hostnames[0] ?? '',
      hostnames,
      plan: input.plan ?? (kind === 'free' ? 'free' : 'unlimited'),
      challengePolicy: input.challengePolicy ?? null,
      rateLimit: input.rateLimit ?? null,
      freeHostname: kind === 'free' ? hostnames[0]! : null,
      secretNonce: nonce,
      secretHash: secrets.hash(secret),
    });
    await insertKeyAudit(tx, { apiKeyId: id, action: 'create', actor, detail: { hostnames, plan: input.plan ?? null, kind } });
    await within?.(tx, id);
  });
  const record = await findApiKey(sql, id);
  if (record === null) throw new Error('the key just created is missing');
  return { key: toApiKey(record, secrets), secret };
}

export async function loadApiKey(q: Queryable, secrets: KeySecrets, id: string): Promise<ApiKey | null> {
  const record = await findApiKey(q, id);
  return record === null ? null : toApiKey(record, secrets);
}

export async function findKeyIdBySecret(q: Queryable, secrets: KeySecrets, secret: string): Promise<string | null> {
  return findApiKeyIdBySecretHash(q, secrets.hash(secret));
}

export async function revokeApiKey(sql: Sql, id: string, actor: string, within?: WithinChange): Promise<boolean> {
  return sql.begin(async (tx) => {
    const done = await revokeRow(tx, id);
    if (done) {
      await insertKeyAudit(tx, { apiKeyId: id, action: 'revoke', actor });
      await within?.(tx, id);
    }
    return done;
  });
}

export async function updateApiKey(sql: Sql, id: string, patch: ApiKeyPatch, actor: string, within?: WithinChange): Promise<boolean> {
  const normalized = patch.hostnames === undefined ? patch : { ...patch, hostnames: normalizeHostnames(patch.hostnames) };
  return sql.begin(async (tx) => {
    const done = await updateRow(tx, id, normalized);
    if (done) {
      const detail: Record<string, unknown> = { ...normalized };
      await insertKeyAudit(tx, { apiKeyId: id, action: 'update', actor, detail });
      await within?.(tx, id);
    }
    return done;
  });
}

/** A new secret for the key; the old one stops working (within the key cache TTL). Null: no such key. */
export async function rotateApiKeySecret(sql: Sql, secrets: KeySecrets, id: string, actor: string, within?: WithinChange): Promise<string | null> {
  const nonce = newSecretNonce();
  const secret = secrets.derive(id, nonce);
  const done = await sql.begin(async (tx) => {
    const ok = await rotateRow(tx, id, nonce, secrets.hash(secret));
    if (ok) {
      await insertKeyAudit(tx, { apiKeyId: id, action: 'rotate', actor });
      await within?.(tx, id);
    }
    return ok;
  });
  return done ? secret : null;
}

/** The key cache's way to the database (createKeyCache(createKeyLoader(sql, secrets), secrets, …)). */
export function createKeyLoader(q: Queryable, secrets: KeySecrets): KeyLoader {
  return {
    byId: (id) => loadApiKey(q, secrets, id),
    idBySecretHash: (hash) => findApiKeyIdBySecretHash(q, hash),
  };
}
