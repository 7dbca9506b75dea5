// A loopback HTTP server serving list fixtures the tests set per path, and a loopback CONNECT proxy
// that records the targets it tunnels to. Nothing reaches the internet.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export type Route =
  | { kind: 'body'; body: string | Uint8Array; status?: number; headers?: Record<string, string> }
  /** Headers at once, then `chunk` every `everyMs` until the client goes away or `total` bytes were sent. */
  | { kind: 'stream'; chunk: string; everyMs: number; total: number }
  /** Never answers. */
  | { kind: 'hang' };

export interface ListServer {
  readonly url: string;
  readonly routes: Map<string, Route>;
  /** Per path: requests seen, and bytes sent by the last 'stream' route before it stopped. */
  readonly hits: Map<string, number>;
  readonly streamed: Map<string, { sent: number; closedEarly: boolean }>;
  /** User-Agent of the last request. */
  lastUserAgent: string | undefined;
  close(): Promise<void>;
}

export async function startListServer(): Promise<ListServer> {
  const routes = new Map<string, Route>();
  const hits = new Map<string, number>();
  const streamed = new Map<string, { sent: number; closedEarly: boolean }>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    state.lastUserAgent = req.headers['user-agent'];
    const route = routes.get(path);
    if (route === undefined) { res.writeHead(404).end('not found'); return; }
    if (route.kind === 'hang') return;
    if (route.kind === 'body') { res.writeHead(route.status ?? 200, { 'content-type': 'text/plain', ...route.headers }).end(route.body); return; }
    res.writeHead(200, { 'content-type': 'text/plain' });
    const record = { sent: 0, closedEarly: false };
    streamed.set(path, record);
    const timer = setInterval(() => {
      if (record.sent >= route.total) { clearInterval(timer); res.end(); return; }
      res.write(route.chunk);
      record.sent += Buffer.byteLength(route.chunk);
    }, route.everyMs);
    res.on('close', () => {
      clearInterval(timer);
      if (record.sent < route.total) record.closedEarly = true;
    });
  });
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: ListServer = {
    url: `http://127.0.0.1:${port}`, routes, hits, streamed, lastUserAgent: undefined,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return state;
}

export interface ConnectProxy {
  readonly url: string;
  /** host:port of every CONNECT request. */
  readonly targets: string[];
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    targets.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    sockets.add(client);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`, targets,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
