// API keys: list, create (the secret is returned once), update (name, hostnames, plan, challenge
// policy, rate limit), revoke, rotate, and the hostname a generated key holds. The key life cycle
// itself (src/keys/api-keys.ts) also writes key_audit; the audit log here names who and from where.
import { type ApiKeyRecord, findApiKey, listApiKeys } from '../db/api-keys.js';
import { getPlan } from '../db/plans.js';
import { listKeyAudit } from '../db/key-audit.js';
import { createApiKey, revokeApiKey, rotateApiKeySecret, updateApiKey } from '../keys/api-keys.js';
import { reassignHostname, releaseHostname, type Reassigned, type Released } from '../keys/hostname-claims.js';
import { isKeyId } from '../keys/secrets.js';
import { parseRateRule } from '../parse.js';
import { resolvePolicy } from '../pow/policy.js';
import { isGeneratedAccount } from '../db/accounts.js';
import { type AdminContext, audit, invalid, notFound, refusals } from './context.js';

export function keyView(k: ApiKeyRecord) {
  return {
    id: k.id, accountId: k.accountId, name: k.name, hostnames: k.hostnames, plan: k.plan, requestLimit: k.requestLimit,
    challengePolicy: k.challengePolicy, rateLimit: k.rateLimit, enabled: k.enabled, freeHostname: k.freeHostname,
    createdAt: k.createdAt.toISOString(), revokedAt: k.revokedAt?.toISOString() ?? null, lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  };
}

export async function listKeys(ctx: AdminContext, accountId?: string): Promise<ApiKeyRecord[]> {
  return listApiKeys(ctx.sql, accountId);
}

/** AdminError NOT_FOUND when there is no such key. */
export async function getKey(ctx: AdminContext, id: string): Promise<ApiKeyRecord> {
  const key = isKeyId(id) ? await findApiKey(ctx.sql, id) : null;
  return key ?? notFound(`no key ${id.slice(0, 64)}`);
}

/** A challenge policy as the challenge route will read it (src/pow/policy.ts). */
export function checkedPolicy(ctx: AdminContext, policy: unknown): Record<string, unknown> | null {
  if (policy === null) return null;
  if (typeof policy !== 'object' || Array.isArray(policy)) return invalid('challengePolicy must be a JSON object or null');
  try {
    resolvePolicy(policy as Record<string, unknown>, { maxMemoryBytes: ctx.settings.POW_MAX_MEMORY });
  } catch (err) {
    invalid(`challengePolicy: ${(err as Error).message}`);
  }
  return policy as Record<string, unknown>;
}

/** A rate rule in the spec's syntax, e.g. 100/1m(key=ip&block=10m); null or '' = none. */
export function checkedRateLimit(rule: unknown): string | null {
  if (rule === null || rule === '') return null;
  if (typeof rule !== 'string' || rule.length > 200) return invalid('rateLimit must be a rate rule or null');
  try {
    return parseRateRule(rule).source;
  } catch (err) {
    return invalid(`rateLimit: ${(err as Error).message}`);
  }
}

async function checkedPlan(ctx: AdminContext, plan: string): Promise<string> {
  if ((await getPlan(ctx.sql, plan)) === null) invalid(`no plan named "${plan.slice(0, 64)}" (plans list)`);
  return plan;
}

export interface KeyInput {
  readonly accountId: string;
  readonly hostnames: readonly string[];
  readonly name?: string;
  readonly plan?: string;
  readonly challengePolicy?: unknown;
  readonly rateLimit?: unknown;
}

export async function createKey(ctx: AdminContext, input: KeyInput): Promise<{ key: ApiKeyRecord; secret: string }> {
  if (input.name !== undefined && input.name.length > 200) invalid('name must have at most 200 characters');
  const plan = input.plan === undefined ? undefined : await checkedPlan(ctx, input.plan);
  const challengePolicy = input.challengePolicy === undefined ? null : checkedPolicy(ctx, input.challengePolicy);
  const rateLimit = input.rateLimit === undefined ? null : checkedRateLimit(input.rateLimit);
  if (await isGeneratedAccount(ctx.sql, input.accountId)) invalid('that account belongs to a generated key; choose another');
  const { key, secret } = await refusals(() => createApiKey(ctx.sql, ctx.secrets, {
    accountId: input.accountId, hostnames: input.hostnames, ...(plan ? { plan } : {}),
    ...(input.name ? { name: input.name } : {}), challengePolicy, rateLimit,
  }, ctx.actor.name, (tx, id) => audit(ctx, tx, 'key.create', id, input.accountId, {
    hostnames: input.hostnames, plan: plan ?? null, name: input.name ?? null, rateLimit,
  })));
  return { key: await getKey(ctx, key.id), secret };
}

export interface KeyPatch {
  readonly name?: string;
  readonly hostnames?: readonly string[];
  readonly plan?: string;
  readonly challengePolicy?: unknown;
  readonly rateLimit?: unknown;
}

export async function updateKey(ctx: AdminContext, id: string, patch: KeyPatch): Promise<ApiKeyRecord> {
  const key = await getKey(ctx, id);
  if (key.revokedAt !== null) invalid(`${id} is revoked`);
  if (patch.name !== undefined && patch.name.length > 200) invalid('name must have at most 200 characters');
  const changes = {
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.hostnames !== undefined ? { hostnames: patch.hostnames } : {}),
    ...(patch.plan !== undefined ? { plan: await checkedPlan(ctx, patch.plan) } : {}),
    ...(patch.challengePolicy !== undefined ? { challengePolicy: checkedPolicy(ctx, patch.challengePolicy) } : {}),
    ...(patch.rateLimit !== undefined ? { rateLimit: checkedRateLimit(patch.rateLimit) } : {}),
  };
  await refusals(() => updateApiKey(ctx.sql, key.id, changes, ctx.actor.name, (tx) => audit(ctx, tx, 'key.update', key.id, key.accountId, changes)));
  return getKey(ctx, key.id);
}

export async function revokeKey(ctx: AdminContext, id: string): Promise<void> {
  const key = isKeyId(id) ? await findApiKey(ctx.sql, id) : null;
  const done = key !== null && await revokeApiKey(ctx.sql, key.id, ctx.actor.name, (tx) => audit(ctx, tx, 'key.revoke', key.id, key.accountId));
  if (!done) notFound(`no enabled key ${id.slice(0, 64)}`);
}

/** The new secret (shown once); the old one stops working within CACHE_DURATION_API_KEYS. */
export async function rotateKey(ctx: AdminContext, id: string): Promise<string> {
  const key = isKeyId(id) ? await findApiKey(ctx.sql, id) : null;
  const secret = key === null ? null
    : await rotateApiKeySecret(ctx.sql, ctx.secrets, key.id, ctx.actor.name, (tx) => audit(ctx, tx, 'key.rotate', key.id, key.accountId));
  if (secret === null) return notFound(`no enabled key ${id.slice(0, 64)}`);
  return secret;
}

export async function releaseKeyHostname(ctx: AdminContext, hostname: string): Promise<Released> {
  return refusals(() => releaseHostname(ctx.sql, hostname, ctx.actor.name,
    (tx, r) => audit(ctx, tx, 'hostname.release', r.hostname, null, { revoked: r.revoked, cleared: r.cleared })));
}

export async function reassignKeyHostname(ctx: AdminContext, hostname: string, keyId: string): Promise<Reassigned> {
  if (!isKeyId(keyId)) invalid(`"${keyId.slice(0, 64)}" is not a key id`);
  return refusals(() => reassignHostname(ctx.sql, hostname, keyId, ctx.actor.name,
    (tx, r, accountId) => audit(ctx, tx, 'hostname.reassign', r.hostname, accountId, { apiKey: keyId, revoked: r.revoked, cleared: r.cleared })));
}

export async function keyHistory(ctx: AdminContext, id: string) {
  const key = await getKey(ctx, id);
  return (await listKeyAudit(ctx.sql, key.id)).map((a) => ({ time: a.time.toISOString(), action: a.action, actor: a.actor, detail: a.detail }));
}
