// GET /v1/inspect?apiKey=key_…: what the service derives from the calling request (docs/intel.md
// has the shape and what each field means). Public and authorised like the challenge (the key's
// hostnames against Origin/Referer); it changes nothing: no threat event, no header count, no usage.
import type { Handler, RequestContext, Reply } from '../http/types.js';
import { json } from '../http/types.js';
import { anonymizeIp } from '../ip.js';
import type { ApiKey } from '../keys/types.js';
import type { Intel } from '../intel/intel.js';
import { checkCountry, parseCountryRules, type CountryRules } from '../intel/key-countries.js';
import { isPalisadeError } from '../errors.js';
import type { ThreatKind } from '../abuse/index.js';

export interface InspectRouteDeps {
  readonly authorizeBrowser: (req: RequestContext) => ApiKey | Promise<ApiKey>;
  readonly intel: Intel;
  readonly deviceKey: (ip: string, headers: Readonly<Record<string, string>>) => string;
  readonly penalty: (ip: string, headers: Readonly<Record<string, string>>) => number | Promise<number>;
  readonly score: (ip: string, penalty: number) => number | Promise<number>;
  /** The threat kinds the IP is marked for now. */
  readonly marks: (ip: string) => Promise<ThreatKind[]>;
  /** Names of the threat sources listing the IP. */
  readonly lists: (ip: string) => string[];
  readonly anonymizeIp: boolean;
}

export function inspectRoute(deps: InspectRouteDeps): Handler {
  const rulesOf = new WeakMap<object, CountryRules | null>();
  const countryRules = (key: ApiKey): CountryRules | null => {
    const stored = key.challengePolicy;
    if (stored === null) return null;
    if (!rulesOf.has(stored)) rulesOf.set(stored, parseCountryRules(stored));
    return rulesOf.get(stored)!;
  };
  return async (req: RequestContext): Promise<Reply> => {
    const key = await deps.authorizeBrowser(req);
    const { ip, headers } = req;
    const s = deps.intel.signals(ip, headers);
    const ua = deps.intel.userAgent(headers);
    const penalty = await deps.penalty(ip, headers);
    const [score, marks] = await Promise.all([deps.score(ip, penalty), deps.marks(ip)]);
    let countryBlocked = false;
    let countryRaise = 0;
    try {
      countryRaise = checkCountry(countryRules(key), s.country);
    } catch (err) {
      if (!isPalisadeError(err) || err.code !== 'COUNTRY_BLOCKED') throw err;
      countryBlocked = true;
    }
    return json({
      ip: deps.anonymizeIp ? anonymizeIp(ip) : ip,
      ipAnonymized: deps.anonymizeIp,
      location: {
        country: s.country, region: s.region, city: s.city, latitude: s.latitude, longitude: s.longitude,
        highRiskCountry: s.highRiskCountry, source: s.locationSource,
      },
      network: { asn: s.asn, organization: s.org, source: s.networkSource },
      flags: s.flags,
      headersTrusted: s.headersTrusted,
      userAgent: ua,
      deviceKey: deps.deviceKey(ip, headers),
      penalty: penalty + countryRaise,
      score,
      threats: { marks, lists: deps.lists(ip) },
      key: { countryBlocked, unexpectedCountry: countryRaise > 0 },
    }, 200, { 'cache-control': 'no-store' });
  };
}
