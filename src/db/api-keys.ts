// api_keys: one row per key. The secret itself is never stored (src/keys/secrets.ts): the row
// holds the nonce it is derived from and its keyed hash for lookups.
import type { Queryable } from './client.js';
import { fragment, join, json, list, raw, toBool, toDate, toDateOrNull, toJson, toStrings, type Fragment } from './dialect.js';

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
  id: string; account_id: string; name: string; hostnames: unknown; plan: string;
  request_limit: string | number | null; challenge_policy: unknown; rate_limit: string | null;
  enabled: unknown; free_hostname: string | null; secret_nonce: string; created_at: unknown;
  revoked_at: unknown; last_used_at: unknown;
}

const toRecord = (r: Row): ApiKeyRecord => Object.freeze({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  hostnames: Object.freeze(toStrings(r.hostnames)),
  plan: r.plan,
  requestLimit: r.request_limit === null ? null : Number(r.request_limit),
  challengePolicy: r.challenge_policy === null ? null : toJson<Record<string, unknown>>(r.challenge_policy),
  rateLimit: r.rate_limit,
  enabled: toBool(r.enabled),
  freeHostname: r.free_hostname,
  secretNonce: r.secret_nonce,
  createdAt: toDate(r.created_at),
  revokedAt: toDateOrNull(r.revoked_at),
  lastUsedAt: toDateOrNull(r.last_used_at),
});

// A key of a deactivated account reads as disabled (migration 007): the key cache drops it when it reloads.
const COLUMNS = raw(`k.id, k.account_id, k.name, k.hostnames, k.plan, p.request_limit, k.challenge_policy, k.rate_limit,
  (k.enabled and a.active) as enabled, k.free_hostname, k.secret_nonce, k.created_at, k.revoked_at, k.last_used_at`);

export async function insertApiKey(q: Queryable, key: NewApiKeyRecord): Promise<void> {
  await q`
    insert into api_keys (id, account_id, name, hostnames, plan, challenge_policy, rate_limit, free_hostname, secret_nonce, secret_hash)
    values (${key.id}, ${key.accountId}, ${key.name}, ${list(key.hostnames)}, ${key.plan},
      ${key.challengePolicy === null ? null : json(key.challengePolicy)}, ${key.rateLimit},
      ${key.freeHostname}, ${key.secretNonce}, ${key.secretHash})`;
}

export async function findApiKey(q: Queryable, id: string): Promise<ApiKeyRecord | null> {
  const [row] = await q<Row[]>`
    select ${COLUMNS} from api_keys k join plans p on p.name = k.plan join accounts a on a.id = k.account_id where k.id = ${id}`;
  return row === undefined ? null : toRecord(row);
}

/** The id of the key whose secret hashes to `secretHash`, or null. */
export async function findApiKeyIdBySecretHash(q: Queryable, secretHash: string): Promise<string | null> {
  const [row] = await q<{ id: string }[]>`select id from api_keys where secret_hash = ${secretHash}`;
  return row?.id ?? null;
}

export async function listApiKeys(q: Queryable, accountId?: string): Promise<ApiKeyRecord[]> {
  const rows = accountId === undefined
    ? await q<Row[]>`select ${COLUMNS} from api_keys k join plans p on p.name = k.plan join accounts a on a.id = k.account_id order by k.created_at, k.id`
    : await q<Row[]>`select ${COLUMNS} from api_keys k join plans p on p.name = k.plan join accounts a on a.id = k.account_id
        where k.account_id = ${accountId} order by k.created_at, k.id`;
  return rows.map(toRecord);
}

/** Disables the key for good. False when there is no such key or it was already revoked. */
export async function revokeApiKey(q: Queryable, id: string): Promise<boolean> {
  const now = new Date();
  const rows = await q`
    update api_keys set enabled = ${false}, revoked_at = ${now}, updated_at = ${now}
    where id = ${id} and revoked_at is null`;
  return rows.count === 1;
}

/** False when there is no such key. Enabling a revoked key is refused (revocation is final). */
export async function updateApiKey(q: Queryable, id: string, patch: ApiKeyPatch): Promise<boolean> {
  const set: Fragment[] = [];
  if (patch.name !== undefined) set.push(fragment`name = ${patch.name}`);
  if (patch.hostnames !== undefined) set.push(fragment`hostnames = ${list(patch.hostnames)}`);
  if (patch.plan !== undefined) set.push(fragment`plan = ${patch.plan}`);
  if (patch.challengePolicy !== undefined) {
    set.push(fragment`challenge_policy = ${patch.challengePolicy === null ? null : json(patch.challengePolicy)}`);
  }
  if (patch.rateLimit !== undefined) set.push(fragment`rate_limit = ${patch.rateLimit}`);
  if (patch.enabled !== undefined) set.push(fragment`enabled = ${patch.enabled}`);
  if (set.length === 0) return (await findApiKey(q, id)) !== null;
  const rows = await q`
    update api_keys set ${join(set, ', ')}, updated_at = ${new Date()}
    where id = ${id} ${patch.enabled === true ? raw('and revoked_at is null') : raw('')}`;
  return rows.count === 1;
}

/** Stores a new secret nonce and hash: the old secret stops working. */
export async function rotateApiKeySecret(q: Queryable, id: string, secretNonce: string, secretHash: string): Promise<boolean> {
  const rows = await q`
    update api_keys set secret_nonce = ${secretNonce}, secret_hash = ${secretHash}, updated_at = ${new Date()}
    where id = ${id} and revoked_at is null`;
  return rows.count === 1;
}

/** Is there a generated key for `hostname` (one per hostname across the service)? */
export async function freeKeyExists(q: Queryable, hostname: string): Promise<boolean> {
  const rows = await q`select 1 from api_keys where free_hostname = ${hostname}`;
  return rows.length > 0;
}

/**
 * Sets last_used_at (never backwards), up to 200 keys per statement. Ids sorted so concurrent
 * writers lock rows in one order.
 */
export async function touchApiKeys(q: Queryable, used: readonly { readonly apiKeyId: string; readonly at: Date }[]): Promise<void> {
  if (used.length === 0) return;
  const latest = new Map<string, Date>();
  for (const u of used) {
    const seen = latest.get(u.apiKeyId);
    if (seen === undefined || seen < u.at) latest.set(u.apiKeyId, u.at);
  }
  const sorted = [...latest].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 0; i < sorted.length; i += 200) {
    const chunk = sorted.slice(i, i + 200);
    const at = () => fragment`case id ${join(chunk.map(([id, time]) => fragment`when ${id} then ${time}`), ' ')} end`;
    await q`
      update api_keys set last_used_at = ${at()}
      where id in (${join(chunk.map(([id]) => fragment`${id}`), ', ')}) and (last_used_at is null or last_used_at < ${at()})`;
  }
}
