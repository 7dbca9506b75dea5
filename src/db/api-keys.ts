// api_keys: one row per key. The secret itself is never stored (src/keys/secrets.ts): the row
// holds the nonce it is derived from and its keyed hash for lookups.
import type { Queryable } from './client.js';

export interface ApiKeyRecord {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  readonly hostnames: readonly string[];
  readonly plan: string;
  /** The plan's monthly request limit (null = unlimited). */
  readonly requestLimit: number | null;
  readonly challengePolicy: Readonly<Record<string, unknown>> | null;
  readonly rateLimit: string | null;
  /** False once revoked, disabled, or while its account is deactivated. */
  readonly enabled: boolean;
  readonly freeHostname: string | null;
  readonly secretNonce: string;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

export interface NewApiKeyRecord {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  readonly hostnames: readonly string[];
  readonly plan: string;
  readonly challengePolicy: Readonly<Record<string, unknown>> | null;
  readonly rateLimit: string | null;
  readonly freeHostname: string | null;
  readonly secretNonce: string;
  readonly secretHash: string;
}

export interface ApiKeyPatch {
  readonly name?: string;
  readonly hostnames?: readonly string[];
  readonly plan?: string;
  readonly challengePolicy?: Readonly<Record<string, unknown>> | null;
  readonly rateLimit?: string | null;
  readonly enabled?: boolean;
}

interface Row {
  id: string; account_id: string; name: string; hostnames: string[]; plan: string;
  request_limit: string | null; challenge_policy: Record<string, unknown> | null; rate_limit: string | null;
  enabled: boolean; free_hostname: string | null; secret_nonce: string; created_at: Date;
  revoked_at: Date | null; last_used_at: Date | null;
}

const toRecord = (r: Row): ApiKeyRecord => Object.freeze({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  hostnames: Object.freeze([...r.hostnames]),
  plan: r.plan,
  requestLimit: r.request_limit === null ? null : Number(r.request_limit),
  challengePolicy: r.challenge_policy,
  rateLimit: r.rate_limit,
  enabled: r.enabled,
  freeHostname: r.free_hostname,
  secretNonce: r.secret_nonce,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

// A key of a deactivated account reads as disabled (migration 005): the key cache drops it when it reloads.
const COLUMNS = `k.id, k.account_id, k.name, k.hostnames, k.plan, p.request_limit, k.challenge_policy, k.rate_limit,
  (k.enabled and a.active) as enabled, k.free_hostname, k.secret_nonce, k.created_at, k.revoked_at, k.last_used_at`;

export async function insertApiKey(q: Queryable, key: NewApiKeyRecord): Promise<void> {
  await q`
    insert into api_keys (id, account_id, name, hostnames, plan, challenge_policy, rate_limit, free_hostname, secret_nonce, secret_hash)
    values (${key.id}, ${key.accountId}, ${key.name}, ${q.array([...key.hostnames])}, ${key.plan},
      ${key.challengePolicy === null ? null : q.json(key.challengePolicy as never)}, ${key.rateLimit},
      ${key.freeHostname}, ${key.secretNonce}, ${key.secretHash})`;
}

export async function findApiKey(q: Queryable, id: string): Promise<ApiKeyRecord | null> {
  const [row] = await q<Row[]>`
    select ${q.unsafe(COLUMNS)} from api_keys k join plans p on p.name = k.plan join accounts a on a.id = k.account_id where k.id = ${id}`;
  return row === undefined ? null : toRecord(row);
}

/** The id of the key whose secret hashes to `secretHash`, or null. */
export async function findApiKeyIdBySecretHash(q: Queryable, secretHash: string): Promise<string | null> {
  const [row] = await q<{ id: string }[]>`select id from api_keys where secret_hash = ${secretHash}`;
  return row?.id ?? null;
}

export async function listApiKeys(q: Queryable, accountId?: string): Promise<ApiKeyRecord[]> {
  const rows = accountId === undefined
    ? await q<Row[]>`select ${q.unsafe(COLUMNS)} from api_keys k join plans p on p.name = k.plan join accounts a on a.id = k.account_id order by k.created_at, k.id`
    : await q<Row[]>`select ${q.unsafe(COLUMNS)} from api_keys k join plans p on p.name = k.plan join accounts a on a.id = k.account_id
        where k.account_id = ${accountId} order by k.created_at, k.id`;
  return rows.map(toRecord);
}

/** Disables the key for good. False when there is no such key or it was already revoked. */
export async function revokeApiKey(q: Queryable, id: string): Promise<boolean> {
  const rows = await q`
    update api_keys set enabled = false, revoked_at = now(), updated_at = now()
    where id = ${id} and revoked_at is null returning id`;
  return rows.length === 1;
}

/** False when there is no such key. Enabling a revoked key is refused (revocation is final). */
export async function updateApiKey(q: Queryable, id: string, patch: ApiKeyPatch): Promise<boolean> {
  const set: Record<string, unknown> = {};
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.hostnames !== undefined) set.hostnames = q.array([...patch.hostnames]);
  if (patch.plan !== undefined) set.plan = patch.plan;
  if (patch.challengePolicy !== undefined) {
    set.challenge_policy = patch.challengePolicy === null ? null : q.json(patch.challengePolicy as never);
  }
  if (patch.rateLimit !== undefined) set.rate_limit = patch.rateLimit;
  if (patch.enabled !== undefined) set.enabled = patch.enabled;
  const columns = Object.keys(set);
  if (columns.length === 0) return (await findApiKey(q, id)) !== null;
  const rows = await q`
    update api_keys set ${q(set as never, ...columns)}, updated_at = now()
    where id = ${id} and (revoked_at is null or not ${patch.enabled === true}) returning id`;
  return rows.length === 1;
}

/** Stores a new secret nonce and hash: the old secret stops working. */
export async function rotateApiKeySecret(q: Queryable, id: string, secretNonce: string, secretHash: string): Promise<boolean> {
  const rows = await q`
    update api_keys set secret_nonce = ${secretNonce}, secret_hash = ${secretHash}, updated_at = now()
    where id = ${id} and revoked_at is null returning id`;
  return rows.length === 1;
}

/** Is there a generated key for `hostname` (one per hostname across the service)? */
export async function freeKeyExists(q: Queryable, hostname: string): Promise<boolean> {
  const rows = await q`select 1 from api_keys where free_hostname = ${hostname}`;
  return rows.length > 0;
}

/** Sets last_used_at (never backwards). Ids sorted so concurrent writers lock rows in one order. */
export async function touchApiKeys(q: Queryable, used: readonly { readonly apiKeyId: string; readonly at: Date }[]): Promise<void> {
  if (used.length === 0) return;
  const sorted = [...used].sort((a, b) => (a.apiKeyId < b.apiKeyId ? -1 : a.apiKeyId > b.apiKeyId ? 1 : 0));
  await q`
    update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, v.at), v.at)
    from (select unnest(${q.array(sorted.map((u) => u.apiKeyId))}::text[]) as id,
                 unnest(${q.array(sorted.map((u) => u.at.toISOString()))}::timestamptz[]) as at) v
    where k.id = v.id`;
}
