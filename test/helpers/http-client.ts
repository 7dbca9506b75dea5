// A small HTTP/1.1 client for load in tests: keep-alive connections, one request in flight per
// connection (uWS closes a connection that pipelines a request behind a response still pending, as
// browsers never do), responses parsed by Content-Length (what the service sends). fetch tops out
// near 1,000 requests/s in one test process; this reaches the service's own limits, so races are
// real races.
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly body: string;
}

interface Pending {
  readonly raw: Buffer;
  readonly resolve: (r: RawResponse) => void;
  readonly reject: (e: Error) => void;
}

class Connection {
  readonly #socket: Socket;
  readonly #pending: Pending[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #closed = false;

  constructor(port: number, host: string) {
    this.#socket = connect(port, host);
    this.#socket.setNoDelay(true);
    this.#socket.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      this.#parse();
    });
    const fail = (err?: Error) => {
      this.#closed = true;
      for (const p of this.#pending.splice(0)) p.reject(err ?? new Error('connection closed'));
    };
    this.#socket.on('error', fail);
    this.#socket.on('close', () => fail());
  }

  get load(): number { return this.#closed ? Infinity : this.#pending.length; }

  send(raw: Buffer): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new Error('connection closed'));
      this.#pending.push({ raw, resolve, reject });
      if (this.#pending.length === 1) this.#socket.write(raw);
    });
  }

  #parse(): void {
    for (;;) {
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.#buffer.subarray(0, end).toString('latin1');
      const status = Number(head.slice(9, 12));
      const m = /\r\ncontent-length: *(\d+)/i.exec(head);
      const length = m ? Number(m[1]) : 0;
      if (this.#buffer.length < end + 4 + length) return;
      const body = this.#buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      this.#buffer = this.#buffer.subarray(end + 4 + length);
      this.#pending.shift()?.resolve({ status, body });
      const next = this.#pending[0];
      if (next) this.#socket.write(next.raw);
    }
  }

  close(): void {
    this.#socket.destroy();
  }
}

export class RawClient {
  readonly #connections: Connection[];
  #next = 0;

  constructor(port: number, connections = 32, host = '127.0.0.1') {
    this.#connections = Array.from({ length: connections }, () => new Connection(port, host));
  }

  /** Sends on the next connection in turn (round robin), queued behind what it already carries. */
  request(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<RawResponse> {
    let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    const payload = body === undefined ? '' : body;
    if (body !== undefined) head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n`;
    const raw = Buffer.from(`${head}\r\n${payload}`);
    const conn = this.#connections[this.#next++ % this.#connections.length]!;
    return conn.send(raw);
  }

  close(): void {
    for (const c of this.#connections) c.close();
  }
}
