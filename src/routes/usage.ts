// GET /usage?Month=YYYY-MM (spec 4.4, PROTOCOL.md section 4; `month` is accepted too): usage of the
// authorising API key and its account in a month (default: the current month in TZ). Server-side authorisation:
// Bearer secret, or Bearer key id + HMAC signature (src/keys/authorize.ts).
//   200 {"classifications":{"BAD":"12","GOOD":"340","NEUTRAL":"8"},"referrers":{"https://example.com":412},
//        "requests":{"account":1024,"apiKey":360},"plan":{"name":"free","requestLimit":6000}}
// Counts come from the database: what workers have not flushed yet (at most ~1 s) is not in them.
// classifications and referrers are the key's; requests.account sums every key of the account.
// plan.requestLimit is a number, as the spec types it: -1 for an unlimited plan (0 is a real limit:
// a plan of no requests).
import type { Sql } from '../db/client.js';
import { accountRequests, keyUsage } from '../db/usage.js';
import { usageSpec } from '../api-schema/keys.js';
import { queryCheck } from '../api-schema/validate.js';
import type { Handler, RequestContext, Reply } from '../http/types.js';
import { json } from '../http/types.js';
import type { ApiKey } from '../keys/types.js';
import { UNLIMITED_REQUEST_LIMIT } from '../usage/plan-limit.js';

/** `Month` and `month` are checked against the schema of /v1/docs (src/api-schema/keys.ts): 400 INVALID_MONTH. */
const checkQuery = queryCheck(usageSpec);

export interface UsageRouteDeps {
  readonly sql: Sql;
  /** `(req) => authorizeServer(req, cache, claimSalt, { basePath })`. */
  readonly authorizeServer: (req: RequestContext) => ApiKey | Promise<ApiKey>;
  /** The current month in TZ (UsageBuffer.currentMonth or createMonthClock). */
  readonly currentMonth: () => string;
}

export function usageRoute(deps: UsageRouteDeps): Handler {
  return async (req: RequestContext): Promise<Reply> => {
    const key = await deps.authorizeServer(req);
    checkQuery(req.query);
    // The spec names the parameter Month; month was accepted first and stays. When both are given,
    // Month wins.
    const given = req.query.get('Month') ?? req.query.get('month');
    const month = given === null || given === '' ? deps.currentMonth() : given;
    const [usage, account] = await Promise.all([
      keyUsage(deps.sql, key.id, month),
      accountRequests(deps.sql, key.accountId, month),
    ]);
    return json({
      classifications: usage.classifications,
      referrers: usage.referrers,
      requests: { account, apiKey: usage.requests },
      plan: { name: key.planId, requestLimit: key.requestLimit ?? UNLIMITED_REQUEST_LIMIT },
    });
  };
}
