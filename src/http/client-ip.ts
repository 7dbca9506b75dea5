// Client-IP resolution (DESIGN.md section 4): the socket address; X-Forwarded-For only when the
// peer is a trusted proxy, walking from the right past trusted hops; X-Real-IP, CF-Connecting-IP and
// True-Client-IP only when the request proves it came through our proxy with IP_HEADERS_SECRET.
import { isIP } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
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

/** RFC 5952 text form: lower-case, leading zeros dropped, the longest run of ≥ 2 zero groups as `::`. */
export function compressIPv6(groups: number[]): string {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

export interface ClientIpOptions {
  /** X_FORWARDED_FOR_TRUSTED. */
  readonly trustedProxies: CidrList;
  /** IP_HEADERS_SECRET ('' = other IP headers are ignored). */
  readonly ipHeadersSecret: string;
}

const IP_HEADERS = ['cf-connecting-ip', 'true-client-ip', 'x-real-ip'] as const;

export function resolveClientIp(socketIp: string, headers: Readonly<Record<string, string>>, options: ClientIpOptions): string {
  if (options.ipHeadersSecret !== '') {
    const given = headers['x-ip-headers-secret'];
    if (given !== undefined && secretEquals(given, options.ipHeadersSecret)) {
      for (const name of IP_HEADERS) {
        const value = headers[name]?.trim();
        if (value && isIP(value)) return normalizeIp(value);
      }
    }
  }
  const xff = headers['x-forwarded-for'];
  if (xff === undefined || options.trustedProxies.empty || !ipMatches(options.trustedProxies, socketIp)) return socketIp;
  // Right to left: every hop we trust may have appended the address it saw; the first untrusted one
  // is the client. A malformed entry stops the walk at the last trusted hop.
  const hops = xff.split(',');
  let client = socketIp;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim();
    if (!isIP(hop)) break;
    client = normalizeIp(hop);
    if (!ipMatches(options.trustedProxies, client)) break;
  }
  return client;
}

export function normalizeIp(ip: string): string {
  if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) return ip.slice(7);
  return ip.toLowerCase();
}

function secretEquals(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** IPv4 → /24, IPv6 → /48 (ANONYMIZE_IP_ADDRESS, ACCESS_LOG_ANONYMIZE_IP_ADDRESS). */
export function anonymizeIp(ip: string): string {
  const family = isIP(ip);
  if (family === 4) return `${ip.slice(0, ip.lastIndexOf('.'))}.0`;
  if (family !== 6) return ip;
  const groups = expandIPv6(ip);
  if (!groups) return ip;
  return compressIPv6([groups[0]!, groups[1]!, groups[2]!, 0, 0, 0, 0, 0]);
}

/** Eight 16-bit groups of an IPv6 address (embedded IPv4 tail supported), or null. */
export function expandIPv6(ip: string): number[] | null {
  if (isIP(ip) !== 6) return null;
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const o = v4[1]!.split('.').map(Number);
    text = `${text.slice(0, -v4[1]!.length)}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : new Array<string>(8 - h.length - t.length).fill('0');
  const all = [...h, ...fill, ...t].map((g) => parseInt(g, 16));
  return all.length === 8 ? all : null;
}
