// Serving HTTP: the port, workers and their memory, the data directory, paths, hosts, CORS, body
// limits and timeouts, TLS; and how the client IP is found behind proxies.
import { existsSync } from 'node:fs';
import { bool, cidrs, list, optional, optUint, type Check, type Parser, secs, size, str, uint, v } from './variable.js';

const port: Parser<number> = uint(0, 65535);
const basePath: Parser<string> = (s) => {
  const p = s.trim().replace(/\/+$/, '');
  if (p !== '' && !/^\/[A-Za-z0-9._~\-/]*$/.test(p)) throw new Error(`"${s}" is not a path prefix such as /captcha`);
  return p;
};
const securityTxt: Parser<string> = (s) => s;

export const SERVER_VARIABLES = {
  PORT: v('Server', '8080', port, 'Listening port.'),
  WORKERS: v('Server', '', optUint(0, 256), 'Worker processes; empty = CONTAINER_CPUS, else the cgroup CPU quota, else the CPU count. 0 = run everything in one process.'),
  DATA_DIR: v('Server', '', str, 'Data directory (secrets, embedded database, state file). Empty = /data in a container (/.dockerenv or /run/.containerenv present and /data writable), else ./data.'),
  BASE_URL: v('Server', '', str, 'Public base URL (e.g. https://captcha.example.com): the prefix of the verifyUrl in challenges and the Contact of the default security.txt. Empty = a relative verifyUrl (/v1/verify?apiKey=…, which the widget resolves against the challenge URL) and Contact mailto:security@localhost.'),
  APP_BASE_PATH: v('Server', '', basePath, 'Path prefix under which every route is served (e.g. /captcha).'),
  ALLOWED_HOSTS: v('Server', '', list, 'Comma-separated hostnames the Host header may name (wildcards *.example.com); empty = any. Others get 403 HOST_NOT_ALLOWED.'),
  CORS_ORIGINS: v('Server', '', list, 'Comma-separated allowed CORS origins (wildcards https://*.example.com); empty = any origin.'),
  REQUEST_BODY_LIMIT: v('Server', '64KB', size, 'Largest JSON body on ordinary routes; enforced while reading (413 BODY_TOO_LARGE).'),
  REQUEST_TIMEOUT: v('Server', '10s', secs, 'A request whose body has not arrived completely within this time is answered 408 and closed.'),
  SHUTDOWN_TIMEOUT: v('Server', '10s', secs, 'On SIGTERM/SIGINT: how long in-flight requests may take before workers exit anyway.'),
  HTTP2_CERT: v('Server', '', optional, 'PEM certificate file: serve HTTPS directly (with HTTP2_KEY). HTTPS over HTTP/1.1 only, despite the name (the spec\'s): uWebSockets.js serves no HTTP/2, and clients that offer it fall back to HTTP/1.1.'),
  HTTP2_KEY: v('Server', '', optional, 'PEM private key file for HTTP2_CERT.', true),
  SECURITY_TXT: v('Server', '', securityTxt, '/.well-known/security.txt: empty = a default pointing at BASE_URL; text = served as is; a path to a file = its content; 0 = disabled (404).'),
  API_DOCS_ENABLED: v('Server', '1', bool, 'Serve the API documentation at /v1/docs: Swagger UI and the OpenAPI 3.1 document /v1/docs/openapi.json of the routes enabled (docs/api.md). 0 = 404.'),
  INSPECT_ROUTE_ENABLED: v('Server', '1', bool, 'Enable GET /v1/inspect.'),
  NODE_NAME: v('Server', '', str, 'Human-readable node name, reported as node by GET /.health; with SECRET_SEED it also seeds NODE_ID.'),
  TZ: v('Server', '', str, 'Application timezone (usage months); empty = the system timezone.'),
  USER_AGENT: v('Server', '', str, 'User-Agent of outbound requests (list downloads); empty = palisade/<version>.'),
  CONTAINER_CPUS: v('Server', '', optUint(1, 1024), 'CPU count override (auto-detected from cgroups).'),
  CONTAINER_MEMORY_LIMIT_MB: v('Server', '', optUint(16), 'Memory limit override in MB (auto-detected from cgroups).'),
  HEAP_LIMIT_MB: v('Server', '', optUint(16), "Each worker's --max-old-space-size; must stay below the memory limit. Empty = 75% of the memory limit divided among workers, when a limit is known."),
} as const;

export const CLIENT_IP_VARIABLES = {
  X_FORWARDED_FOR_TRUSTED: v('Client IP', '', cidrs, 'Proxy IPs/CIDRs allowed to set X-Forwarded-For; the client IP is the right-most address not in this list.'),
  IP_HEADERS_SECRET: v('Client IP', '', str, 'When set, X-Real-IP / CF-Connecting-IP / True-Client-IP are honoured only if X-IP-Headers-Secret carries this value.', true),
  ANONYMIZE_IP_ADDRESS: v('Client IP', '1', bool, 'Anonymize IPs in stored request logs and verification data.'),
} as const;

/** HTTP2_CERT and HTTP2_KEY go together, and name files that exist. */
export const checkTls: Check = (out) => {
  const problems: string[] = [];
  if (out.HTTP2_CERT && !out.HTTP2_KEY) problems.push('HTTP2_CERT is set but HTTP2_KEY is not');
  if (out.HTTP2_KEY && !out.HTTP2_CERT) problems.push('HTTP2_KEY is set but HTTP2_CERT is not');
  for (const f of ['HTTP2_CERT', 'HTTP2_KEY'] as const) {
    if (typeof out[f] === 'string' && !existsSync(out[f] as string)) problems.push(`${f}: file ${out[f]} does not exist`);
  }
  return problems;
};

export const checkMemory: Check = (out) =>
  out.HEAP_LIMIT_MB && out.CONTAINER_MEMORY_LIMIT_MB && (out.HEAP_LIMIT_MB as number) >= (out.CONTAINER_MEMORY_LIMIT_MB as number)
    ? ['HEAP_LIMIT_MB must stay below CONTAINER_MEMORY_LIMIT_MB']
    : [];
