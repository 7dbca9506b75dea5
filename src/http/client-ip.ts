// Client-IP resolution (DESIGN.md section 4): the socket address; X-Forwarded-For only when the
// peer is a trusted proxy, walking from the right past trusted hops; X-Real-IP, CF-Connecting-IP and
// True-Client-IP only when the request proves it came through our proxy with IP_HEADERS_SECRET.
import { isIP } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { compressIPv6 } from '../ip.js';
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
