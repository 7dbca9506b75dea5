// Downloaded lists and IP intelligence: phishing, disposable e-mail and user-agent lists, threat
// sources (FireHOL and THREATS_SOURCES), high-risk countries, geolocation databases.
import { Cron } from 'croner';
import { parseList } from '../parse.js';
import { MAXMIND_DEFAULT_DOWNLOAD_URL as MAXMIND_DEFAULT_URL } from '../intel/intel-lists.js';
import { FIREHOL_BASE, parseThreatSources, threatSources, type ThreatSource } from '../intel/threat-sources.js';
import { bool, type Check, cron, ms, oneOf, type Parser, size, str, uint, url, v } from './variable.js';

/** A list schedule: a cron pattern of 5 fields, or 6 with seconds first (croner's syntax). */
const schedule: Parser<string> = (s) => {
  const pattern = s.trim();
  const fields = pattern.split(/\s+/).length;
  if (fields !== 5 && fields !== 6) throw new Error(`"${s}" is not a cron pattern (5 fields, or 6 with seconds first)`);
  try {
    new Cron(pattern, { paused: true }).stop();
  } catch (err) {
    throw new Error(`"${s}": ${(err as Error).message}`);
  }
  return pattern;
};
const countries: Parser<string[]> = (s) => {
  const codes = parseList(s).map((c) => c.toLowerCase());
  const bad = codes.filter((c) => !/^[a-z]{2}$/.test(c));
  if (bad.length > 0) throw new Error(`not ISO 3166-1 alpha-2 codes: ${bad.join(', ')}`);
  return codes;
};
const sources: Parser<ThreatSource[]> = (s) => parseThreatSources(s, schedule);

export const LIST_VARIABLES = {
PHISHING_LIST_URL: v('Lists', 'https://data.phishtank.com/data/online-valid.csv', url, 'Phishing URLs in the PhishTank CSV format (a header line naming phish_id, url, submission_time, verified, online, target; gzip accepted), downloaded on PHISHING_LIST_SCHEDULE and matched by the text rules (URL_PHISHING). PhishTank members may put their application key in the URL (https://data.phishtank.com/data/<key>/online-valid.csv); it is masked in logs and the list status. Empty disables: no phishing list (nothing ships embedded).', true),
  PHISHING_LIST_SIZE_LIMIT: v('Lists', '20MB', size, 'Largest phishing list download; the transfer is aborted past it and the previous list stays.'),
  PHISHING_LIST_MAX_ENTRIES: v('Lists', '100000', uint(1), 'Most phishing list entries; a download with more is refused and the previous list stays.'),
  PHISHING_LIST_SCHEDULE: v('Lists', '0 */12 * * *', cron, 'Phishing list update schedule (cron); empty disables downloads.'),
  EMAIL_LIST_DISPOSABLE: v('Lists', 'https://raw.githubusercontent.com/disposable-email-domains/disposable-email-domains/master/disposable_email_blocklist.conf', url, 'Disposable e-mail domains, one per line (# comments, blank and invalid lines skipped; subdomains of a listed domain match too), downloaded on EMAIL_LIST_DISPOSABLE_SCHEDULE; a download replaces the list embedded from the disposable-email-domains npm package (about 121,000 domains), which is used until the first download and when this is empty. ALTCHA Sentinel documents domains.txt of the same repository, which it does not have (404); its list file is disposable_email_blocklist.conf. Empty disables downloads.'),
  EMAIL_LIST_DISPOSABLE_SIZE_LIMIT: v('Lists', '5MB', size, 'Largest disposable-email list download; the transfer is aborted past it and the previous list stays.'),
  EMAIL_LIST_DISPOSABLE_MAX_ENTRIES: v('Lists', '100000', uint(1), 'Most disposable-email domains; a download with more is refused and the previous list stays.'),
  EMAIL_LIST_DISPOSABLE_SCHEDULE: v('Lists', '0 0 * * *', cron, 'Disposable-email list update schedule (cron); empty disables downloads.'),
  USER_AGENT_LIST_SIZE_LIMIT: v('Lists', '20MB', size, 'Largest user-agent list download.'),
  USER_AGENT_LIST_MAX_ENTRIES: v('Lists', '10000', uint(1), 'Most user-agent list entries kept.'),
  USER_AGENT_LIST_SCHEDULE: v('Lists', '0 0 * * *', cron, 'User-agent list update schedule (cron).'),
  MAXMIND_DOWNLOAD_SCHEDULE: v('Lists', '0 0 * * *', cron, 'MaxMind database update schedule (cron).'),
  IPINFO_IO_MMDB_DOWNLOAD_SCHEDULE: v('Lists', '0 0 * * *', cron, 'IPinfo database update schedule (cron).'),
  THREATS_ENABLED: v('Lists', '1', bool, 'Threat detection: probe and malicious counters, IP marks, and the threat lists (FIREHOL_*_URL, THREATS_SOURCES; docs/threats.md). 0 turns all of it off, downloads included.'),
  THREATS_INDEX_STORE: v('Lists', 'auto', oneOf('auto', 'memory', 'sqlite'), 'Where the threat-list index is kept: auto and memory = sorted ranges in memory in each serving process (about 8 bytes per IPv4 range, 32 per IPv6 range). sqlite is not implemented yet and refused at start.'),
  FIREHOL_LEVEL1_URL: v('Lists', `${FIREHOL_BASE}/firehol_level1.netset`, url, 'Threat source of kind malicious (FireHOL level 1): a list of IPs/CIDRs, one per line. A listed client gets the penalty raise of a malicious mark on challenge and verify. Empty disables.'),
  FIREHOL_LEVEL1_SCHEDULE: v('Lists', '10 */6 * * *', schedule, 'Update schedule of FIREHOL_LEVEL1_URL (cron; 5 fields, or 6 with seconds first).'),
  FIREHOL_PROXIES_URL: v('Lists', `${FIREHOL_BASE}/firehol_proxies.netset`, url, 'Threat source of kind proxy (FireHOL proxies): a listed client counts as a proxy threat event against THREATS_PROXY_LIMIT. Empty disables.'),
  FIREHOL_PROXIES_SCHEDULE: v('Lists', '20 */6 * * *', schedule, 'Update schedule of FIREHOL_PROXIES_URL (cron).'),
  FIREHOL_TOR_EXITS_URL: v('Lists', `${FIREHOL_BASE}/tor_exits.ipset`, url, 'Threat source of kind tor (Tor exit nodes): a listed client counts as a tor threat event against THREATS_TOR_LIMIT. Empty disables.'),
  FIREHOL_TOR_EXITS_SCHEDULE: v('Lists', '30 * * * *', schedule, 'Update schedule of FIREHOL_TOR_EXITS_URL (cron; the exit list changes hourly).'),
  THREATS_SOURCES: v('Lists', '', sources, 'More threat sources: entries separated by ; or new lines, each kind[:name]=url[|schedule] with kind malicious, proxy, tor or bot; name defaults to the URL\'s file name without extension; schedule defaults to 25 */6 * * *. E.g. bot=https://example.org/botscout_30d.ipset|0 3 * * *. A ; or | inside a URL must be percent-encoded.'),
  THREATS_LIST_SIZE_LIMIT: v('Lists', '64MB', size, 'Largest download of one threat source; the transfer is aborted past it and the previous list stays.'),
  THREATS_LIST_MAX_ENTRIES: v('Lists', '2000000', uint(1), 'Most entries (IPs/CIDRs) of one threat source; a download with more is refused and the previous list stays.'),
  LIST_DOWNLOAD_TIMEOUT: v('Lists', '60s', ms, 'Deadline of one list download, headers and body together.'),
  HIGH_RISK_COUNTRIES: v('Lists', 'by,cd,cf,cu,il,iq,ir,kp,lb,ly,mm,ng,ru,sd,so,sy,ua,ve,zw', countries, 'ISO 3166-1 alpha-2 codes of high-risk countries (case-insensitive; empty = none): a client located in one gets a penalty raise of 1 on challenge and verify (docs/intel.md).'),
  GEO_EMBEDDED_ASN: v('Lists', '1', bool, 'Resolve ASN and organisation from the embedded @ip-location-db/asn data (a range index of about 11 MB built in a worker thread of each serving process at start, about 0.5 s). 0 = only from a downloaded database that has them.'),
  MAXMIND_ACCOUNT_ID: v('Lists', '', str, 'MaxMind account ID: with MAXMIND_LICENSE_KEY, MAXMIND_DOWNLOAD_URL is downloaded on MAXMIND_DOWNLOAD_SCHEDULE (HTTP Basic auth) and asked before the embedded databases (city, region, ASN where it has them).'),
  MAXMIND_LICENSE_KEY: v('Lists', '', str, 'MaxMind license key (see MAXMIND_ACCOUNT_ID).', true),
  MAXMIND_DOWNLOAD_URL: v('Lists', MAXMIND_DEFAULT_URL, url, 'MaxMind database download: a .tar.gz holding one .mmdb (MaxMind\'s own format) or a plain .mmdb file. Downloaded when MAXMIND_LICENSE_KEY is set, or without credentials when this is set to another URL (e.g. a mirror). Empty disables.'),
  IPINFO_IO_MMDB_DOWNLOAD_URL: v('Lists', '', url, 'IPinfo MMDB download URL with its token (e.g. https://ipinfo.io/data/ipinfo_lite.mmdb?token=…); downloaded on IPINFO_IO_MMDB_DOWNLOAD_SCHEDULE and asked after MaxMind, before the embedded databases. Empty disables.', true),
  GEO_DATABASE_SIZE_LIMIT: v('Lists', '512MB', size, 'Largest download of one geolocation database (compressed size for a .tar.gz).'),
  USER_AGENT_LIST_URL: v('Lists', '', url, 'Common user agents in the intoli/user-agents format (a JSON array of {userAgent, weight, deviceCategory}, gzipped or not), downloaded on USER_AGENT_LIST_SCHEDULE; the USER_AGENT_LIST_MAX_ENTRIES heaviest are kept. Empty = commonness unknown.'),
} as const;

/** The threat-list index store is one that exists; the threat sources (built-in and THREATS_SOURCES) agree. */
export const checkLists: Check = (out) => {
  const problems: string[] = [];
  if (out.THREATS_INDEX_STORE === 'sqlite') problems.push('THREATS_INDEX_STORE: sqlite is not implemented yet; use auto or memory');
  if (out.THREATS_SOURCES !== undefined) {
    try {
      threatSources(out as unknown as Parameters<typeof threatSources>[0]);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  return problems;
};
