// Threat sources: downloaded lists of IP addresses and CIDRs, each of one kind.
//   FIREHOL_LEVEL1_URL     → firehol_level1   (malicious)
//   FIREHOL_PROXIES_URL    → firehol_proxies  (proxy)
//   FIREHOL_TOR_EXITS_URL  → tor_exits        (tor)
//   THREATS_SOURCES        → more, of any kind (syntax below)
// An empty URL disables a source.
//
// THREATS_SOURCES: entries separated by `;` or new lines, each
//     kind[:name]=url[|schedule]
// kind is malicious, proxy, tor or bot; name (letters, digits, _ and -; default the URL's file name
// without extension, e.g. botscout_30d) names the file in DATA_DIR/lists and the metric label;
// schedule is a cron pattern (default THREATS_SOURCES_DEFAULT_SCHEDULE). A `;` or `|` inside a URL
// must be percent-encoded (%3B, %7C).
import { LIST_NAME } from '../lists/list-store.js';

export const THREAT_LIST_KINDS = ['malicious', 'proxy', 'tor', 'bot'] as const;
export type ThreatListKind = (typeof THREAT_LIST_KINDS)[number];

/** One bit per kind in a lookup's answer. */
export const KIND_BIT: Readonly<Record<ThreatListKind, number>> = Object.freeze({ malicious: 1, proxy: 2, tor: 4, bot: 8 });

export interface ThreatSource {
  readonly name: string;
  readonly kind: ThreatListKind;
  readonly url: string;
  readonly schedule: string;
}

export const FIREHOL_BASE = 'https://raw.githubusercontent.com/firehol/blocklist-ipsets/master';
/** Update schedules of sources without their own: every six hours, at a minute off the hour. */
export const THREATS_SOURCES_DEFAULT_SCHEDULE = '25 */6 * * *';

/** Parses THREATS_SOURCES; `validSchedule` throws on a bad cron pattern. */
export function parseThreatSources(raw: string, validSchedule: (s: string) => string): ThreatSource[] {
  const out: ThreatSource[] = [];
  for (const part of raw.split(/[;\n]/)) {
    const entry = part.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    if (eq < 1) throw new Error(`"${entry}" is not kind[:name]=url[|schedule]`);
    const head = entry.slice(0, eq).trim();
    const colon = head.indexOf(':');
    const kind = (colon < 0 ? head : head.slice(0, colon)).trim();
    if (!(THREAT_LIST_KINDS as readonly string[]).includes(kind)) throw new Error(`"${kind}" is not one of ${THREAT_LIST_KINDS.join(', ')}`);
    const bar = entry.indexOf('|', eq);
    const url = (bar < 0 ? entry.slice(eq + 1) : entry.slice(eq + 1, bar)).trim();
    let parsed: URL;
    try { parsed = new URL(url); } catch { throw new Error(`a source of kind ${kind} has no valid URL`); }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`a source of kind ${kind}: only http and https URLs`);
    const name = colon < 0 ? nameFromUrl(parsed) : head.slice(colon + 1).trim().toLowerCase();
    if (!LIST_NAME.test(name)) throw new Error(`source name "${name}" must be 1-64 letters, digits, _ or - (give one as kind:name=url)`);
    const schedule = bar < 0 ? THREATS_SOURCES_DEFAULT_SCHEDULE : validSchedule(entry.slice(bar + 1).trim());
    if (out.some((s) => s.name === name)) throw new Error(`two sources are named ${name}`);
    out.push({ name, kind: kind as ThreatListKind, url, schedule });
  }
  return out;
}

function nameFromUrl(url: URL): string {
  const file = url.pathname.split('/').pop() ?? '';
  return file.replace(/\.[^.]*$/, '').toLowerCase();
}

/** The configuration a source list is built from (names as in src/config/). */
export interface ThreatSourcesConfig {
  readonly FIREHOL_LEVEL1_URL: string | null;
  readonly FIREHOL_LEVEL1_SCHEDULE: string;
  readonly FIREHOL_PROXIES_URL: string | null;
  readonly FIREHOL_PROXIES_SCHEDULE: string;
  readonly FIREHOL_TOR_EXITS_URL: string | null;
  readonly FIREHOL_TOR_EXITS_SCHEDULE: string;
  readonly THREATS_SOURCES: readonly ThreatSource[];
}

/** Every enabled source, FireHOL's first. */
export function threatSources(config: ThreatSourcesConfig): ThreatSource[] {
  const out: ThreatSource[] = [];
  if (config.FIREHOL_LEVEL1_URL) out.push({ name: 'firehol_level1', kind: 'malicious', url: config.FIREHOL_LEVEL1_URL, schedule: config.FIREHOL_LEVEL1_SCHEDULE });
  if (config.FIREHOL_PROXIES_URL) out.push({ name: 'firehol_proxies', kind: 'proxy', url: config.FIREHOL_PROXIES_URL, schedule: config.FIREHOL_PROXIES_SCHEDULE });
  if (config.FIREHOL_TOR_EXITS_URL) out.push({ name: 'tor_exits', kind: 'tor', url: config.FIREHOL_TOR_EXITS_URL, schedule: config.FIREHOL_TOR_EXITS_SCHEDULE });
  for (const s of config.THREATS_SOURCES) {
    if (out.some((o) => o.name === s.name)) throw new Error(`THREATS_SOURCES: the name ${s.name} is taken by a FIREHOL_* source`);
    out.push(s);
  }
  return out;
}
