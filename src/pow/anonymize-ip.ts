// IP anonymisation for server payloads (ANONYMIZE_IP_ADDRESS): IPv4 keeps its /24, IPv6 its /48.
import { isIP } from 'node:net';

/** `203.0.113.77` → `203.0.113.0`; `2001:db8:abcd:12::1` → `2001:db8:abcd::`; anything else unchanged. */
export function anonymizeIp(ip: string): string {
  const version = isIP(ip);
  if (version === 4) return `${ip.slice(0, ip.lastIndexOf('.'))}.0`;
  if (version !== 6) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return anonymizeIp(mapped[1]!);
  const groups = expandIpv6(ip.split('%', 1)[0]!);
  return `${groups.slice(0, 3).map((g) => g.toString(16)).join(':')}::`;
}

/** The eight 16-bit groups of a valid IPv6 address (isIP already said it is one). */
function expandIpv6(ip: string): number[] {
  const toGroups = (part: string): number[] => {
    if (part === '') return [];
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
  };
  const at = ip.indexOf('::');
  if (at < 0) return toGroups(ip);
  const head = toGroups(ip.slice(0, at));
  const tail = toGroups(ip.slice(at + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}
