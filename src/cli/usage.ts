// `usage --key KEY_ID [--month YYYY-MM]`: a key's requests, classifications and referrers in a month
// (the shape of GET /usage, with the month; an unlimited plan's requestLimit is -1 there too).
import { accountRequests, keyUsage } from '../db/usage.js';
import { loadApiKey } from '../keys/api-keys.js';
import { isKeyId } from '../keys/secrets.js';
import { createMonthClock, isMonth } from '../usage/month.js';
import { UNLIMITED_REQUEST_LIMIT } from '../usage/plan-limit.js';
import { type Context, type Flags, UsageError } from './context.js';

export async function usageCommand(_rest: string[], ctx: Context, flags: Flags): Promise<void> {
  const sql = ctx.db.sql;
  if (flags.key === undefined) throw new UsageError('usage needs --key KEY_ID');
  const month = flags.month ?? createMonthClock(ctx.config.TZ || undefined)();
  if (!isMonth(month)) throw new UsageError('--month is YYYY-MM');
  const key = isKeyId(flags.key) ? await loadApiKey(sql, ctx.secrets, flags.key) : null;
  if (key === null) throw new Error(`no key ${flags.key}`);
  const usage = await keyUsage(sql, key.id, month);
  const account = await accountRequests(sql, key.accountId, month);
  const result = {
    month,
    classifications: usage.classifications,
    referrers: usage.referrers,
    requests: { account, apiKey: usage.requests },
    plan: { name: key.planId, requestLimit: key.requestLimit ?? UNLIMITED_REQUEST_LIMIT },
  };
  ctx.out(
    [
      `month:     ${month}`,
      `requests:  key ${usage.requests}, account ${account} (plan ${key.planId}, limit ${key.requestLimit ?? 'unlimited'})`,
      `classes:   GOOD ${usage.classifications.GOOD}, NEUTRAL ${usage.classifications.NEUTRAL}, BAD ${usage.classifications.BAD}`,
      ...Object.entries(usage.referrers).map(([origin, n]) => `referrer:  ${origin} ${n}`),
    ].join('\n'),
    result,
  );
}
