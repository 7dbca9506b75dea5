// POST /api_key/generate (spec 4.2, PROTOCOL.md section 5): a free API key for a hostname, behind
// the machine-to-machine challenge. Body {"hostname": "example.com"}.
//   no solution           → 401 ALTCHA_REQUIRED, WWW-Authenticate: Altcha algorithm=SHA-256, challenge=…, …
//   bad / expired / reused → 401 ALTCHA_INVALID / ALTCHA_EXPIRED / ALTCHA_ALREADY_USED with a new challenge
//   hostname invalid      → 400 INVALID_HOSTNAME (checked first: a typo does not cost a solution)
//   hostname has a key    → 409 HOSTNAME_TAKEN (checked before the solution is used up)
//   success               → 200 {"apiKey":"ckey_…","hostname":"example.com","secret":"csec_…"}
// Each key gets an account of its own, with its own plan limit and usage totals (createApiKey).
// The solution is read from Authorization, or from the header named by X-Altcha-Authorization-Header
// (for clients behind a proxy that uses Authorization itself). Each solution is accepted once.
import type { KeyObject } from 'node:crypto';
import { apiKeyGenerateSpec } from '../api-schema/keys.js';
import { bodyCheck } from '../api-schema/validate.js';
import { freeKeyExists } from '../db/api-keys.js';
import { isUniqueViolation, type Sql } from '../db/client.js';
import { errorBody, PalisadeError, type ErrorCode } from '../errors.js';
import { anonymizeIp } from '../ip.js';
import type { Handler, RequestContext, Reply } from '../http/types.js';
import { createApiKey } from '../keys/api-keys.js';
import { normalizeDnsHostname } from '../keys/hostnames.js';
import { claimUntil, DEFAULT_CLOCK_SKEW_MS } from '../store/state-store.js';
import {
  createM2mChallenge, m2mExpiresAt, parseAltchaAuthorization, prepareM2mKey, verifyM2mSolution, wwwAuthenticate,
  type M2mChallengeOptions,
} from '../keys/m2m-challenge.js';
import type { KeySecrets } from '../keys/secrets.js';

export interface ApiKeyGenerateDeps {
  readonly sql: Sql;
  readonly secrets: KeySecrets;
  /** Signs the challenges: a key derived from PALISADE_HMAC_SECRET for this purpose only. */
  readonly hmacKey: string | Buffer;
  /** StateStore.claimOnce (kept until epoch ms `untilMs`). */
  readonly claimOnce: (id: string, untilMs: number) => Promise<boolean>;
  /** Per-IP rate limit; throws PalisadeError RATE_LIMITED. Default: none. */
  readonly rateLimit?: (req: RequestContext) => void | Promise<void>;
}

export interface ApiKeyGenerateOptions extends M2mChallengeOptions {
  /** Plan of generated keys. Default 'free'. */
  readonly plan?: string;
  readonly now?: () => number;
}

const HEADER_NAME = /^[a-z0-9-]{1,64}$/;
/** The body's schema of /v1/docs (src/api-schema/keys.ts): 400 INVALID_HOSTNAME; then the hostname's rules. */
const checkBody = bodyCheck(apiKeyGenerateSpec);

export function apiKeyGenerateRoute(deps: ApiKeyGenerateDeps, options: ApiKeyGenerateOptions = {}): Handler {
  const key: KeyObject = prepareM2mKey(deps.hmacKey);
  const now = options.now ?? Date.now;

  const challengeReply = (code: ErrorCode): Reply => ({
    status: 401,
    headers: { 'WWW-Authenticate': wwwAuthenticate(createM2mChallenge(key, options, now())), 'Cache-Control': 'no-store' },
    body: errorBody(code),
  });

  return async (req: RequestContext): Promise<Reply> => {
    await deps.rateLimit?.(req);
    const body = req.json();
    checkBody(body);
    const hostname = normalizeDnsHostname((body as { hostname: string }).hostname);
    if (hostname === null) throw new PalisadeError('INVALID_HOSTNAME');

    const headerName = (req.headers['x-altcha-authorization-header'] ?? 'authorization').trim().toLowerCase();
    if (!HEADER_NAME.test(headerName)) return challengeReply('ALTCHA_INVALID');
    const presented = req.headers[headerName];
    if (presented === undefined || !/^altcha\s/i.test(presented.trimStart())) return challengeReply('ALTCHA_REQUIRED');
    const solution = parseAltchaAuthorization(presented);
    if (solution === null) return challengeReply('ALTCHA_INVALID');
    const verdict = verifyM2mSolution(key, solution, options, now());
    if (verdict === 'invalid') return challengeReply('ALTCHA_INVALID');
    if (verdict === 'expired') return challengeReply('ALTCHA_EXPIRED');

    if (await freeKeyExists(deps.sql, hostname)) throw new PalisadeError('HOSTNAME_TAKEN');
    const t = now();
    const until = claimUntil(Math.max(m2mExpiresAt(solution), t), t, DEFAULT_CLOCK_SKEW_MS);
    if (!(await deps.claimOnce(`m2m:${solution.challenge}`, until))) return challengeReply('ALTCHA_ALREADY_USED');

    try {
      const created = await createApiKey(deps.sql, deps.secrets, {
        hostnames: [hostname], kind: 'free', plan: options.plan ?? 'free',
      }, `api:generate ${anonymizeIp(req.ip)}`);
      return {
        status: 200,
        headers: { 'Cache-Control': 'no-store' },
        body: JSON.stringify({ apiKey: created.key.id, hostname, secret: created.secret }),
      };
    } catch (err) {
      if (isUniqueViolation(err)) throw new PalisadeError('HOSTNAME_TAKEN');
      throw err;
    }
  };
}
