// A DNS server on loopback UDP for tests (dns-packet + node:dgram): each zone the test sets answers
// MX, A, AAAA and TXT queries from its records (at once or after a delay); a name without a zone is
// NXDOMAIN; a zone may instead never answer ('hang', the timeout case) or answer SERVFAIL. Every
// query is counted per `name TYPE`, so a test can tell a cache hit (no query) from a lookup.
// Nothing reaches the internet.
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

/** The few dns-packet shapes used here (the package ships no types). */
interface Question { readonly name: string; readonly type: string; readonly class?: string }
interface Answer { readonly name: string; readonly type: string; readonly ttl: number; readonly data: unknown }
interface Packet {
  readonly id?: number;
  readonly type: 'query' | 'response';
  readonly flags?: number;
  readonly questions: readonly Question[];
  readonly answers?: readonly Answer[];
}
interface DnsPacket {
  encode(packet: Packet): Buffer;
  decode(buf: Buffer): Packet;
  readonly AUTHORITATIVE_ANSWER: number;
  readonly RECURSION_AVAILABLE: number;
}
const dnsPacket = createRequire(import.meta.url)('dns-packet') as DnsPacket;

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

export type Zone =
  | {
    readonly kind: 'records';
    /** MX records; an exchange of '' is the null MX of RFC 7505 ("accepts no mail"). */
    readonly mx?: readonly { readonly preference: number; readonly exchange: string }[];
    readonly a?: readonly string[];
    readonly aaaa?: readonly string[];
    /** TXT records (SPF, DKIM keys, DMARC), each one string, split into 255-byte chunks on the wire. */
    readonly txt?: readonly string[];
    /** Answer after this many ms (default at once). */
    readonly delayMs?: number;
  }
  /** Never answers. */
  | { readonly kind: 'hang' }
  | { readonly kind: 'servfail' };

export interface DnsServer {
  /** `127.0.0.1:<port>`, for Resolver.setServers / DNS_SERVERS. */
  readonly server: string;
  /** Lower-case name → zone; names without one answer NXDOMAIN. */
  readonly zones: Map<string, Zone>;
  /** Queries seen by `name TYPE` (e.g. `example.com MX`). */
  readonly queries: Map<string, number>;
  /** Sum of queries. */
  total(): number;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<DnsServer> {
  const zones = new Map<string, Zone>();
  const queries = new Map<string, number>();
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg: Buffer, from: RemoteInfo) => {
    let query: Packet;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const question = query.questions[0];
    if (question === undefined) return;
    const name = question.name.toLowerCase();
    queries.set(`${name} ${question.type}`, (queries.get(`${name} ${question.type}`) ?? 0) + 1);
    const zone = zones.get(name);
    if (zone?.kind === 'hang') return;
    let rcode: number = RCODE.NOERROR;
    const answers: Answer[] = [];
    if (zone === undefined) rcode = RCODE.NXDOMAIN;
    else if (zone.kind === 'servfail') rcode = RCODE.SERVFAIL;
    else if (question.type === 'MX') {
      for (const mx of zone.mx ?? []) answers.push({ name: question.name, type: 'MX', ttl: 300, data: mx });
    } else if (question.type === 'A') {
      for (const ip of zone.a ?? []) answers.push({ name: question.name, type: 'A', ttl: 300, data: ip });
    } else if (question.type === 'AAAA') {
      for (const ip of zone.aaaa ?? []) answers.push({ name: question.name, type: 'AAAA', ttl: 300, data: ip });
    } else if (question.type === 'TXT') {
      for (const t of zone.txt ?? []) {
        const chunks: Buffer[] = [];
        const b = Buffer.from(t);
        for (let i = 0; i < b.length; i += 255) chunks.push(b.subarray(i, i + 255));
        answers.push({ name: question.name, type: 'TXT', ttl: 300, data: chunks });
      }
    }
    const response = dnsPacket.encode({
      id: query.id ?? 0, type: 'response', questions: query.questions, answers,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_AVAILABLE | rcode,
    });
    const delay = zone?.kind === 'records' ? zone.delayMs ?? 0 : 0;
    if (delay > 0) setTimeout(() => socket.send(response, from.port, from.address), delay).unref();
    else socket.send(response, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    server: `127.0.0.1:${port}`, zones, queries,
    total: () => [...queries.values()].reduce((a, b) => a + b, 0),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
