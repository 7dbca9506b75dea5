// The sender's IP from the trusted Received chain. Each relay prepends a Received field naming the
// host it took the message from ("from host (rdns [ip]) by relay ..."); only the relays of the
// operator can be believed, so the walk starts at the newest field (written by the operator's own
// receiving server) and goes down while the connecting address is one of the operator's: a private,
// loopback or link-local address, or one of EML_TRUSTED_RELAYS. The first address outside them is
// the one that handed the message to the operator: the sender. Anything below it was written by
// the sender and is not read. A field without an address (local submission) is stepped over.
import { BlockList, isIP } from 'node:net';
import { ipMatches, type CidrList } from '../../parse.js';

export interface SenderHop {
  /** The connecting address of the first untrusted hop, or null when every hop is internal or none names one. */
  readonly ip: string | null;
  /** The HELO name of that hop when the field gives one. */
  readonly helo: string | null;
  /** How many Received fields were read. */
  readonly hops: number;
}

/** Received fields read at most; a longer chain is cut (a real one has a handful). */
const MAX_HOPS = 50;
const INTERNAL = new BlockList();
for (const [net, bits] of [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['127.0.0.0', 8], ['169.254.0.0', 16], ['100.64.0.0', 10]] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv4');
}
INTERNAL.addAddress('::1', 'ipv6');
INTERNAL.addSubnet('fc00::', 7, 'ipv6');
INTERNAL.addSubnet('fe80::', 10, 'ipv6');

/** The `from` clause of a Received field, up to its `by`. */
const FROM_CLAUSE = /^\s*from\s+([\s\S]{0,600}?)(?:\s+by\s|;|$)/i;
const BRACKETED = /\[(?:ipv6:)?([0-9a-f:.]{3,45})\]/gi;
const BARE_V4 = /(?:^|[\s(@=])((?:\d{1,3}\.){3}\d{1,3})(?=[\s)\]:,;]|$)/g;

/** `received`: the Received field values, newest first (the order of the header). */
export function senderFromReceived(received: readonly string[], trusted: CidrList): SenderHop {
  let hops = 0;
  for (const value of received) {
    if (hops === MAX_HOPS) break;
    hops++;
    const hop = connectingAddress(value);
    if (hop === null) continue;
    if (isInternal(hop.ip) || ipMatches(trusted, hop.ip)) continue;
    return { ip: hop.ip, helo: hop.helo, hops };
  }
  return { ip: null, helo: null, hops };
}

/**
 * The address the relay saw connecting: the TCP-info comment of the from clause (RFC 5321 section
 * 4.4) holds it in brackets; an address literal written as the HELO name is only used when no
 * other address is given.
 */
export function connectingAddress(value: string): { ip: string; helo: string | null } | null {
  const m = FROM_CLAUSE.exec(value.length > 2000 ? value.slice(0, 2000) : value);
  if (m === null) return null;
  const clause = m[1]!;
  const helo = /^[^\s(]+/.exec(clause)?.[0] ?? null;
  const afterHelo = helo === null ? clause : clause.slice(helo.length);
  const candidates: string[] = [];
  for (const re of [BRACKETED, BARE_V4]) {
    re.lastIndex = 0;
    for (let x = re.exec(afterHelo); x !== null; x = re.exec(afterHelo)) candidates.push(x[1]!);
  }
  if (helo !== null) candidates.push(helo.replace(/^\[(?:ipv6:)?|\]$/gi, ''));
  for (const c of candidates) {
    const ip = c.toLowerCase();
    if (isIP(ip) !== 0) return { ip, helo: helo !== null && isIP(helo.replace(/^\[(?:ipv6:)?|\]$/gi, '')) === 0 ? helo : null };
  }
  return null;
}

function isInternal(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return INTERNAL.check(ip, 'ipv4');
  if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) return INTERNAL.check(ip.slice(7), 'ipv4');
  return INTERNAL.check(ip, 'ipv6');
}
