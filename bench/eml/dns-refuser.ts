// A DNS server on loopback that refuses every query at once (RCODE 5, REFUSED): the filters of the
// e-mail comparison are pointed at it, so any lookup they still make fails immediately instead of
// waiting for a timeout (rspamd's resolver does not give up on an ICMP "port unreachable" and waited
// 0.1 s per query round, which held its throughput to what the waits allowed, not its CPU).
import { createSocket, type Socket } from 'node:dgram';

export const DNS_REFUSER_PORT = 5353;

export async function startDnsRefuser(): Promise<{ readonly server: string; close(): Promise<void> }> {
  const socket: Socket = createSocket('udp4');
  socket.on('message', (query, from) => {
    if (query.length < 12) return;
    const answer = Buffer.from(query);
    answer[2] = (answer[2]! | 0x80) & 0xf9; // QR = response, AA and TC clear, opcode and RD kept
    answer[3] = (answer[3]! & 0x80) | 0x05; // RA kept, RCODE = REFUSED
    answer.writeUInt16BE(0, 6); // no answers, authority or additional records
    answer.writeUInt16BE(0, 8);
    answer.writeUInt16BE(0, 10);
    // The question section is kept; anything after it (an EDNS OPT record) is dropped.
    socket.send(answer.subarray(0, questionEnd(answer)), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(DNS_REFUSER_PORT, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${DNS_REFUSER_PORT}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function questionEnd(msg: Buffer): number {
  const questions = msg.readUInt16BE(4);
  let at = 12;
  for (let q = 0; q < questions && at < msg.length; q++) {
    while (at < msg.length && msg[at] !== 0) at += (msg[at]! & 0xc0) === 0xc0 ? 1 : msg[at]! + 1;
    at += 5; // the root label, QTYPE, QCLASS
  }
  return Math.min(at, msg.length);
}
