// The ip, location and device dimensions of a classification, from IP intelligence
// (src/intel/intel.ts), the abuse penalty of the client, the browser's time zone and the
// request's or key's country rules. Signals flow one way (DESIGN.md section 10): intel and abuse
// feed these rules, never the reverse.
import type { IpSignals, UserAgentSignals } from '../intel/intel.js';
import { timeZoneCountries } from '../intel/time-zones.js';
import { ruleBlock } from './block.js';
import type { Block, RuleDefinition } from './types.js';

export const IP_RULES: readonly RuleDefinition[] = Object.freeze([
  { name: 'MALICIOUS_IP', dimension: 'ip', score: 3, description: 'The IP is on a malicious threat list (FireHOL level 1 and the like) or a trusted x-ip-malicious header says so.' },
  { name: 'TOR', dimension: 'ip', score: 2, description: 'The IP is a Tor exit node.' },
  { name: 'PROXY', dimension: 'ip', score: 1.5, description: 'The IP is a listed open proxy or anonymiser.' },
  { name: 'HOSTING', dimension: 'ip', score: 0.5, description: 'The IP belongs to a hosting or data-centre network, where few people browse from.' },
  { name: 'PENALTY', dimension: 'ip', score: 2, description: "The client's abuse penalty (failed solutions, probes, floods), in proportion up to a penalty of 16. Only for the requester's own IP." },
]);

export const LOCATION_RULES: readonly RuleDefinition[] = Object.freeze([
  { name: 'BLOCKED_COUNTRY', dimension: 'location', score: 5, description: 'The IP, or every country of the time zone, is in blockedCountries: classified as spam.' },
  { name: 'UNEXPECTED_COUNTRY', dimension: 'location', score: 1, description: 'expectedCountries is set and the IP country, or each country of the time zone, is not in it.' },
  { name: 'HIGH_RISK_COUNTRY', dimension: 'location', score: 0.75, description: 'The IP country is in HIGH_RISK_COUNTRIES.' },
  { name: 'TIME_ZONE_MISMATCH', dimension: 'location', score: 0.75, description: "The browser's time zone is not used in the IP's country (a proxy or VPN hides where the sender is)." },
]);

export const DEVICE_RULES: readonly RuleDefinition[] = Object.freeze([
  { name: 'BOT_USER_AGENT', dimension: 'device', score: 3, description: 'The User-Agent declares a bot or crawler.' },
  { name: 'NO_USER_AGENT', dimension: 'device', score: 1.5, description: 'The request has no User-Agent.' },
  { name: 'NON_BROWSER', dimension: 'device', score: 1, description: 'The User-Agent is a library or tool (curl, python-requests…), not a browser.' },
  { name: 'UNCOMMON_USER_AGENT', dimension: 'device', score: 0.5, description: 'The User-Agent is not on the common user-agent list (only when USER_AGENT_LIST_URL has loaded one).' },
]);

export interface IpBlock extends Block {
  readonly asn: number | null;
  readonly organization: string | null;
}

export interface LocationBlock extends Block {
  /** ISO 3166-1 code of the IP's country, else the time zone's when it names one country; null when unknown. */
  readonly countryCode: string | null;
  readonly timeZone: string | null;
}

export interface DeviceBlock extends Block {
  readonly kind: UserAgentSignals['kind'];
  readonly browser: string | null;
  readonly device: UserAgentSignals['device'];
}

/** The effective country rules of one classification (request fields, else the key's policy). */
export interface CountryLists {
  readonly expected: ReadonlySet<string> | null;
  readonly blocked: ReadonlySet<string> | null;
}

/** `penalty` counts only when the IP is the requester's own (0 otherwise). */
export function analyzeIp(signals: IpSignals, penalty: number, disabled: ReadonlySet<string>): IpBlock {
  const t0 = performance.now();
  const f = signals.flags;
  const block = ruleBlock(IP_RULES, {
    MALICIOUS_IP: f.malicious.value ? 1 : 0,
    TOR: f.tor.value ? 1 : 0,
    PROXY: f.proxy.value ? 1 : 0,
    HOSTING: f.hosting.value ? 1 : 0,
    PENALTY: penalty > 0 ? Math.min(1, penalty / 16) : 0,
  }, disabled, t0);
  return { ...block, asn: signals.asn, organization: signals.org };
}

/**
 * Null when nothing locates the sender (no IP country and no known time zone). `timeZone` is an
 * IANA name the caller validated.
 */
export function analyzeLocation(
  signals: IpSignals | null, timeZone: string | null, lists: CountryLists, disabled: ReadonlySet<string>,
): LocationBlock | null {
  const t0 = performance.now();
  const ipCountry = signals?.country ?? null;
  const zoneCountries = timeZone === null ? null : timeZoneCountries(timeZone);
  if (ipCountry === null && zoneCountries === null) return null;
  const inBlocked = (c: string) => lists.blocked!.has(c);
  const inExpected = (c: string) => lists.expected!.has(c);
  const blocked = lists.blocked !== null && (
    (ipCountry !== null && inBlocked(ipCountry)) || (zoneCountries !== null && zoneCountries.length > 0 && zoneCountries.every(inBlocked)));
  const unexpected = lists.expected !== null && (
    (ipCountry !== null && !inExpected(ipCountry)) || (zoneCountries !== null && zoneCountries.length > 0 && !zoneCountries.some(inExpected)));
  const mismatch = ipCountry !== null && zoneCountries !== null && zoneCountries.length > 0 && !zoneCountries.includes(ipCountry);
  const block = ruleBlock(LOCATION_RULES, {
    BLOCKED_COUNTRY: blocked ? 1 : 0,
    UNEXPECTED_COUNTRY: unexpected ? 1 : 0,
    HIGH_RISK_COUNTRY: signals?.highRiskCountry ? 1 : 0,
    TIME_ZONE_MISMATCH: mismatch ? 1 : 0,
  }, disabled, t0);
  const countryCode = ipCountry ?? (zoneCountries !== null && zoneCountries.length === 1 ? zoneCountries[0]! : null);
  return { ...block, countryCode, timeZone };
}

export function analyzeDevice(ua: UserAgentSignals, disabled: ReadonlySet<string>): DeviceBlock {
  const t0 = performance.now();
  const block = ruleBlock(DEVICE_RULES, {
    BOT_USER_AGENT: ua.kind === 'bot' ? 1 : 0,
    NO_USER_AGENT: ua.kind === 'none' ? 1 : 0,
    NON_BROWSER: ua.kind === 'other' ? 1 : 0,
    UNCOMMON_USER_AGENT: ua.kind === 'browser' && ua.commonness === 'uncommon' ? 1 : 0,
  }, disabled, t0);
  return { ...block, kind: ua.kind, browser: ua.browser, device: ua.device };
}
