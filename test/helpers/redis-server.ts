// Throwaway Redis servers for tests that must change server settings, stall or kill the server: a
// real `redis-server` on a spare port (no persistence unless asked for), and a fake one that
// completes the handshake and then never answers data commands (a hung server).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ThrowawayRedis {
  readonly port: number;
  readonly url: string;
  /** The running server's process id (changes on restart). */
  readonly pid: number;
  /** SIGKILL the server (no goodbye to clients). */
  kill(): Promise<void>;
  /** Start it again on the same port (with a persistent server: from its append-only file). */
  restart(): Promise<void>;
  /** SIGSTOP: the server keeps its connections open and answers nothing. */
  freeze(): void;
  /** SIGCONT after freeze(). */
  thaw(): void;
  /** One command through redis-cli (e.g. `CLIENT PAUSE 2000 WRITE`); resolves with its output. */
  command(...args: string[]): string;
  /** Kill the server and remove its files. */
  stop(): Promise<void>;
}

export interface ThrowawayRedisOptions {
  /**
   * Append-only file in a temporary directory, so that restart() after kill() comes back with every
   * acknowledged key: Redis write()s the file before it replies (a SIGKILL of the process loses
   * nothing; `appendfsync everysec` only leaves the last second to a power cut, and `always` would
   * add an fsync to every claim on this shared disk). Default false: `--save '' --appendonly no`.
   */
  persistent?: boolean;
}

export async function spareLocalPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts `redis-server` with the given extra arguments; stop() (or kill()) it in an after() hook. */
export async function startThrowawayRedis(args: string[] = [], options: ThrowawayRedisOptions = {}): Promise<ThrowawayRedis> {
  const port = await spareLocalPort();
  const dir = mkdtempSync(join(tmpdir(), 'palisade-redis-'));
  const persistence = options.persistent
    ? ['--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec']
    : ['--save', '', '--appendonly', 'no'];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...persistence, ...args], {
      stdio: 'ignore',
    });
    await waitForPort(port, 5000);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGCONT');
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  // A test process that ends without its after() hook (killed, crashed) leaves no server behind.
  process.on('exit', () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() { return child!.pid!; },
    kill,
    restart: start,
    freeze() { child!.kill('SIGSTOP'); },
    thaw() { child!.kill('SIGCONT'); },
    command(...cmd: string[]) {
      const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...cmd], { encoding: 'utf8', timeout: 5000 });
      if (r.status !== 0) throw new Error(`redis-cli ${cmd.join(' ')}: ${r.stderr || r.error?.message}`);
      return r.stdout.trim();
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = new Socket();
      s.once('error', () => { s.destroy(); resolve(false); });
      s.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port}`);
    await sleep(25);
  }
}

/**
 * A RESP server that answers the connection handshake (CLIENT, INFO, CONFIG GET, PING) and leaves
 * every other command unanswered forever, as a wedged Redis would. `answer(args)` may answer some
 * of them first (a RESP reply, e.g. '+OK\r\n'); once it returns null that connection answers
 * nothing more (replies must stay in order), as a Redis that stalled in the middle of a request.
 */
export async function startHungRedis(answer: (args: string[]) => string | null = () => null): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = '';
    let stuck = false;
    socket.on('data', (chunk) => {
      pending += chunk.toString('latin1');
      for (;;) {
        const parsed = parseCommand(pending);
        if (!parsed) break;
        pending = pending.slice(parsed.used);
        if (stuck) continue;
        const name = parsed.args[0]?.toLowerCase();
        if (name === 'info') {
          const body = 'redis_version:7.0.0\r\nloading:0\r\n';
          socket.write(`$${body.length}\r\n${body}\r\n`);
        } else if (name === 'client') {
          socket.write('+OK\r\n');
        } else if (name === 'config') {
          socket.write('*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n');
        } else if (name === 'ping') {
          socket.write('+PONG\r\n');
        } else {
          const reply = answer(parsed.args);
          if (reply === null) stuck = true;
          else socket.write(reply);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One RESP array of bulk strings from the front of `buf`, or null when incomplete. */
function parseCommand(buf: string): { args: string[]; used: number } | null {
  if (!buf.startsWith('*')) return null;
  let at = buf.indexOf('\r\n');
  if (at < 0) return null;
  const n = Number(buf.slice(1, at));
  at += 2;
  const args: string[] = [];
  for (let i = 0; i < n; i++) {
    const end = buf.indexOf('\r\n', at);
    if (end < 0 || buf[at] !== '$') return null;
    const len = Number(buf.slice(at + 1, end));
    if (buf.length < end + 2 + len + 2) return null;
    args.push(buf.slice(end + 2, end + 2 + len));
    at = end + 2 + len + 2;
  }
  return { args, used: at };
}
