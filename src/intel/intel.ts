// IP intelligence of one request, in one place: the location and network of the client IP
// (geo.ts, or the load balancer's x-ip-* headers when they carry IP_HEADERS_SECRET), its flags
// (hosting, proxy, tor, malicious, mobile) with the source that set each, the high-risk country
// rule, and the User-Agent verdict. The penalty reads `raise`; /v1/inspect reads `signals`.
//
// Trusted headers (values as the load balancer sends them; booleans as structured-field ?1/?0, or
// 1/0/true/false): x-ip-country-code (or x-ip-country), x-ip-region, x-ip-city, x-ip-lat, x-ip-lon,
// x-ip-hosting, x-ip-proxy, x-ip-tor, x-ip-malicious, x-ip-mobile. A header given wins over the
// databases and lists; without the secret (x-ip-headers-secret, or Sentinel's x-ip-secret,
// compared in constant time) every x-ip-* header is ignored.
import type { ThreatIndex } from './threat-index.js';
import { KIND_BIT, THREAT_LIST_KINDS, type ThreatListKind } from './threat-sources.js';
import type { Geo } from './geo.js';
import { classifyUserAgent, type UserAgentVerdict } from './user-agent.js';
import type { UserAgentCommonness, UserAgentList } from './user-agent-list.js';
import { ipHeadersTrusted } from '../http/client-ip.js';

export const FLAG_NAMES = ['hosting', 'proxy', 'tor', 'malicious', 'mobile'] as const;
export type FlagName = (typeof FLAG_NAMES)[number];

export interface Flag {
  readonly value: boolean;
  /** 'header', a threat source's name, or null when nothing said so. */
  readonly source: string | null;
}

export interface IpSignals {
  readonly country: string | null;
  readonly region: string | null;
  readonly city: string | null;
  readonly latitude: number | null;
  readonly longitude: number | null;
  readonly asn: number | null;
  readonly org: string | null;
  /** Where the location came from: 'header', a database name, or null. */
  readonly locationSource: string | null;
  readonly networkSource: string | null;
  readonly flags: Readonly<Record<FlagName, Flag>>;
  readonly highRiskCountry: boolean;
  readonly headersTrusted: boolean;
}

export interface UserAgentSignals extends UserAgentVerdict, UserAgentCommonness {}

/** Penalty raises (docs/intel.md). A malicious flag raises what a malicious listing raises (abuse). */
export const INTEL_RAISES = Object.freeze({ highRiskCountry: 1, hosting: 1, unexpectedCountry: 1 });

export interface IntelDeps {
  readonly geo: Geo | null;
  /** The threat lists (threat-index.ts). */
  readonly threats?: Pick<ThreatIndex, 'match' | 'matchSources' | 'stats'> | null;
  readonly userAgents?: () => UserAgentList;
  /** Upper-case ISO codes. */
  readonly highRiskCountries: readonly string[];
  /** IP_HEADERS_SECRET ('' = x-ip-* headers are never trusted). */
  readonly ipHeadersSecret: string;
}

export interface Intel {
  signals(ip: string, headers?: Readonly<Record<string, string>>): IpSignals;
  userAgent(headers: Readonly<Record<string, string>>): UserAgentSignals;
  /** The country only (the key's country rules); null when unknown. */
  country(ip: string, headers?: Readonly<Record<string, string>>): string | null;
  /** Raise of the high-risk country and hosting rules (the malicious raise is the abuse module's). */
  raise(s: IpSignals): number;
  /** Names of the threat sources listing `ip`. */
  lists(ip: string): string[];
  /**
   * What a verification signs and a request-log row keeps (docs/intel.md): the country, the
   * high-risk rule, and per threat kind the list (or 'header') naming the IP. One geolocation
   * lookup and one threat-index match; the sources are looked up only for a listed IP.
   */
  client(ip: string, headers?: Readonly<Record<string, string>>): ClientSignals;
  /** The penalty's view (src/abuse/index.ts): cheaper than signals(), no threat-list lookups. */
  assess(ip: string, headers: Readonly<Record<string, string>> | undefined): IntelAssessment;
}

export interface ClientSignals {
  readonly country: string | null;
  readonly highRiskCountry: boolean;
  /** Kind → the source that listed the IP; null when nothing did. */
  readonly threats: Readonly<Partial<Record<ThreatListKind, string>>> | null;
}

export interface IntelAssessment {
  /** High-risk country and hosting raises. */
  readonly raise: number;
  /** A trusted x-ip-malicious: raised as a malicious listing is. */
  readonly malicious: boolean;
  /** Threat events to report: trusted x-ip-proxy / x-ip-tor, and a declared bot User-Agent. */
  readonly report: readonly ('bot' | 'proxy' | 'tor')[];
}

const NO_SIGNALS: ClientSignals = Object.freeze({ country: null, highRiskCountry: false, threats: null });
const CLEAN: IntelAssessment = Object.freeze({ raise: 0, malicious: false, report: Object.freeze([]) });

const NOT_SET: Flag = Object.freeze({ value: false, source: null });
const HEADER_TRUE: Flag = Object.freeze({ value: true, source: 'header' });
const HEADER_FALSE: Flag = Object.freeze({ value: false, source: 'header' });
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export function createIntel(deps: IntelDeps): Intel {
  const highRisk = new Set(deps.highRiskCountries.map((c) => c.toUpperCase()));
  const trusted = (h: Readonly<Record<string, string>>) => deps.ipHeadersSecret !== '' && ipHeadersTrusted(h, deps.ipHeadersSecret);
  const t = deps.threats ?? null;
  const kindOf = new Map<string, ThreatListKind>(t ? t.stats().map((x) => [x.name, x.kind]) : []);

  const country = (ip: string, headers: Readonly<Record<string, string>> = NO_HEADERS): string | null => {
    if (trusted(headers)) {
      const c = headerCountry(headers);
      if (c !== null) return c;
    }
    return deps.geo?.lookup(ip).country ?? null;
  };

  return {
    signals(ip, headers = NO_HEADERS) {
      const g = deps.geo?.lookup(ip);
      const h = trusted(headers);
      const hc = h ? headerCountry(headers) : null;
      const lat = h ? headerNumber(headers['x-ip-lat'], 90) : null;
      const lon = h ? headerNumber(headers['x-ip-lon'], 180) : null;
      const hRegion = h ? headerText(headers['x-ip-region']) : null;
      const hCity = h ? headerText(headers['x-ip-city']) : null;
      const fromHeader = hc !== null || hRegion !== null || hCity !== null;
      const bits = t?.match(ip) ?? 0;
      const sourceOf = (kind: ThreatListKind): Flag => {
        if ((bits & KIND_BIT[kind]) === 0) return NOT_SET;
        return { value: true, source: t!.matchSources(ip).find((n) => kindOf.get(n) === kind) ?? null };
      };
      const flag = (name: string, fallback: () => Flag): Flag => {
        if (h) {
          const b = headerBool(headers[`x-ip-${name}`]);
          if (b !== null) return b ? HEADER_TRUE : HEADER_FALSE;
        }
        return fallback();
      };
      const flags = {
        hosting: flag('hosting', () => NOT_SET),
        proxy: flag('proxy', () => sourceOf('proxy')),
        tor: flag('tor', () => sourceOf('tor')),
        malicious: flag('malicious', () => sourceOf('malicious')),
        mobile: flag('mobile', () => NOT_SET),
      };
      const c = hc ?? g?.country ?? null;
      return {
        country: c,
        region: hRegion ?? (fromHeader ? null : g?.region ?? null),
        city: hCity ?? (fromHeader ? null : g?.city ?? null),
        latitude: lat, longitude: lon,
        asn: g?.asn ?? null, org: g?.org ?? null,
        locationSource: fromHeader ? 'header' : g?.locationSource ?? null,
        networkSource: g?.networkSource ?? null,
        flags, highRiskCountry: c !== null && highRisk.has(c), headersTrusted: h,
      };
    },
    userAgent(headers) {
      const ua = headers['user-agent'];
      const verdict = classifyUserAgent(ua);
      const list = deps.userAgents?.();
      const common = list && ua ? list.commonness(ua) : { commonness: 'unknown' as const, share: null, rank: null };
      return { ...verdict, ...common };
    },
    country,
    client(ip, headers = NO_HEADERS) {
      const h = trusted(headers);
      const c = (h ? headerCountry(headers) : null) ?? deps.geo?.lookup(ip).country ?? null;
      const bits = t?.match(ip) ?? 0;
      let threats: Partial<Record<ThreatListKind, string>> | null = null;
      if (bits !== 0 || h) {
        const names = bits === 0 ? [] : t!.matchSources(ip);
        for (const kind of THREAT_LIST_KINDS) {
          // A trusted header, when given, says yes or no for its kind over the lists (as in signals()).
          const b = h && kind !== 'bot' ? headerBool(headers[`x-ip-${kind}`]) : null;
          const source = b !== null ? (b ? 'header' : null)
            : (bits & KIND_BIT[kind]) !== 0 ? names.find((n) => kindOf.get(n) === kind) ?? null : null;
          if (source !== null) (threats ??= {})[kind] = source;
        }
      }
      if (c === null && threats === null) return NO_SIGNALS;
      return { country: c, highRiskCountry: c !== null && highRisk.has(c), threats };
    },
    lists: (ip) => t?.matchSources(ip) ?? [],
    assess(ip, headers) {
      const h = headers !== undefined && trusted(headers);
      const c = (h ? headerCountry(headers) : null) ?? deps.geo?.lookup(ip).country ?? null;
      let raise = c !== null && highRisk.has(c) ? INTEL_RAISES.highRiskCountry : 0;
      let malicious = false;
      let report: ('bot' | 'proxy' | 'tor')[] | null = null;
      if (h) {
        if (headerBool(headers['x-ip-hosting']) === true) raise += INTEL_RAISES.hosting;
        malicious = headerBool(headers['x-ip-malicious']) === true;
        if (headerBool(headers['x-ip-proxy']) === true) (report ??= []).push('proxy');
        if (headerBool(headers['x-ip-tor']) === true) (report ??= []).push('tor');
      }
      const ua = headers?.['user-agent'];
      if (ua !== undefined && classifyUserAgent(ua).kind === 'bot') (report ??= []).push('bot');
      if (raise === 0 && !malicious && report === null) return CLEAN;
      return { raise, malicious, report: report ?? CLEAN.report };
    },
    raise(s) {
      let r = 0;
      if (s.highRiskCountry) r += INTEL_RAISES.highRiskCountry;
      if (s.flags.hosting.value) r += INTEL_RAISES.hosting;
      return r;
    },
  };
}

function headerCountry(h: Readonly<Record<string, string>>): string | null {
  const v = (h['x-ip-country-code'] ?? h['x-ip-country'])?.trim();
  return v !== undefined && /^[A-Za-z]{2}$/.test(v) ? v.toUpperCase() : null;
}

function headerBool(v: string | undefined): boolean | null {
  if (v === undefined) return null;
  switch (v.trim().toLowerCase()) {
    case '?1': case '1': case 'true': return true;
    case '?0': case '0': case 'false': return false;
    default: return null;
  }
}

function headerNumber(v: string | undefined, limit: number): number | null {
  if (v === undefined || !/^-?[0-9]{1,3}(\.[0-9]{1,10})?$/.test(v.trim())) return null;
  const n = Number(v);
  return Math.abs(n) <= limit ? n : null;
}

/** Free text from a header: at most 100 characters, printable only. */
function headerText(v: string | undefined): string | null {
  if (v === undefined) return null;
  const t = v.trim();
  return t !== '' && t.length <= 100 && !/[\u0000-\u001f\u007f]/.test(t) ? t : null;
}
