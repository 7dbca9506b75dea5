// `keys create`, `keys list`, `keys revoke KEY_ID`, `keys rotate KEY_ID`.
import { createKey, keyView, listKeys, revokeKey, rotateKey } from '../admin/keys.js';
import { isKeyId } from '../keys/secrets.js';
import { parseRateRule } from '../parse.js';
import { resolvePolicy } from '../pow/policy.js';
import { resolveAccount } from './accounts.js';
import { type Context, type Flags, UsageError } from './context.js';

export async function createKeyCommand(rest: string[], ctx: Context, flags: Flags): Promise<void> {
  if (rest.length > 0) throw new UsageError(`unexpected argument ${rest[0]}`);
  if (flags.hostname.length === 0) throw new UsageError('keys create needs --hostname');
  const challengePolicy = flags.policy === undefined ? null : parsePolicy(flags.policy, ctx.config.POW_MAX_MEMORY);
  const rateLimit = flags.rateLimit === undefined ? null : checkedRateRule(flags.rateLimit);
  const account = await resolveAccount(ctx, flags.account);
  const { key, secret } = await createKey(ctx.admin, {
    accountId: account.id, hostnames: flags.hostname, ...(flags.plan ? { plan: flags.plan } : {}),
    ...(flags.name ? { name: flags.name } : {}), challengePolicy, rateLimit,
  });
  ctx.out(
    `apiKey:    ${key.id}\nsecret:    ${secret}\naccount:   ${account.name}\nplan:      ${key.plan}\nhostnames: ${key.hostnames.join(', ')}\n` +
    'The secret is shown only this once: store it now.',
    { apiKey: key.id, secret, accountId: key.accountId, plan: key.plan, hostnames: key.hostnames, name: key.name },
  );
}

export async function listKeysCommand(_rest: string[], ctx: Context, flags: Flags): Promise<void> {
  const account = flags.account === undefined ? undefined : await resolveAccount(ctx, flags.account);
  const keys = await listKeys(ctx.admin, account?.id);
  const rows = keys.map((k) => {
    const v = keyView(k);
    return {
      id: v.id, accountId: v.accountId, name: v.name, hostnames: v.hostnames, plan: v.plan, enabled: v.enabled,
      createdAt: v.createdAt, lastUsedAt: v.lastUsedAt, revokedAt: v.revokedAt,
    };
  });
  ctx.out(
    rows.length === 0 ? '(no keys)' : rows.map((r) =>
      `${r.id}  ${r.enabled ? 'enabled ' : 'revoked '}  ${r.plan.padEnd(10)}  ${r.hostnames.join(',') || '*'}  ${r.name}`).join('\n'),
    rows,
  );
}

export async function revokeKeyCommand(rest: string[], ctx: Context): Promise<void> {
  const id = keyIdArgument('revoke', rest);
  await revokeKey(ctx.admin, id);
  ctx.out(`revoked ${id} (workers stop accepting it within CACHE_DURATION_API_KEYS)`, { revoked: id });
}

export async function rotateKeyCommand(rest: string[], ctx: Context): Promise<void> {
  const id = keyIdArgument('rotate', rest);
  const secret = await rotateKey(ctx.admin, id);
  ctx.out(`apiKey: ${id}\nsecret: ${secret}\nThe new secret is shown only this once.`, { apiKey: id, secret });
}

function keyIdArgument(action: string, rest: string[]): string {
  const id = rest[0];
  if (id === undefined || rest.length > 1) throw new UsageError(`keys ${action} needs exactly one KEY_ID`);
  if (!isKeyId(id)) throw new Error(`"${id}" is not a key id`);
  return id;
}

/** --policy: a JSON object, checked as the challenge route will check it (src/pow/policy.ts). */
function parsePolicy(text: string, maxMemoryBytes: number): Record<string, unknown> {
  let policy: unknown;
  try {
    policy = JSON.parse(text);
  } catch {
    throw new UsageError('--policy must be a JSON object, e.g. \'{"algorithm":"PBKDF2/SHA-256","cost":5000}\'');
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) throw new UsageError('--policy must be a JSON object');
  try {
    resolvePolicy(policy as Record<string, unknown>, { maxMemoryBytes });
  } catch (err) {
    throw new UsageError(`--policy: ${(err as Error).message}`);
  }
  return policy as Record<string, unknown>;
}

/** --rate-limit: a rule in the spec's syntax, e.g. 100/1m(key=ip&block=10m). */
function checkedRateRule(text: string): string {
  try {
    return parseRateRule(text).source;
  } catch (err) {
    throw new UsageError(`--rate-limit: ${(err as Error).message}`);
  }
}
