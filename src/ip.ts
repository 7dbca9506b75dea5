// IP address text, shared by client-IP resolution (src/http/client-ip.ts), rate-limit keys
// (src/store/limit-key.ts) and anonymisation (server payloads, access log, request logs, warnings).
import { isIP } from 'node:net';

/**
 * The eight 16-bit groups of an IPv6 address, or null when `text` is not one. Brackets and a zone
 * index (`fe80::1%eth0`) are ignored; a dotted IPv4 tail (`::ffff:192.0.2.1`) becomes two groups.
 */
export function ipv6Groups(text: string): number[] | null {
  let s = text;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (isIP(s) !== 6) return null;
  const gap = s.indexOf('::');
  const head = gap < 0 ? s : s.slice(0, gap);
  const tail = gap < 0 ? '' : s.slice(gap + 2);
  const front = head === '' ? [] : hextets(head);
  const back = tail === '' ? [] : hextets(tail);
  const zeros = 8 - front.length - back.length;
  if (zeros < 0 || (gap < 0 && zeros !== 0)) return null;
  return [...front, ...new Array<number>(zeros).fill(0), ...back];
}

/** Colon-separated groups; a dotted IPv4 tail (validated by isIP) becomes two groups. */
function hextets(part: string): number[] {
  const out: number[] = [];
  for (const g of part.split(':')) {
    if (g.includes('.')) {
      const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
      out.push((a << 8) | b, (c << 8) | d);
    } else {
      out.push(parseInt(g, 16));
    }
  }
  return out;
}

/** Whether the groups are an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
export function isV4Mapped(groups: readonly number[]): boolean {
  return groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff;
}

/** The dotted IPv4 address in the last two groups. */
export function v4Tail(groups: readonly number[]): string {
  const hi = groups[6]!;
  const lo = groups[7]!;
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** RFC 5952 text form: lower-case, leading zeros dropped, the longest run of ≥ 2 zero groups as `::`. */
export function compressIPv6(groups: readonly number[]): string {
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

/**
 * ANONYMIZE_IP_ADDRESS and ACCESS_LOG_ANONYMIZE_IP_ADDRESS: IPv4 keeps its /24 (`203.0.113.77` →
 * `203.0.113.0`), IPv6 its /48 in RFC 5952 form (`2001:db8:abcd:12::1` → `2001:db8:abcd::`), an
 * IPv4-mapped address is treated as IPv4; anything that is not an address is returned unchanged.
 */
export function anonymizeIp(ip: string): string {
  if (isIP(ip) === 4) return `${ip.slice(0, ip.lastIndexOf('.'))}.0`;
  const groups = ipv6Groups(ip);
  if (groups === null) return ip;
  if (isV4Mapped(groups)) return anonymizeIp(v4Tail(groups));
  return compressIPv6([groups[0]!, groups[1]!, groups[2]!, 0, 0, 0, 0, 0]);
}
