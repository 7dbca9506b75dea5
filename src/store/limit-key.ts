// The key a rate rule counts on (spec section 8, `key=ip|apiKey|account|device`).
//   ip       `ip:203.0.113.7` for IPv4 (IPv4-mapped IPv6 such as ::ffff:203.0.113.7 counts as IPv4);
//            `ip:2001:db8:0:0::/64` for IPv6: one key per /64, the block a single subscriber is
//            usually given, so rotating through its addresses does not escape the limit. Every
//            textual form of an address in the /64 gives the same key.
//   apiKey   `key:<apiKey>`    account  `acct:<account>`    device  `dev:<device>`
// A rule keyed on a component the request does not have (no API key, no account, no device id;
// undefined or '') falls back to the ip key, so such requests are still limited per client.
// The key does not name the rule: callers whose rules could count the same key (flood limit,
// audio limit) prefix their own scope, e.g. 'audio|' + limitKey(rule, ctx).
import { isIP } from 'node:net';
import type { RateRule } from '../parse.js';

export interface LimitKeyContext {
  /** The client address as resolved by the HTTP layer. */
  readonly ip: string;
  readonly apiKey?: string | undefined;
  readonly account?: string | undefined;
  readonly device?: string | undefined;
}

export function limitKey(rule: Pick<RateRule, 'key'>, ctx: LimitKeyContext): string {
  switch (rule.key) {
    case 'apiKey':
      if (ctx.apiKey) return `key:${ctx.apiKey}`;
      break;
    case 'account':
      if (ctx.account) return `acct:${ctx.account}`;
      break;
    case 'device':
      if (ctx.device) return `dev:${ctx.device}`;
      break;
    default:
      break;
  }
  return ipKey(ctx.ip);
}

/** `ip:` plus the IPv4 address or the IPv6 /64; a string that is no IP address is used as it is. */
export function ipKey(ip: string): string {
  if (!ip.includes(':')) return `ip:${ip}`;
  const groups = ipv6Groups(ip);
  if (groups === null) return `ip:${ip}`;
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    const hi = groups[6]!;
    const lo = groups[7]!;
    return `ip:${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  return `ip:${groups[0]!.toString(16)}:${groups[1]!.toString(16)}:${groups[2]!.toString(16)}:${groups[3]!.toString(16)}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (zone index and brackets ignored), or null. */
function ipv6Groups(text: string): number[] | null {
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
