// Client-IP resolution (DESIGN.md section 4): the socket address; X-Forwarded-For only when the
// peer is a trusted proxy, walking from the right past trusted hops; X-Real-IP, CF-Connecting-IP and
// True-Client-IP only when the request proves it came through our proxy with IP_HEADERS_SECRET.
import { BlockList, isIP } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { compressIPv6, ipv6Groups, isV4Mapped, v4Tail } from '../ip.js';
import { type CidrList, ipMatches } from '../parse.js';

/** Formats uWS's binary remote address (4 or 16 bytes) as text; IPv4-mapped IPv6 becomes IPv4. */
export function formatAddress(buf: ArrayBuffer): string {
  const b = new Uint8Array(buf);
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) return '';
  let mapped = b[10] === 0xff && b[11] === 0xff;
  for (let i = 0; mapped && i < 10; i++) if (b[i] !== 0) mapped = false;
  if (mapped) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  return compressIPv6(groups);
}

export interface ClientIpOptions {
  /** X_FORWARDED_FOR_TRUSTED. */
  readonly trustedProxies: CidrList;
  /** IP_HEADERS_SECRET ('' = other IP headers are ignored). */
  readonly ipHeadersSecret: string;
}

const IP_HEADERS = ['cf-connecting-ip', 'true-client-ip', 'x-real-ip'] as const;

/**
 * The client of a request whose forwarding chain names it in a form we cannot read (a zone id,
 * leading zeros, `unknown`, a host name…). No CIDR matches it (it is no IP), so it passes no
 * whitelist; its rate-limit and penalty key is `ip:unknown`, one bucket shared by every such client
 * and never the trusted proxy's. Falling back to the proxy's own address instead would hand the
 * client the proxy's (usually private, often whitelisted) address and the proxy's flood bucket.
 */
export const UNKNOWN_CLIENT = 'unknown';

export function resolveClientIp(socketIp: string, headers: Readonly<Record<string, string>>, options: ClientIpOptions): string {
  if (options.ipHeadersSecret !== '') {
    const given = headers['x-ip-headers-secret'];
    if (given !== undefined && secretEquals(given, options.ipHeadersSecret)) {
      for (const name of IP_HEADERS) {
        const value = headers[name];
        const ip = value === undefined ? null : parseForwardedAddress(value.trim());
        if (ip !== null) return ip;
      }
    }
  }
  const xff = headers['x-forwarded-for'];
  if (xff === undefined || options.trustedProxies.empty || !ipMatches(options.trustedProxies, socketIp)) return socketIp;
  // Right to left: every hop we trust may have appended the address it saw; the first untrusted one
  // is the client. An entry we cannot read ends the walk with an unknown client.
  const hops = xff.split(',');
  let client: string | null = null;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim();
    // Empty list elements are allowed and carry nothing (RFC 9110 section 5.6.1).
    if (hop === '') continue;
    client = parseForwardedAddress(hop);
    if (client === null) return UNKNOWN_CLIENT;
    if (!ipMatches(options.trustedProxies, client)) break;
  }
  // A header that names no address at all is as unreadable as a malformed one.
  return client ?? UNKNOWN_CLIENT;
}

const PORT = /^[0-9]{1,5}$/;

/**
 * One X-Forwarded-For entry as proxies write it: `203.0.113.9`, `203.0.113.9:4431`, `2001:db8::1`,
 * `[2001:db8::1]` or `[2001:db8::1]:4431`, normalised (normalizeIp); null for anything else. A zone
 * id (`%eth0`) is refused: it names an interface of the proxy, not a client. Leading zeros
 * (`0203.0.113.9`) are refused by isIP: some parsers read them as octal.
 */
export function parseForwardedAddress(entry: string): string | null {
  let host = entry;
  let port = '';
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close < 0) return null;
    host = entry.slice(1, close);
    const rest = entry.slice(close + 1);
    if (rest !== '') {
      if (rest[0] !== ':') return null;
      port = rest.slice(1);
    }
    if (isIP(host) !== 6) return null;
  } else {
    const colon = entry.indexOf(':');
    // One colon: IPv4 with a port; more: a bare IPv6 address.
    if (colon >= 0 && colon === entry.lastIndexOf(':')) {
      host = entry.slice(0, colon);
      port = entry.slice(colon + 1);
      if (isIP(host) !== 4) return null;
    } else if (isIP(host) === 0) {
      return null;
    }
  }
  if (port !== '' || entry.endsWith(':')) {
    if (!PORT.test(port) || Number(port) > 65535) return null;
  }
  if (host.includes('%')) return null;
  return normalizeIp(host);
}

export function normalizeIp(ip: string): string {
  const lower = ip.toLowerCase();
  if (lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4) return lower.slice(7);
  return lower;
}

// Where proxies live: private-use, shared (carrier-grade NAT), loopback and link-local addresses
// (RFC 1918, RFC 6598, RFC 4193, RFC 4291). Anything else reaches addresses that clients hold.
const NON_PUBLIC: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']> = [
  ['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'], ['169.254.0.0', 16, 'ipv4'],
  ['fc00::', 7, 'ipv6'], ['fe80::', 10, 'ipv6'], ['::1', 128, 'ipv6'],
];

/**
 * The entries of X_FORWARDED_FOR_TRUSTED that reach beyond private, shared, loopback and link-local
 * addresses (`0.0.0.0/0`, `::/0`, any public range). Every client in them can write its own
 * X-Forwarded-For and so choose the IP it is known by: whitelists and rate limits stop meaning
 * anything. The start-up warns about them.
 */
export function publicTrustedRanges(trusted: CidrList): string[] {
  return trusted.source.filter((entry) => !isNonPublic(entry));
}

function isNonPublic(entry: string): boolean {
  const slash = entry.indexOf('/');
  let addr = slash < 0 ? entry : entry.slice(0, slash);
  let family = isIP(addr);
  let bits = slash < 0 ? (family === 4 ? 32 : 128) : Number(entry.slice(slash + 1));
  const groups = family === 6 ? ipv6Groups(addr) : null;
  if (groups !== null && isV4Mapped(groups) && bits >= 96) {
    addr = v4Tail(groups);
    family = 4;
    bits -= 96;
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return NON_PUBLIC.some(([net, len, netType]) => {
    if (netType !== type || bits < len) return false;
    const range = new BlockList();
    range.addSubnet(net, len, netType);
    return range.check(addr, type);
  });
}

/**
 * Whether a request carries IP_HEADERS_SECRET (`secret`, not empty) in X-IP-Headers-Secret or in
 * X-IP-Secret (the name Sentinel's load-balancer headers use); compared in constant time.
 */
export function ipHeadersTrusted(headers: Readonly<Record<string, string>>, secret: string): boolean {
  if (secret === '') return false;
  const given = headers['x-ip-headers-secret'] ?? headers['x-ip-secret'];
  return given !== undefined && secretEquals(given, secret);
}

function secretEquals(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
