// The only reader of process.env. One table of every variable (interface spec sections 5 and 8,
// plus Palisade's own), each with its default, parser and meaning; docs/configuration.md is generated
// from this table (`npm run docs:config`) and a test keeps the two in step. Values are parsed once,
// every problem is reported together in one ConfigError, and the result is frozen.
import { existsSync, readFileSync } from 'node:fs';
import { accessSync, constants } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import {
  type CidrList, type RateRule, type RateRuleKey, RATE_RULE_KEYS,
  parseBoolean, parseCidrList, parseCron, parseDuration, parseInteger, parseList, parseRateRule, parseSize,
} from './parse.js';
import { resolveSecrets, SECRET_NAMES, seedProblem, type Secrets } from './secrets.js';
import { Cron } from 'croner';
import { FIREHOL_BASE, parseThreatSources, threatSources, type ThreatSource } from './intel/threat-sources.js';
import { STORE_LIMITS } from './store/state-store.js';

type Parser<T> = (raw: string) => T;

interface VarSpec<T> {
  /** Default as the raw string a user would write ('' = empty/unset). */
  readonly def: string;
  readonly parse: Parser<T>;
  readonly doc: string;
  /** Never print the value (secrets, credentials, URLs with passwords). */
  readonly secret?: boolean;
  /** Where the variable groups in the documentation. */
  readonly group: string;
}

function v<T>(group: string, def: string, parse: Parser<T>, doc: string, secret = false): VarSpec<T> {
  return { group, def, parse, doc, secret };
}

const str: Parser<string> = (s) => s;
const optional = (s: string): string | null => (s === '' ? null : s);
const bool: Parser<boolean> = parseBoolean;
const ms: Parser<number> = (s) => parseDuration(s, 'ms');
const secs: Parser<number> = (s) => parseDuration(s, 's');
const size: Parser<number> = parseSize;
const optSize: Parser<number | null> = (s) => (s.trim() === '' ? null : parseSize(s));
const uint = (min = 0, max = 2 ** 31 - 1): Parser<number> => (s) => parseInteger(s, min, max);
const optUint = (min = 0, max = 2 ** 31 - 1): Parser<number | null> => (s) => (s.trim() === '' ? null : parseInteger(s, min, max));
const list: Parser<string[]> = parseList;
const cidrs: Parser<CidrList> = parseCidrList;
const cron: Parser<string | null> = (s) => (s.trim() === '' ? null : parseCron(s));
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
import { MAXMIND_DEFAULT_DOWNLOAD_URL as MAXMIND_DEFAULT_URL } from './intel/intel-lists.js';
const countries: Parser<string[]> = (s) => {
  const codes = parseList(s).map((c) => c.toLowerCase());
  const bad = codes.filter((c) => !/^[a-z]{2}$/.test(c));
  if (bad.length > 0) throw new Error(`not ISO 3166-1 alpha-2 codes: ${bad.join(', ')}`);
  return codes;
};
const sources: Parser<ThreatSource[]> = (s) => parseThreatSources(s, schedule);
const rule = (key: RateRuleKey = 'ip'): Parser<RateRule | null> => (s) => (s.trim() === '' ? null : parseRateRule(s, key));
const oneOf = <T extends string>(...values: T[]): Parser<T> => (s) => {
  const x = s.trim() as T;
  if (!values.includes(x)) throw new Error(`"${s}" is not one of ${values.join(', ')}`);
  return x;
};
const minLength = (n: number): Parser<string | null> => (s) => {
  if (s === '') return null;
  if (s.length < n) throw new Error(`must be at least ${n} characters`);
  return s;
};
const seed: Parser<string | null> = (s) => {
  if (s === '') return null;
  const problem = seedProblem(s);
  if (problem !== null) throw new Error(problem);
  return s;
};
const basePath: Parser<string> = (s) => {
  const p = s.trim().replace(/\/+$/, '');
  if (p !== '' && !/^\/[A-Za-z0-9._~\-/]*$/.test(p)) throw new Error(`"${s}" is not a path prefix such as /captcha`);
  return p;
};
const url: Parser<string | null> = (s) => {
  if (s.trim() === '') return null;
  try { new URL(s); } catch { throw new Error('is not a URL'); }
  return s.trim();
};
const credentials: Parser<{ user: string; password: string } | null> = (s) => {
  if (s === '') return null;
  const i = s.indexOf(':');
  if (i < 1 || i === s.length - 1) throw new Error('must be user:password');
  return { user: s.slice(0, i), password: s.slice(i + 1) };
};
const securityTxt: Parser<string> = (s) => s;
const hostPort: Parser<string | null> = (s) => (s.trim() === '' ? null : s.trim());
const port: Parser<number> = uint(0, 65535);
const dnsServers: Parser<string[]> = (s) => {
  const servers = parseList(s);
  const bad = servers.filter((server) => {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/.exec(server) ?? /^([0-9a-fA-F:]+)$/.exec(server);
    if (m === null) return true;
    const ip = m[1] ?? m[2]!;
    return isIP(ip) === 0 || (m[3] !== undefined && (Number(m[3]) < 1 || Number(m[3]) > 65535));
  });
  if (bad.length > 0) throw new Error(`not ip, ip:port or [ipv6]:port: ${bad.join(', ')}`);
  return servers;
};

export const DEFAULT_MONITORING_WHITELIST =
  '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,127.0.0.1/32,::1/128,fd00::/8,100.64.0.0/10';

/** Every variable. Order is the documentation's order. */
export const VARIABLES = {
  // --- server
  PORT: v('Server', '8080', port, 'Listening port.'),
  WORKERS: v('Server', '', optUint(0, 256), 'Worker processes; empty = CONTAINER_CPUS, else the cgroup CPU quota, else the CPU count. 0 = run everything in one process.'),
  DATA_DIR: v('Server', '', str, 'Data directory (secrets, embedded database, state file). Empty = /data in a container (/.dockerenv or /run/.containerenv present and /data writable), else ./data.'),
  BASE_URL: v('Server', '', str, 'Base for absolute links (e.g. the verifyUrl in challenges). Empty = derived from the request Host.'),
  APP_BASE_PATH: v('Server', '', basePath, 'Path prefix under which every route is served (e.g. /captcha).'),
  ALLOWED_HOSTS: v('Server', '', list, 'Comma-separated hostnames the Host header may name (wildcards *.example.com); empty = any. Others get 403 HOST_NOT_ALLOWED.'),
  CORS_ORIGINS: v('Server', '', list, 'Comma-separated allowed CORS origins (wildcards https://*.example.com); empty = any origin.'),
  REQUEST_BODY_LIMIT: v('Server', '64KB', size, 'Largest JSON body on ordinary routes; enforced while reading (413 BODY_TOO_LARGE).'),
  REQUEST_TIMEOUT: v('Server', '10s', secs, 'A request whose body has not arrived completely within this time is answered 408 and closed.'),
  SHUTDOWN_TIMEOUT: v('Server', '10s', secs, 'On SIGTERM/SIGINT: how long in-flight requests may take before workers exit anyway.'),
  HTTP2_CERT: v('Server', '', optional, 'PEM certificate file: serve HTTPS directly (with HTTP2_KEY).'),
  HTTP2_KEY: v('Server', '', optional, 'PEM private key file for HTTP2_CERT.', true),
  SECURITY_TXT: v('Server', '', securityTxt, '/.well-known/security.txt: empty = a default pointing at BASE_URL; text = served as is; a path to a file = its content; 0 = disabled (404).'),
  API_DOCS_ENABLED: v('Server', '1', bool, 'Serve API docs at /v1/docs.'),
  INSPECT_ROUTE_ENABLED: v('Server', '1', bool, 'Enable GET /v1/inspect.'),
  NODE_NAME: v('Server', '', str, 'Human-readable node name (logs, health).'),
  TZ: v('Server', '', str, 'Application timezone (usage months); empty = the system timezone.'),
  USER_AGENT: v('Server', '', str, 'User-Agent of outbound requests (list downloads); empty = palisade/<version>.'),
  CONTAINER_CPUS: v('Server', '', optUint(1, 1024), 'CPU count override (auto-detected from cgroups).'),
  CONTAINER_MEMORY_LIMIT_MB: v('Server', '', optUint(16), 'Memory limit override in MB (auto-detected from cgroups).'),
  HEAP_LIMIT_MB: v('Server', '', optUint(16), "Each worker's --max-old-space-size; must stay below the memory limit. Empty = 75% of the memory limit divided among workers, when a limit is known."),
  // --- logs and monitoring
  LOG_LEVEL: v('Logs and monitoring', 'info', oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'), 'Log level.'),
  LOG_FORMAT: v('Logs and monitoring', 'json', oneOf('json', 'plain'), 'Log format on stdout.'),
  ACCESS_LOG_ENABLED: v('Logs and monitoring', '1', bool, 'Access log (one line per request) and per-request analytics.'),
  ACCESS_LOG_ANONYMIZE_IP_ADDRESS: v('Logs and monitoring', '1', bool, 'Anonymize IPs in the access log (IPv4 /24, IPv6 /48).'),
  MONITORING_IP_WHITELIST: v('Logs and monitoring', DEFAULT_MONITORING_WHITELIST, cidrs, 'IPs/CIDRs allowed to reach /.health, /.ready, /.live, /.logs, /.metrics.'),
  MONITORING_HTTP_CREDENTIALS: v('Logs and monitoring', '', credentials, 'user:password; when set, HTTP Basic auth is required instead of the whitelist (and allows access from anywhere).', true),
  OTEL_EXPORTER_OTLP_ENDPOINT: v('Logs and monitoring', '', url, 'OpenTelemetry collector URL (Enterprise in the reference service; parsed, export not implemented yet).'),
  OTEL_SERVICE_NAME: v('Logs and monitoring', 'palisade', str, 'Service name in traces and logs.'),
  OTEL_EXPORTER_OTLP_HEADERS: v('Logs and monitoring', '', str, 'Extra export headers.', true),
  OTEL_EXPORTER_OTLP_TIMEOUT: v('Logs and monitoring', '10000', ms, 'Export timeout (ms).'),
  // --- client IP
  X_FORWARDED_FOR_TRUSTED: v('Client IP', '', cidrs, 'Proxy IPs/CIDRs allowed to set X-Forwarded-For; the client IP is the right-most address not in this list.'),
  IP_HEADERS_SECRET: v('Client IP', '', str, 'When set, X-Real-IP / CF-Connecting-IP / True-Client-IP are honoured only if X-IP-Headers-Secret carries this value.', true),
  ANONYMIZE_IP_ADDRESS: v('Client IP', '1', bool, 'Anonymize IPs in stored request logs and verification data.'),
  // --- secrets
  SECRET_SEED: v('Secrets', '', seed, 'When set, every generated secret is derived from it with HKDF-SHA256 so all nodes agree; the primary writes the derived values to DATA_DIR/secrets.json, so a later start without the seed keeps them. Refused unless it has at least 24 characters, 10 different ones and an estimated 80 bits of entropy: its length times the smaller of the Shannon entropy of its characters and that of the differences between neighbouring characters (so repeats such as abab… and runs such as abcd… are refused; words of a passphrase count as random characters). E.g. `openssl rand -base64 32`. On a DATA_DIR whose secrets.json holds other values the service refuses to start, naming them: see SECRET_SEED_ROTATE.', true),
  SECRET_SEED_ROTATE: v('Secrets', '0', bool, 'With SECRET_SEED on a DATA_DIR whose secrets.json holds other PALISADE_HMAC_SECRET, CODE_CHALLENGE_SECRET, JWT_SECRET or HASHING_SALT values (generated before the seed was set, or derived from another seed): 1 = replace them with the derived values and rewrite secrets.json, so later starts agree with or without the seed. Every existing API key secret then fails with 401 API_KEY_INVALID until the key gets a new one (`npm run cli -- keys rotate KEY_ID`), challenges already issued fail verification and admin sessions end. 0 = refuse to start instead, naming the secrets that differ. The CLI never rotates: it refuses until the service has started once with the switch.'),
  PALISADE_HMAC_SECRET: v('Secrets', '', minLength(24), 'Signs challenges. Generated and persisted in DATA_DIR when unset.', true),
  CODE_CHALLENGE_SECRET: v('Secrets', '', minLength(24), 'Signs code challenges. Generated when unset.', true),
  JWT_SECRET: v('Secrets', '', minLength(24), 'Signs admin session JWTs. Generated when unset.', true),
  HASHING_SALT: v('Secrets', '', minLength(16), 'Salt for IP and secret hashing. Generated when unset.', true),
  NODE_ID: v('Secrets', '', str, 'Unique node identifier. Generated and persisted when unset (with SECRET_SEED: derived from it and NODE_NAME when NODE_NAME is set).'),
  EMBEDDED_DB_HMAC_SECRET: v('Secrets', '', minLength(24), 'When set, every stored request-log row carries an HMAC made with it.', true),
  CONTEXT_DATA_KEY: v('Secrets', '', str, 'AES-GCM key for context-override data of AI security rules (parsed; feature not implemented yet).', true),
  // --- admin area
  PASSWORD_LOGIN_ENABLED: v('Admin area', '1', bool, 'Password login to the admin area.'),
  PASSWORD_MIN_LENGTH: v('Admin area', '8', uint(1, 1024), 'Minimum admin password length.'),
  DEFAULT_ROOT_PASSWORD: v('Admin area', '', str, 'Initial root password (must be changed after first login); empty = generated and logged once.', true),
  JWT_ISSUER: v('Admin area', 'palisade', str, 'Issuer in session JWTs.'),
  JWT_TTL: v('Admin area', '24h', secs, 'Lifetime of a session JWT.'),
  APP_IP_WHITELIST: v('Admin area', '', cidrs, 'IPs/CIDRs allowed to use the admin area; empty = unrestricted.'),
  SSO_AZURE: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_GOOGLE: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_KEYCLOAK: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_OKTA: v('Admin area', '', str, 'OIDC configuration (Enterprise; parsed, not implemented).', true),
  SSO_LDAP: v('Admin area', '', str, 'LDAP configuration (Enterprise; parsed, not implemented).', true),
  // --- limits
  FLOOD_RATE_LIMIT: v('Limits', '100/1m', rule(), 'Global flood protection, checked before routing; empty disables.'),
  FLOOD_RATE_LIMIT_KEY: v('Limits', 'ip', oneOf(...RATE_RULE_KEYS), 'Key of the flood limit (ip aggregates IPv6 per /64).'),
  API_KEY_GENERATE_RATE_LIMIT: v('Limits', '10/1h', rule(), 'Free keys requested from one IP through POST /api_key/generate; empty disables.'),
  AUDIO_CHALLENGE_RATE_LIMIT: v('Limits', '10/5m(key=ip&block=10m)', rule(), 'Audio challenge endpoint.'),
  AUDIO_CHALLENGE_DELAY: v('Limits', '3s', secs, 'Delay before an audio challenge is returned.'),
  THREATS_MALICIOUS_LIMIT: v('Limits', '10/5m(expire=48h)', rule(), 'Malicious events (invalid signatures, replays, smuggling-shaped requests) per IP before it is marked.'),
  THREATS_PROBE_LIMIT: v('Limits', '2/5m(expire=48h)', rule(), 'Probe requests (scanner paths) per IP before it is marked.'),
  THREATS_BOT_LIMIT: v('Limits', '', rule(), 'Threats of kind bot (applied when IP intelligence reports them).'),
  THREATS_PROXY_LIMIT: v('Limits', '', rule(), 'Threats of kind proxy.'),
  THREATS_TOR_LIMIT: v('Limits', '', rule(), 'Threats of kind tor.'),
  EML_BODY_LIMIT: v('Limits', '5MB', size, 'Body size of POST /v1/eml.'),
  POW_MAX_MEMORY: v('Limits', '128MB', size, 'Memory a proof-of-work algorithm may request (scrypt, Argon2id).'),
  CHALLENGE_POOL_SIZE: v('Limits', '32', uint(1, 100_000), 'Challenges each worker derives ahead per expensive deterministic policy (PBKDF2, scrypt, Argon2id), refilled when fewer than a quarter are ready: a burst up to this size per worker is answered without waiting for a derivation (palisade_challenge_pool_takes_total{result="waited"} counts the takes that found it empty). Each ready challenge holds about 300 bytes; a deep pool also costs derivation CPU right after start-up.'),
  POW_MAX_THREADS: v('Limits', '', optUint(1, 256), 'Threads for expensive challenge creation and validation; empty = half the CPUs (at least 1).'),
  HEADER_ENTROPY_MAX_ENTRIES: v('Limits', '100', uint(1), 'Header-combination hashes stored per IP.'),
  PENALTY_TTL: v('Limits', '30m', secs, 'Lifetime of an accumulated penalty score (1s to 795d, the longest the state store keeps an entry).'),
  DELETE_SPAM_SUBMISSIONS_IN: v('Limits', '14d', secs, 'Spam-flagged submissions are deleted after this time.'),
  REQUEST_LOGS_TTL: v('Limits', '72h', secs, 'Retention of request logs.'),
  REQUEST_LOGS_MAX_RATE: v('Limits', '200', optUint(1), 'Most request-log rows stored per second by each worker (beyond it rows are left out and counted in palisade_request_logs_skipped_total; usage counters stay exact); empty = every request. Bounds what a flood costs the database.'),
  CACHE_DURATION_API_KEYS: v('Limits', '10s', secs, 'How long a worker caches an API key (a revoked key stops working within this time).'),
  CACHE_DURATION_TRAINING_DATA: v('Limits', '1h', secs, 'Cache of training data.'),
  CACHE_DURATION_USED_CHALLENGES: v('Limits', '4h', secs, 'Upper bound on how long a used challenge is remembered. A used challenge is remembered until it expires plus CLAIM_CLOCK_SKEW; challenges are issued to expire no later than this bound minus CLAIM_CLOCK_SKEW, so no claim outlives it.'),
  CLAIM_CLOCK_SKEW: v('Limits', '60s', ms, 'How long a used challenge (or signed payload, or request-signing salt) stays claimed past its expiry, for clocks that disagree across nodes; at least 1s.'),
  STATE_STORE_CAPACITY: v('Limits', '4194304', uint(1024, 2 ** 30), 'Slots of the shared-memory soft-state table: rate-limit windows, threat marks, penalties (16 bytes each; 4,194,304 = 64 MB file). When full, the least recently used entries are evicted (palisade_state_evictions_total); used challenges are kept apart and never evicted.'),
  STATE_STORE_MAX_MEMORY: v('Limits', '', optSize, 'Most memory the used-challenge claims of the shared-memory store may take (their files under <EMBEDDED_DB_REDIS_LOCATION>.claims grow and shrink with traffic, ~16 bytes per claim); past it verification answers 503 STORE_FULL, and past 80 % the log warns. Empty = 20 % of the container memory (CONTAINER_MEMORY_LIMIT_MB, else the cgroup limit, else the machine\'s memory).'),
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
  // --- data
  DEFAULT_ACCOUNT_NAME: v('Data', 'Default Account', str, 'Account created on first setup.'),
  EMBEDDED_DB_DATABASE_LOCATION: v('Data', 'db/palisade', str, 'Embedded PGlite database directory (relative to DATA_DIR).'),
  EMBEDDED_DB_DATABASE_ADDR: v('Data', '', hostPort, 'Optional loopback TCP address (host:port) for the embedded database besides its Unix socket; non-loopback addresses are refused (it has no authentication). The spec default :::4080 is not used for that reason.'),
  EMBEDDED_DB_REDIS_LOCATION: v('Data', 'db/state.shm', str, 'Shared-memory state file (relative to DATA_DIR).'),
  EMBEDDED_DB_REDIS_ADDR: v('Data', '', hostPort, 'Not used: the shared-memory state store has no network listener; use REDIS_URL for several nodes.'),
  REDIS_URL: v('Data', '', optional, 'External Redis for the state store (several nodes).', true),
  REDIS_COMMAND_TIMEOUT: v('Data', '5000', ms, 'Redis command timeout (ms); a request never waits longer.'),
  REDIS_CONNECT_TIMEOUT: v('Data', '10000', ms, 'Redis connect timeout (ms).'),
  REDIS_MAX_RETRIES: v('Data', '2', uint(0, 100), 'Redis retries per request.'),
  REDIS_ALLOW_EVICTION: v('Data', '0', bool, 'Start even when Redis maxmemory-policy is not noeviction (with a warning). Any other policy can evict used-challenge keys under memory pressure and so accept a replay: leave 0 unless Redis can never reach maxmemory.'),
  POSTGRES_URL: v('Data', '', optional, 'External PostgreSQL instead of the embedded database.', true),
  POSTGRES_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'PostgreSQL pool size per process.'),
  POSTGRES_MIN_CONNECTIONS: v('Data', '0', uint(0, 1000), 'Minimum PostgreSQL pool size.'),
  POSTGRES_IDLE_TIMEOUT: v('Data', '10000', ms, 'Idle connection timeout (ms); 0 disables.'),
  POSTGRES_CONNECT_TIMEOUT: v('Data', '10000', ms, 'PostgreSQL connect timeout (ms).'),
  MYSQL_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  MARIADB_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  MSSQL_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  ORACLE_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  LIBSQL_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  TURBOLITE_URL: v('Data', '', optional, 'Not supported yet (start-up fails when set).', true),
  MYSQL_CONNECT_TIMEOUT: v('Data', '10000', ms, 'For MYSQL_URL (not supported yet).'),
  MARIADB_CONNECT_TIMEOUT: v('Data', '10000', ms, 'For MARIADB_URL (not supported yet).'),
  MSSQL_CONNECT_TIMEOUT: v('Data', '10000', ms, 'For MSSQL_URL (not supported yet).'),
  MYSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For MYSQL_URL (not supported yet).'),
  MARIADB_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For MARIADB_URL (not supported yet).'),
  MSSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For MSSQL_URL (not supported yet).'),
  LIBSQL_MAX_CONNECTIONS: v('Data', '10', uint(1, 1000), 'For LIBSQL_URL (not supported yet).'),
  CLICKHOUSE_URL: v('Data', '', optional, 'External analytics store (Enterprise; not supported yet).', true),
  CLICKHOUSE_BATCH_INTERVAL: v('Data', '1000', ms, 'ClickHouse flush interval (ms).'),
  CLICKHOUSE_BATCH_MAX: v('Data', '100', uint(1), 'ClickHouse flush size.'),
  STORAGE_PROVIDER: v('Data', 'local', oneOf('local', 's3', 'azure'), 'Upload storage (only local is implemented).'),
  STORAGE_LOCAL_DIR: v('Data', 'uploads', str, 'Local upload directory (relative to DATA_DIR).'),
  SNAPSHOTS_STORAGE_PROVIDER: v('Data', 'local', oneOf('local', 's3', 'azure'), 'Snapshot storage (only local is implemented).'),
  SNAPSHOTS_STORAGE_LOCAL_DIR: v('Data', 'backups', str, 'Local snapshot directory (relative to DATA_DIR).'),
  SNAPSHOTS_MAIN_SCHEDULE: v('Data', '', cron, 'Database snapshot schedule (cron); empty disables.'),
  SNAPSHOTS_REDIS_SCHEDULE: v('Data', '', cron, 'State snapshot schedule (cron); empty disables.'),
  SNAPSHOTS_DB_PREFIX: v('Data', 'palisade-backups/db:${iso_date()}', str, 'Path prefix of stored snapshots.'),
  // --- outbound
  TLS_EXTRA_CA_CERTS: v('Outbound', '', optional, 'Extra trusted CA bundle (PEM file) for outbound requests (list downloads), added to Node\'s root certificates.'),
  HTTP_PROXY: v('Outbound', '', optional, 'Proxy for outbound http:// requests (list downloads), e.g. http://user:pass@proxy:3128; tunnelled with CONNECT.', true),
  HTTPS_PROXY: v('Outbound', '', optional, 'Proxy for outbound https:// requests (list downloads); tunnelled with CONNECT.', true),
  NO_PROXY: v('Outbound', 'localhost,127.0.0.1,::1,0.0.0.0', list, 'Hosts that bypass the proxy: * (all), a host name (its subdomains too), or an IP, each optionally with :port.'),
  DNS_SERVERS: v('Outbound', '', dnsServers, 'DNS servers for the e-mail MX check (comma-separated ip, ip:port or [ipv6]:port); empty = the system resolvers (/etc/resolv.conf).'),
  DNS_TIMEOUT: v('Outbound', '1500ms', ms, 'Deadline of one MX check (MX, then A/AAAA when there is no MX); past it the MX rule does not fire. Answers are cached per domain: found 1 h, non-existent or without mail host 15 min, no answer 30 s (10,000 domains per process).'),
  SMTP_URL: v('Outbound', '', optional, 'Outgoing email (not used yet).', true),
  AI_PROVIDER: v('Outbound', '', (s) => (s === '' ? null : oneOf('anthropic', 'azure', 'google', 'mistral', 'ollama', 'openai')(s)), 'AI provider for security rules (not used yet).'),
  LICENSE_KEY: v('Outbound', '', optional, 'License key (Palisade needs none; accepted for compatibility).', true),
  LICENSE_JSON: v('Outbound', '', optional, 'Full license contents (accepted for compatibility).', true),
} as const;

export type VariableName = keyof typeof VARIABLES;
type Parsed = { readonly [K in VariableName]: ReturnType<(typeof VARIABLES)[K]['parse']> };

export interface Config extends Parsed {
  /** Absolute data directory. */
  readonly dataDir: string;
  /** Worker count actually used (0 = single process). */
  readonly workers: number;
  readonly powMaxThreads: number;
  readonly secrets: Secrets;
  readonly version: string;
}

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadConfigOptions {
  /** The environment to read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Create and persist missing secrets in DATA_DIR (the primary does; workers and the CLI read). Default true. */
  persistSecrets?: boolean;
  /** CPU count when the caller knows it (tests); default from cgroups/availableParallelism. */
  detectedCpus?: number;
}

/** Reads, parses and validates every variable; throws one ConfigError listing every problem. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(VARIABLES) as [VariableName, VarSpec<unknown>][]) {
    let raw: string | undefined = env[name];
    const file = env[`${name}_FILE`];
    if (file !== undefined && file !== '') {
      if (raw !== undefined && raw !== '') {
        problems.push(`${name} and ${name}_FILE are both set; set one`);
        continue;
      }
      try {
        raw = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
      } catch (err) {
        problems.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
        continue;
      }
    }
    try {
      out[name] = spec.parse(raw ?? spec.def);
    } catch (err) {
      const message = (err as Error).message;
      // Never echo a secret's value back in the error.
      problems.push(`${name}: ${spec.secret ? message.replace(raw ?? '', '<hidden>') : message}`);
    }
  }
  for (const engine of ['MYSQL_URL', 'MARIADB_URL', 'MSSQL_URL', 'ORACLE_URL', 'LIBSQL_URL', 'TURBOLITE_URL'] as const) {
    if (out[engine]) problems.push(`not supported yet: ${engine} (use POSTGRES_URL or the embedded database)`);
  }
  if (out.HTTP2_CERT && !out.HTTP2_KEY) problems.push('HTTP2_CERT is set but HTTP2_KEY is not');
  if (out.HTTP2_KEY && !out.HTTP2_CERT) problems.push('HTTP2_KEY is set but HTTP2_CERT is not');
  for (const f of ['HTTP2_CERT', 'HTTP2_KEY', 'TLS_EXTRA_CA_CERTS'] as const) {
    if (typeof out[f] === 'string' && !existsSync(out[f] as string)) problems.push(`${f}: file ${out[f]} does not exist`);
  }
  if ((out.CLAIM_CLOCK_SKEW as number) < 1000) problems.push('CLAIM_CLOCK_SKEW must be at least 1s');
  if ((out.CACHE_DURATION_USED_CHALLENGES as number) * 1000 < (out.CLAIM_CLOCK_SKEW as number) + 60_000) {
    problems.push('CACHE_DURATION_USED_CHALLENGES must be at least CLAIM_CLOCK_SKEW plus 1m');
  }
  // Penalties and threat marks are kept in the state store, which refuses a lifetime past maxTtlMs
  // with a RangeError: checked here, or every failed verification would throw it.
  const maxDays = Math.floor(STORE_LIMITS.maxTtlMs / 86_400_000);
  const penaltyTtl = out.PENALTY_TTL as number | undefined;
  if (penaltyTtl !== undefined && (penaltyTtl < 1000 || penaltyTtl > STORE_LIMITS.maxTtlMs)) {
    problems.push(`PENALTY_TTL must be from 1s to ${maxDays}d`);
  }
  for (const name of ['THREATS_PROBE_LIMIT', 'THREATS_MALICIOUS_LIMIT', 'THREATS_BOT_LIMIT', 'THREATS_PROXY_LIMIT', 'THREATS_TOR_LIMIT'] as const) {
    const r = out[name] as RateRule | null | undefined;
    if (r && Math.max(r.windowMs, r.blockMs, r.expireMs) > STORE_LIMITS.maxTtlMs) {
      problems.push(`${name}: the window, block and expire must each be at most ${maxDays}d (how long a mark can be kept)`);
    }
  }
  if (out.THREATS_INDEX_STORE === 'sqlite') problems.push('THREATS_INDEX_STORE: sqlite is not implemented yet; use auto or memory');
  if (out.THREATS_SOURCES !== undefined) {
    try {
      threatSources(out as unknown as Parameters<typeof threatSources>[0]);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (out.HEAP_LIMIT_MB && out.CONTAINER_MEMORY_LIMIT_MB && (out.HEAP_LIMIT_MB as number) >= (out.CONTAINER_MEMORY_LIMIT_MB as number)) {
    problems.push('HEAP_LIMIT_MB must stay below CONTAINER_MEMORY_LIMIT_MB');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const dataDir = resolveDataDir(out.DATA_DIR as string);
  let secrets: Secrets;
  try {
    secrets = resolveSecrets(dataDir, {
      seed: out.SECRET_SEED as string | null,
      nodeName: out.NODE_NAME as string,
      given: Object.fromEntries(SECRET_NAMES.map((n) => [n, (out[n] as string | null) || null])),
      persist: options.persistSecrets ?? true,
      rotate: out.SECRET_SEED_ROTATE as boolean,
    });
  } catch (err) {
    throw new ConfigError([`secrets: ${(err as Error).message}`]);
  }
  const cpus = (out.CONTAINER_CPUS as number | null) ?? options.detectedCpus ?? availableParallelism();
  return Object.freeze({
    ...(out as unknown as Parsed),
    dataDir,
    workers: (out.WORKERS as number | null) ?? cpus,
    powMaxThreads: (out.POW_MAX_THREADS as number | null) ?? Math.max(1, Math.floor(cpus / 2)),
    secrets,
    version: packageVersion(),
  });
}

/** DATA_DIR rule: explicit value; else /data inside a container when writable; else ./data. */
export function resolveDataDir(given: string, cwd = process.cwd()): string {
  if (given !== '') return isAbsolute(given) ? given : resolve(cwd, given);
  const inContainer = existsSync('/.dockerenv') || existsSync('/run/.containerenv');
  if (inContainer) {
    try {
      accessSync('/data', constants.W_OK);
      return '/data';
    } catch { /* not writable or absent: fall through */ }
  }
  return resolve(cwd, 'data');
}

/** A path from configuration, resolved against DATA_DIR when relative. */
export function dataPath(config: Pick<Config, 'dataDir'>, path: string): string {
  return isAbsolute(path) ? path : resolve(config.dataDir, path);
}

let cachedVersion: string | undefined;
function packageVersion(): string {
  cachedVersion ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return cachedVersion;
}

/** For logs: the configuration with secret values replaced. */
export function describeConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(VARIABLES) as [VariableName, VarSpec<unknown>][]) {
    const value = config[name];
    out[name] = spec.secret && value !== null && value !== '' ? '<set>' : value;
  }
  return out;
}

/** The few settings the container health check needs, without secrets or validation of the rest. */
export function healthcheckSettings(env: NodeJS.ProcessEnv = process.env): {
  port: number; basePath: string; credentials: string | null; tls: boolean;
} {
  const read = (name: VariableName) => {
    const file = env[`${name}_FILE`];
    if (file) { try { return readFileSync(file, 'utf8').trim(); } catch { return ''; } }
    return env[name] ?? VARIABLES[name].def;
  };
  return {
    port: Number(read('PORT')) || 8080,
    basePath: read('APP_BASE_PATH').replace(/\/+$/, ''),
    credentials: read('MONITORING_HTTP_CREDENTIALS') || null,
    tls: read('HTTP2_CERT') !== '',
  };
}
