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
import { ipv6Groups, isV4Mapped, v4Tail } from '../ip.js';
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
  if (isV4Mapped(groups)) return `ip:${v4Tail(groups)}`;
  return `ip:${groups[0]!.toString(16)}:${groups[1]!.toString(16)}:${groups[2]!.toString(16)}:${groups[3]!.toString(16)}::/64`;
}
