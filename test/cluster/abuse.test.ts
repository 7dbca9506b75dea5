// Issue 6 acceptance over HTTP against the running clustered service (WORKERS=2), three services
// started side by side:
//   A  shared-memory store, trusted proxy on loopback (X-Forwarded-For makes the client IP),
//      FLOOD_RATE_LIMIT=100/1m, threats on with short marks, PENALTY_TTL=5s;
//   B  the same flood rule on Redis;
//   C  FLOOD_RATE_LIMIT=5/2s(block=3s), no trusted proxy, THREATS_ENABLED=0, monitoring behind
//      HTTP Basic credentials; its clients are distinct loopback addresses (127.0.0.x).
// Fixed windows are aligned to the epoch: a burst whose requests could straddle a window boundary
// is discarded and repeated with a fresh client (the stores would rightly admit two windows' worth).
// Durations are checked from below only where that is sound: a mark or block set by a request sent
// at t cannot end before t + duration, so the first answer without it must arrive after that.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { probeFamily } from '../../src/abuse/probe-paths.js';
import { encodePayload, solveV2 } from '../helpers/pow-test-server.js';
import { REDIS_URL, requireService } from '../helpers/services.js';
import { awayFromWindowEnd } from '../helpers/windows.js';
import { createTestKey, startService, type Service, type TestKey } from '../helpers/service.js';

const TRUSTED = '127.0.0.1/32,::1/128';
const BASE_ENV = { WORKERS: '2', LOG_LEVEL: 'info', ACCESS_LOG_ANONYMIZE_IP_ADDRESS: '0' };
const RATE_LIMITED = { error: 'RATE_LIMITED', statusCode: 429 };
const IP_BLOCKED = { error: 'IP_BLOCKED', statusCode: 403 };
const NOT_FOUND = { error: 'NOT_FOUND', statusCode: 404 };
/** Clock slack between this process, the workers and the store (all read the same system clock). */
const SLACK_MS = 100;
const PENALTY_TTL_MS = 5000;
/** The readout key's probabilistic cost: the issued cost is READOUT_COST × (1 + penalty). */
const READOUT_COST = 100;
const MONITOR_USER = 'mon';
const MONITOR_PASSWORD = `pw-${randomInt(1e9)}`;
const BASIC = `Basic ${Buffer.from(`${MONITOR_USER}:${MONITOR_PASSWORD}`).toString('base64')}`;

// ---- a keep-alive HTTP client that reports headers and timing ----------------------------------

interface Res {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Epoch ms before the request was handed to the agent (the server saw it later). */
  readonly sent: number;
  /** Epoch ms when the response was complete (the server answered earlier). */
  readonly received: number;
}

class Client {
  readonly #agent: Agent;
  readonly #port: number;
  readonly #host: string;
  readonly #localAddress: string | undefined;
  /** Distinct connections used so far. */
  readonly sockets = new Set<Socket>();

  constructor(port: number, options: { connections?: number; host?: string; localAddress?: string } = {}) {
    this.#port = port;
    this.#host = options.host ?? '127.0.0.1';
    this.#localAddress = options.localAddress;
    this.#agent = new Agent({ keepAlive: true, maxSockets: options.connections ?? 24 });
  }

  request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Res> {
    const all = body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    return new Promise((resolve, reject) => {
      const sent = Date.now();
      const req = request({ agent: this.#agent, host: this.#host, port: this.#port, localAddress: this.#localAddress, method, path, headers: all }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), sent, received: Date.now() }));
      });
      req.on('socket', (s) => this.sockets.add(s));
      req.on('error', reject);
      req.end(body);
    });
  }

  get(path: string, headers?: Record<string, string>): Promise<Res> {
    return this.request('GET', path, headers);
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** One request written as given on its own connection; the answer read until the server closes. */
function rawRequest(port: number, text: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const answer = Buffer.concat(chunks).toString('utf8');
      const split = answer.indexOf('\r\n\r\n');
      resolve({ status: Number(answer.slice(9, 12)), body: split < 0 ? '' : answer.slice(split + 4) });
    });
    socket.end(text);
  });
}

// ---- client addresses, unique per run (Redis keeps windows across runs) ------------------------

const RUN = randomInt(1, 0xfffe);
let serial = 0;
const usedV4 = new Set<number>();
/** A random address in 198.18.0.0/15 not used before in this run. */
function freshV4(): string {
  let a: number;
  do a = randomInt(1, 1 << 17); while (usedV4.has(a));
  usedV4.add(a);
  return `198.${18 + (a >> 16)}.${(a >> 8) & 0xff}.${a & 0xff}`;
}
const freshV6Prefix = () => `2001:db8:${RUN.toString(16)}:${(++serial).toString(16)}`;
const xff = (ip: string) => ({ 'x-forwarded-for': ip });

// ---- helpers -----------------------------------------------------------------------------------

function json(res: Res): unknown {
  return JSON.parse(res.body) as unknown;
}

function count(results: readonly Res[], status: number): number {
  return results.filter((r) => r.status === status).length;
}

function straddles(results: readonly Res[], windowMs: number): boolean {
  const first = Math.min(...results.map((r) => r.sent));
  const last = Math.max(...results.map((r) => r.received));
  return Math.floor((first - SLACK_MS) / windowMs) !== Math.floor((last + SLACK_MS) / windowMs);
}

/** Runs `attempt` (with a fresh client each time) until its requests all fall in one window. */
/**
 * Runs `attempt` until its requests fall inside one window. The flood 429s of a discarded attempt
 * were counted by the service all the same: they go into `tally` too, so the metric still matches.
 */
async function inOneWindow<T extends { results: readonly Res[] }>(
  windowMs: number, attempt: () => Promise<T>, tally?: { flood: number },
): Promise<T> {
  for (let i = 0; i < 4; i++) {
    // Short windows: start well inside one, so a retry is rarely needed.
    // (At least SLACK_MS into the next window, or straddles() counts the attempt as straddling.)
    if (windowMs <= 10_000) await awayFromWindowEnd(windowMs, windowMs / 3, SLACK_MS);
    const outcome = await attempt();
    if (!straddles(outcome.results, windowMs)) return outcome;
    if (tally) tally.flood += count(outcome.results, 429);
  }
  throw new Error('four attempts in a row straddled a window boundary');
}

/** Every 429 is the catalogue body with Retry-After in whole seconds, consistent with the window end. */
function assertRateLimited(results: readonly Res[], windowMs: number): void {
  const windowEnd = (Math.floor((Math.min(...results.map((r) => r.sent)) - SLACK_MS) / windowMs) + 1) * windowMs;
  for (const r of results.filter((x) => x.status === 429)) {
    assert.deepEqual(json(r), RATE_LIMITED);
    const retryAfter = r.headers['retry-after'];
    assert.match(String(retryAfter), /^[1-9]\d*$/, `Retry-After ${String(retryAfter)}`);
    const seconds = Number(retryAfter);
    assert.ok(seconds <= windowMs / 1000, `Retry-After ${seconds} beyond the window`);
    // retryAfter = ceil((windowEnd - serverNow) / 1000), at least 1, with sent ≤ serverNow ≤ received.
    assert.ok(windowEnd <= r.received + seconds * 1000 + SLACK_MS, `Retry-After ${seconds} ends before the window`);
    if (seconds > 1) assert.ok(windowEnd > r.sent + (seconds - 1) * 1000 - SLACK_MS, `Retry-After ${seconds} too long`);
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, intervalMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

interface LogLine {
  readonly worker?: number;
  readonly type?: string;
  readonly ip?: string;
  readonly status?: number;
  readonly kind?: string;
  readonly msg?: string;
}

function logLines(svc: Service): LogLine[] {
  const out: LogLine[] = [];
  for (const line of svc.output) {
    if (!line.startsWith('{')) continue;
    try { out.push(JSON.parse(line) as LogLine); } catch { /* a partial line */ }
  }
  return out;
}

/** Access-log statuses of `ip` per worker, once `total` lines have arrived. */
async function accessByWorker(svc: Service, ip: string, total: number): Promise<Map<number, number>> {
  return waitFor(`${total} access log lines of ${ip}`, () => {
    const lines = logLines(svc).filter((l) => l.type === 'access' && l.ip === ip);
    if (lines.length < total) return undefined;
    assert.equal(lines.length, total);
    const perWorker = new Map<number, number>();
    for (const l of lines) perWorker.set(l.worker!, (perWorker.get(l.worker!) ?? 0) + 1);
    return perWorker;
  }, 10_000, 50);
}

function marks(svc: Service, kind: string, anonymizedIp?: string): number {
  return logLines(svc).filter((l) => l.msg === 'IP marked' && l.kind === kind && (anonymizedIp === undefined || l.ip === anonymizedIp)).length;
}

async function metric(client: Client, name: string, labels: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await client.get('/.metrics', headers);
  assert.equal(res.status, 200);
  const m = new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(res.body);
  return m ? Number(m[1]) : 0;
}

async function startCluster(env: Record<string, string>, waitReady = true): Promise<Service> {
  const svc = await startService({ env: { ...BASE_ENV, ...env }, waitReady, timeoutMs: 90_000 });
  // Logged by the primary once every worker listens: bursts must reach both.
  await svc.waitForOutput(/"msg":"palisade listening"/, 90_000);
  return svc;
}

/** Light keys shared by the tests of a service. */
interface Keys {
  /** Deterministic SHA-256, counters 1..50: cheap to issue. */
  readonly cheap: TestKey;
  /** Probabilistic, cost 100, maxCost 100,000: the issued cost reads out the penalty exactly. */
  readonly readout: TestKey;
  /** Deterministic SHA-256, counters 100..150: a solved counter shows the range it was issued from. */
  readonly ranged: TestKey;
}

async function createKeys(svc: Service): Promise<Keys> {
  return {
    cheap: await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } }),
    readout: await createTestKey(svc, {
      challengePolicy: { algorithm: 'SHA-256', mode: 'probabilistic', cost: READOUT_COST, maxCost: 100_000, keyPrefixLength: 1 },
    }),
    ranged: await createTestKey(svc, { challengePolicy: { counterMin: 100, counterMax: 150 } }),
  };
}

const challengePath = (key: TestKey) => `/v1/challenge?apiKey=${key.id}`;
const verifyPath = (key: TestKey) => `/v1/verify?apiKey=${key.id}`;

/** The penalty the service applies to `headers`' client, read from the issued cost. */
async function readPenalty(client: Client, keys: Keys, headers: Record<string, string>): Promise<{ penalty: number; res: Res }> {
  const res = await client.get(challengePath(keys.readout), headers);
  assert.equal(res.status, 200, res.body);
  const cost = (json(res) as { parameters: { cost: number } }).parameters.cost;
  assert.equal(cost % READOUT_COST, 0, `cost ${cost}`);
  return { penalty: cost / READOUT_COST - 1, res };
}

/** A ranged challenge solved with altcha-lib: the secret counter and the widget payload. */
async function solvedChallenge(client: Client, keys: Keys, headers: Record<string, string>): Promise<{ counter: number; payload: string }> {
  const res = await client.get(challengePath(keys.ranged), headers);
  assert.equal(res.status, 200, res.body);
  const { solution, payload } = await solveV2(res.body);
  return { counter: solution.counter, payload };
}

/** A failed verification: a fresh challenge answered with a wrong key → INVALID_SOLUTION. */
async function failVerification(client: Client, keys: Keys, headers: Record<string, string>): Promise<Res> {
  const ch = await client.get(challengePath(keys.ranged), headers);
  assert.equal(ch.status, 200, ch.body);
  const { parameters, signature } = json(ch) as { parameters: unknown; signature: string };
  const payload = encodePayload({ challenge: { parameters, signature }, solution: { counter: 0, derivedKey: '00'.repeat(32) } });
  const res = await client.request('POST', verifyPath(keys.ranged), headers, JSON.stringify({ payload }));
  assert.equal(res.status, 200);
  assert.deepEqual(json(res), { verified: false, reason: 'INVALID_SOLUTION' });
  return res;
}

interface Verified {
  readonly score: number;
  readonly data: URLSearchParams;
}

async function verify(client: Client, keys: Keys, headers: Record<string, string>, payload: string): Promise<Verified & { res: Res }> {
  const res = await client.request('POST', verifyPath(keys.ranged), headers, JSON.stringify({ payload }));
  assert.equal(res.status, 200, res.body);
  const body = json(res) as { verified: boolean; score: number; verificationData: string };
  assert.equal(body.verified, true, res.body);
  return { score: body.score, data: new URLSearchParams(body.verificationData), res };
}

/** Sends `n` challenge requests at once over the client's connections. */
function burst(client: Client, key: TestKey, n: number, headersOf: (i: number) => Record<string, string>): Promise<Res[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => client.get(challengePath(key), headersOf(i))));
}

/** 300 challenge requests from one fresh client over ≥ 20 connections: exactly 100 pass, on both workers. */
async function floodAdmitsExactly100(svc: Service, keys: Keys, tally: { flood: number }): Promise<void> {
  const client = new Client(svc.port, { connections: 24 });
  try {
    const { results, ip } = await inOneWindow(60_000, async () => {
      const ip = freshV4();
      return { ip, results: await burst(client, keys.cheap, 300, () => xff(ip)) };
    }, tally);
    tally.flood += count(results, 429);
    assert.equal(count(results, 200), 100);
    assert.equal(count(results, 429), 200);
    assertRateLimited(results, 60_000);
    assert.ok(client.sockets.size >= 20, `${client.sockets.size} connections`);
    const perWorker = await accessByWorker(svc, ip, 300);
    assert.equal(perWorker.size, 2, `answered by workers ${[...perWorker.keys()].join(',')}`);
  } finally {
    client.close();
  }
}

/** Three spellings of addresses in one /64 share 100 a minute; the next /64 has its own bucket. */
async function ipv6SharesPer64(svc: Service, keys: Keys, tally: { flood: number }): Promise<void> {
  const client = new Client(svc.port, { connections: 24 });
  try {
    const { results } = await inOneWindow(60_000, async () => {
      const prefix = freshV6Prefix();
      const [, , g2, g3] = prefix.split(':');
      const spellings = [`${prefix}::1`, `${prefix}:ffff::9`, `2001:0DB8:${g2!.toUpperCase()}:${g3!.padStart(4, '0')}:0:0:0:7`];
      return { results: await burst(client, keys.cheap, 150, (i) => xff(spellings[i % 3]!)) };
    }, tally);
    tally.flood += count(results, 429);
    assert.equal(count(results, 200), 100);
    assert.equal(count(results, 429), 50);
    assertRateLimited(results, 60_000);
    const other = freshV6Prefix();
    const fresh = await burst(client, keys.cheap, 10, () => xff(`${other}::1`));
    assert.deepEqual(fresh.map((r) => r.status), Array(10).fill(200));
  } finally {
    client.close();
  }
}

// 50 scanner paths, every family (checked against probeFamily so the list stays honest); the
// expected answer is the router's.
const PROBES: readonly (readonly [string, number])[] = [
  ['/.env', 404], ['/.env.local', 404], ['/.env.production', 404], ['/app/.env', 404], ['/.git/config', 404],
  ['/.git/HEAD', 404], ['/.svn/entries', 404], ['/.aws/credentials', 404], ['/.ssh/id_rsa', 404], ['/.htaccess', 404],
  ['/.DS_Store', 404], ['/config.json', 404], ['/settings.yml', 404], ['/docker-compose.yml', 404], ['/web.config', 404],
  ['/wp-login.php', 404], ['/wp-admin/', 404], ['/wp-content/plugins/', 404], ['/xmlrpc.php', 404], ['/wordpress/', 404],
  ['/phpmyadmin/', 404], ['/phpMyAdmin/index.php', 404], ['/pma/', 404], ['/adminer.php', 404], ['/administrator/', 404],
  ['/manager/html', 404], ['/cpanel', 404], ['/actuator/env', 404], ['/server-status', 404], ['/_profiler/', 404],
  ['/debug/pprof/', 404], ['/telescope/requests', 404], ['/phpinfo.php', 404], ['/console', 404], ['/backup.zip', 404],
  ['/db.sql', 404], ['/site.tar.gz', 404], ['/index.php.bak', 404], ['/backups/', 404], ['/../../etc/passwd', 404],
  ['/%2e%2e/%2e%2e/etc/passwd', 404], ['/static/..%2f..%2fwin.ini', 404], ['/v1/challenge?file=../../etc/passwd', 401],
  ['/cgi-bin/test.cgi', 404], ['/shell.php', 404], ['/upload.aspx', 404], ['/login.jsp', 404], ['/struts.action', 404],
  ['/c99.php', 404], ['/index.phtml', 404],
];

function probeRequests(client: Client, ip: string): Promise<Res[]> {
  return Promise.all(PROBES.map(([path]) => client.get(path, xff(ip))));
}

function assertProbeAnswers(results: readonly Res[]): void {
  const wrong = results.map((r, i) => [PROBES[i]![0], r.status, PROBES[i]![1]] as const).filter(([, got, want]) => got !== want);
  assert.deepEqual(wrong, []);
  for (const r of results) if (r.status === 404) assert.deepEqual(json(r), NOT_FOUND);
}

// ---- the tests ---------------------------------------------------------------------------------

test('the probe list names 50 paths of every family', () => {
  assert.equal(PROBES.length, 50);
  const families = new Set(PROBES.map(([p]) => {
    const q = p.indexOf('?');
    const family = q < 0 ? probeFamily(p) : probeFamily(p.slice(0, q), p.slice(q + 1));
    assert.notEqual(family, null, p);
    return family;
  }));
  assert.deepEqual([...families].sort(), ['admin-panel', 'backup', 'debug', 'env-config', 'shell', 'traversal', 'wordpress']);
});

// The three services run side by side; within each, the clients are independent and run together,
// and the metrics comparison runs last (subtests inherit concurrency unless told otherwise).
describe('abuse protection over HTTP', { concurrency: true }, () => {
  describe('A: shared memory, trusted loopback proxy, 100/1m, threats on', { concurrency: 1 }, () => {
    let svc: Service;
    let keys: Keys;
    let client: Client;
    // What the tests saw, to compare with the service's own counters at the end.
    const tally = { flood: 0, apiKey: 0, blocked: 0, probes: 0, smuggling: 0 };

    before(async () => {
      svc = await startCluster({
        X_FORWARDED_FOR_TRUSTED: TRUSTED, FLOOD_RATE_LIMIT: '100/1m', THREATS_ENABLED: '1',
        THREATS_PROBE_LIMIT: '2/10s(expire=2s)', THREATS_MALICIOUS_LIMIT: '10/1m(expire=3s)', PENALTY_TTL: `${PENALTY_TTL_MS / 1000}s`,
      });
      keys = await createKeys(svc);
      client = new Client(svc.port, { connections: 8 });
    });
    after(async () => {
      client?.close();
      await svc?.stop();
    });

    describe('independent clients', { concurrency: true }, () => {
      test('100/1m admits exactly 100 of 300 requests across both workers; 429s carry Retry-After', async () => {
        await floodAdmitsExactly100(svc, keys, tally);
      });

      test('two addresses in one IPv6 /64 share a bucket; another /64 does not', async () => {
        await ipv6SharesPer64(svc, keys, tally);
      });

      test('X-Forwarded-For from a peer that is not a trusted proxy does not change the key', async () => {
        let n = 1;
        const { results, local } = await inOneWindow(60_000, async () => {
          // 127.0.0.2 is loopback but not in X_FORWARDED_FOR_TRUSTED (127.0.0.1/32).
          const local = `127.0.0.${++n}`;
          const c = new Client(svc.port, { connections: 24, localAddress: local });
          try {
            return { local, results: await burst(c, keys.cheap, 120, (i) => xff(i % 2 ? freshV4() : `${freshV6Prefix()}::1`)) };
          } finally {
            c.close();
          }
        }, tally);
        tally.flood += count(results, 429);
        assert.equal(count(results, 200), 100);
        assert.equal(count(results, 429), 20);
        assertRateLimited(results, 60_000);
        const perWorker = await accessByWorker(svc, local, 120);
        assert.equal([...perWorker.values()].reduce((a, b) => a + b), 120);
      });

      test('a scanner replaying 50 probe paths is marked, then refused on challenge and verify; another IP is not', async () => {
        const scanner = `192.0.2.${1 + (RUN % 254)}`;
        const normal = xff(freshV4());
        const { payload } = await solvedChallenge(client, keys, normal);
        const billed = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });

        const sent = Date.now();
        const results = await probeRequests(client, scanner);
        tally.probes += results.length;
        assertProbeAnswers(results);

        // Probes are recorded as they pass (fire and forget): the block follows within moments.
        const refused = await waitFor('the scanner to be refused', async () => {
          const r = await client.get(challengePath(keys.cheap), xff(scanner));
          if (r.status === 403) return r;
          assert.equal(r.status, 200, r.body);
          return undefined;
        }, 2000, 100);
        tally.blocked++;
        assert.deepEqual(json(refused), IP_BLOCKED);
        // Refused challenges are not the key's usage (regression: they were counted before the refusal).
        for (let i = 0; i < 5; i++) {
          const r = await client.get(challengePath(billed), xff(scanner));
          tally.blocked++;
          assert.deepEqual([r.status, json(r)], [403, IP_BLOCKED]);
        }
        assert.equal((await client.get(challengePath(billed), normal)).status, 200);
        const usageCounted = Date.now();
        // A valid payload is refused before it is looked at, so it stays usable for its owner.
        const stolen = await client.request('POST', verifyPath(keys.ranged), xff(scanner), JSON.stringify({ payload }));
        tally.blocked++;
        assert.equal(stolen.status, 403);
        assert.deepEqual(json(stolen), IP_BLOCKED);

        const own = await verify(client, keys, normal, payload);
        assert.deepEqual([own.data.get('penalty'), own.data.get('score'), own.data.get('classification')], ['0', '0', 'GOOD']);
        assert.equal((await client.get(challengePath(keys.cheap), normal)).status, 200);
        assert.equal((await readPenalty(client, keys, normal)).penalty, 0);

        await waitFor('the probe and malicious marks to be logged', () => (marks(svc, 'probe', '192.0.2.0') >= 1 && marks(svc, 'malicious', '192.0.2.0') >= 1) || undefined, 3000, 50);

        // THREATS_MALICIOUS_LIMIT expire=3s: the block lasts 3 s after the last probe, then lifts.
        const released = await waitFor('the block to lift', async () => {
          const r = await client.get(challengePath(keys.cheap), xff(scanner));
          if (r.status === 200) return r;
          assert.deepEqual([r.status, json(r)], [403, IP_BLOCKED]);
          tally.blocked++;
          return undefined;
        }, 3000 + 8000, 500);
        assert.ok(released.received >= sent + 3000 - SLACK_MS, `released ${released.received - sent} ms after the probes`);

        // Each worker writes its usage every second: after two, everything counted is in /usage.
        await sleep(Math.max(0, usageCounted + 2500 - Date.now()));
        const usage = await client.get('/usage', { ...normal, authorization: `Bearer ${billed.secret}` });
        assert.equal(usage.status, 200, usage.body);
        assert.equal((json(usage) as { requests: { apiKey: number } }).requests.apiKey, 1);
      });

      test('smuggling-shaped requests are malicious events: past THREATS_MALICIOUS_LIMIT the IP is refused', async () => {
        const ip = `203.0.113.${1 + (++serial % 254)}`;
        // Eleven events split across a boundary of THREATS_MALICIOUS_LIMIT's minute never pass 10 in
        // one window (a full run failed so).
        await awayFromWindowEnd(60_000, 10_000);
        const shapes = [
          'Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!', // duplicate Content-Length
          'Transfer-Encoding: gzip\r\n\r\n', // a coding other than chunked
          'Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n', // TE.TE
        ];
        for (let i = 0; i < 11; i++) {
          const r = await rawRequest(svc.port, `POST ${verifyPath(keys.cheap)} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: ${ip}\r\n${shapes[i % 3]}`);
          tally.smuggling++;
          assert.deepEqual([r.status, JSON.parse(r.body)], [400, { error: 'BAD_REQUEST', statusCode: 400 }]);
        }
        const refused = await waitFor('the smuggler to be refused', async () => {
          const r = await client.get(challengePath(keys.cheap), xff(ip));
          if (r.status === 403) return r;
          assert.equal(r.status, 200, r.body);
          return undefined;
        }, 2000, 100);
        tally.blocked++;
        assert.deepEqual(json(refused), IP_BLOCKED);
        await waitFor('the malicious mark to be logged', () => marks(svc, 'malicious', '203.0.113.0') === 1 || undefined, 3000, 50);
        assert.equal(marks(svc, 'probe', '203.0.113.0'), 0);
      });

      test('a probe mark (expire=2s) raises the penalty for its duration; the points last PENALTY_TTL', async () => {
        const ip = `198.51.100.${1 + (RUN % 254)}`;
        let lastSent = 0;
        // Three probes within one of THREATS_PROBE_LIMIT's 10 s windows.
        await awayFromWindowEnd(10_000, 2_000);
        for (const path of ['/.env', '/wp-login.php', '/.git/config']) {
          lastSent = Date.now();
          const r = await client.get(path, xff(ip));
          tally.probes++;
          assert.deepEqual([r.status, json(r)], [404, NOT_FOUND]);
        }
        // 3 probe points + 2 for the escalated malicious event + the probe mark's 8.
        await waitFor('penalty 13', async () => ((await readPenalty(client, keys, xff(ip))).penalty === 13 || undefined), 2000, 100);
        const seen: { penalty: number; res: Res }[] = [];
        await waitFor('penalty 0', async () => {
          const reading = await readPenalty(client, keys, xff(ip));
          seen.push(reading);
          return reading.penalty === 0 || undefined;
        }, PENALTY_TTL_MS + 8000, 250);
        const values = seen.map((s) => s.penalty);
        assert.ok(values.every((v, i) => [13, 5, 0].includes(v) && (i === 0 || v <= values[i - 1]!)), `readings ${values.join(',')}`);
        assert.ok(values.includes(5), `the mark ended before the points: ${values.join(',')}`);
        const markGone = seen.find((s) => s.penalty < 13)!;
        assert.ok(markGone.res.received >= lastSent + 2000 - SLACK_MS, `mark gone after ${markGone.res.received - lastSent} ms`);
        const pointsGone = seen.find((s) => s.penalty === 0)!;
        assert.ok(pointsGone.res.received >= lastSent + PENALTY_TTL_MS - SLACK_MS, `points gone after ${pointsGone.res.received - lastSent} ms`);
        assert.equal(marks(svc, 'probe', '198.51.100.0'), 1);
        assert.equal(marks(svc, 'malicious', '198.51.100.0'), 0);
      });

      test('failed verifications make the challenge harder and the score worse until PENALTY_TTL', async () => {
        // [failures, counter range of the scaled challenge (×(1+penalty)), score, class]
        const cases = [
          { failures: 0, range: [100, 150], score: '0', cls: 'GOOD' },
          { failures: 1, range: [200, 300], score: '0.81', cls: 'GOOD' },
          { failures: 2, range: [300, 450], score: '1.28', cls: 'NEUTRAL' },
          { failures: 6, range: [700, 1050], score: '2.07', cls: 'BAD' },
        ] as const;
        await Promise.all(cases.map(async (c) => {
          const who = xff(freshV4());
          let lastFailure = Date.now();
          for (let i = 0; i < c.failures; i++) {
            lastFailure = Date.now();
            await failVerification(client, keys, who);
          }
          // Failures are booked as the answer leaves: wait for the last one to land.
          await waitFor(`penalty ${c.failures}`, async () => ((await readPenalty(client, keys, who)).penalty === c.failures || undefined), 2000, 100);
          const { counter, payload } = await solvedChallenge(client, keys, who);
          assert.ok(counter >= c.range[0] && counter <= c.range[1], `${c.failures} failures: counter ${counter} outside ${c.range.join('..')}`);
          const v = await verify(client, keys, who, payload);
          assert.ok(v.res.received < lastFailure + PENALTY_TTL_MS, 'the machine stalled past PENALTY_TTL');
          assert.deepEqual(
            [v.data.get('penalty'), v.data.get('score'), v.data.get('classification'), v.score],
            [String(c.failures), c.score, c.cls, Number(c.score)],
          );
          assert.equal(v.data.get('reasons'), c.failures === 0 ? null : 'penalty,failed_attempts');
          if (c.failures === 0) return;
          // After PENALTY_TTL: the normal range and a clean score again.
          const clean = await waitFor('penalty 0', async () => {
            const reading = await readPenalty(client, keys, who);
            return reading.penalty === 0 ? reading : undefined;
          }, PENALTY_TTL_MS + 8000, 250);
          assert.ok(clean.res.received >= lastFailure + PENALTY_TTL_MS - SLACK_MS, `penalty gone after ${clean.res.received - lastFailure} ms`);
          const again = await solvedChallenge(client, keys, who);
          assert.ok(again.counter >= 100 && again.counter <= 150, `counter ${again.counter} after PENALTY_TTL`);
          const v2 = await verify(client, keys, who, again.payload);
          assert.deepEqual([v2.data.get('penalty'), v2.data.get('score'), v2.data.get('classification'), v2.data.get('reasons')], ['0', '0', 'GOOD', null]);
        }));
      });

      test('a per-key rate limit of 3/10s refuses the 4th challenge (and verify) with 429 RATE_LIMITED', async () => {
        const perIp = await createTestKey(svc, { rateLimit: '3/10s', challengePolicy: { counterMin: 1, counterMax: 50 } });
        const whole = await createTestKey(svc, { rateLimit: '3/10s(key=apiKey)', challengePolicy: { counterMin: 1, counterMax: 50 } });
        const broken = await createTestKey(svc, { rateLimit: 'three a minute', challengePolicy: { counterMin: 1, counterMax: 50 } });

        const { results } = await inOneWindow(10_000, async () => {
          const who = xff(freshV4());
          const results: Res[] = [];
          for (let i = 0; i < 4; i++) results.push(await client.get(challengePath(perIp), who));
          results.push(await client.request('POST', verifyPath(perIp), who, '{"payload":"x"}'));
          results.push(await client.get(challengePath(perIp), xff(freshV4())));
          return { results };
        });
        tally.apiKey += 2;
        assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 429, 429, 200]);
        assertRateLimited(results, 10_000);

        const { results: wholeKey } = await inOneWindow(10_000, async () => {
          const results: Res[] = [];
          for (let i = 0; i < 4; i++) results.push(await client.get(challengePath(whole), xff(freshV4())));
          return { results };
        });
        tally.apiKey += 1;
        assert.deepEqual(wholeKey.map((r) => r.status), [200, 200, 200, 429]);
        assertRateLimited(wholeKey, 10_000);

        // A stored rule that does not parse is logged and not applied.
        const who = xff(freshV4());
        for (let i = 0; i < 6; i++) assert.equal((await client.get(challengePath(broken), who)).status, 200);
        // (Log lines reach stdout in batches, up to 20 ms after they are written: src/log.ts.)
        await waitFor('the invalid rule to be logged', () => svc.output.some((l) => l.includes(broken.id) && l.includes('not valid; not applied')) || undefined, 3000, 20);
      });

      test('monitoring is exempt from the flood limit for the whitelist only', async () => {
        // Loopback (whitelisted by default, not behind XFF): spend its budget on challenges, then
        // /.live keeps answering while its other requests are refused.
        // A retry (window boundary) moves to ::1, also whitelisted, with a bucket of its own.
        const hosts = ['127.0.0.1', '::1'];
        let loop: Client | undefined;
        try {
          const { results } = await inOneWindow(60_000, async () => {
            loop?.close();
            loop = new Client(svc.port, { connections: 24, host: hosts.shift()! });
            const spent = await burst(loop, keys.cheap, 101, () => ({}));
            const live: Res[] = [];
            for (let i = 0; i < 20; i++) live.push(await loop!.get('/.live'));
            const still = await loop!.get(challengePath(keys.cheap));
            return { results: [...spent, ...live, still] };
          }, tally);
          tally.flood += count(results, 429);
          assert.deepEqual([count(results.slice(0, 101), 200), count(results.slice(0, 101), 429)], [100, 1]);
          assert.deepEqual(results.slice(101, 121).map((r) => r.status), Array(20).fill(200));
          assert.equal(results[121]!.status, 429);
          assertRateLimited(results, 60_000);
        } finally {
          loop?.close();
        }
        // Not whitelisted (203.0.113.x through the trusted proxy): counted, 403, then 429.
        const { results } = await inOneWindow(60_000, async () => {
          const ip = `203.0.113.${1 + (++serial % 254)}`;
          return { results: await Promise.all(Array.from({ length: 120 }, () => client.get('/.live', xff(ip)))) };
        }, tally);
        tally.flood += count(results, 429);
        assert.deepEqual([count(results, 403), count(results, 429)], [100, 20]);
        for (const r of results.filter((x) => x.status === 403)) assert.deepEqual(json(r), { error: 'MONITORING_FORBIDDEN', statusCode: 403 });
        assertRateLimited(results, 60_000);
      });
    });

    test('the service counted what the clients saw (palisade_* metrics, one log line per mark)', async () => {
      assert.equal(await metric(client, 'palisade_rate_limited_total', 'reason="flood"'), tally.flood);
      assert.equal(await metric(client, 'palisade_rate_limited_total', 'reason="api_key"'), tally.apiKey);
      assert.equal(await metric(client, 'palisade_blocked_total', 'reason="malicious"'), tally.blocked);
      assert.equal(await metric(client, 'palisade_threat_events_total', 'kind="probe"'), tally.probes);
      assert.equal(await metric(client, 'palisade_malicious_events_total', 'reason="smuggling"'), tally.smuggling);
      for (const kind of ['probe', 'malicious']) {
        const counted = await metric(client, 'palisade_ip_marked_total', `kind="${kind}"`);
        // The log line of the last mark may still be in its 20 ms batch (src/log.ts).
        await waitFor(`${counted} ${kind} marks in the log`, () => marks(svc, kind) >= counted || undefined, 3000, 20).catch(() => {});
        assert.equal(marks(svc, kind), counted, kind);
      }
    });
  });

  describe('B: Redis store, 100/1m', { concurrency: 1 }, async () => {
    const skip = !(await requireService('redis'));
    let svc: Service;
    let keys: Keys;
    const tally = { flood: 0 };
    before(async () => {
      if (skip) return;
      svc = await startCluster({ REDIS_URL, X_FORWARDED_FOR_TRUSTED: TRUSTED, FLOOD_RATE_LIMIT: '100/1m' });
      keys = await createKeys(svc);
    });
    after(async () => { await svc?.stop(); });

    test('100/1m admits exactly 100 of 300 requests across both workers; 429s carry Retry-After', { skip }, async () => {
      const health = (await (await fetch(`${svc.url}/.health`)).json()) as { checks: { redis: { kind: string; ok: boolean } } };
      assert.deepEqual([health.checks.redis.kind, health.checks.redis.ok], ['redis', true]);
      await floodAdmitsExactly100(svc, keys, tally);
    });

    test('two addresses in one IPv6 /64 share a bucket; another /64 does not', { skip }, async () => {
      await ipv6SharesPer64(svc, keys, tally);
      const client = new Client(svc.port, { connections: 1 });
      try {
        assert.equal(await metric(client, 'palisade_rate_limited_total', 'reason="flood"'), tally.flood);
      } finally {
        client.close();
      }
    });
  });

  describe('C: 5/2s(block=3s), no trusted proxy, THREATS_ENABLED=0, monitoring credentials', { concurrency: 1 }, () => {
    let svc: Service;
    let keys: Keys;
    let local = 10;
    const clients: Client[] = [];
    const tally = { flood: 0 };
    /** A client on its own loopback address: its own flood bucket. */
    const fresh = () => {
      const c = new Client(svc.port, { connections: 4, localAddress: `127.0.0.${++local}` });
      clients.push(c);
      return c;
    };
    /** Six requests: five pass, the sixth starts the block. */
    const exhaust = (headersOf: (i: number) => Record<string, string> = () => ({})) => inOneWindow(2000, async () => {
      const c = fresh();
      const results: Res[] = [];
      for (let i = 0; i < 6; i++) results.push(await c.get(challengePath(keys.cheap), headersOf(i)));
      return { c, results };
    }, tally);

    before(async () => {
      svc = await startCluster({
        FLOOD_RATE_LIMIT: '5/2s(block=3s)', THREATS_ENABLED: '0', MONITORING_HTTP_CREDENTIALS: `${MONITOR_USER}:${MONITOR_PASSWORD}`,
      }, false);
      await waitFor('/.live', async () => (await fetch(`${svc.url}/.live`, { headers: { authorization: BASIC } })).status === 200 || undefined, 30_000, 100);
      keys = await createKeys(svc);
    });
    after(async () => {
      for (const c of clients) c.close();
      await svc?.stop();
    });

    describe('independent clients', { concurrency: true }, () => {
      test('block=3s holds past the 2 s window and then releases', async () => {
        const { c, results } = await exhaust();
        tally.flood++;
        assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200, 429]);
        assert.deepEqual(json(results[5]!), RATE_LIMITED);
        assert.equal(results[5]!.headers['retry-after'], '3');
        const blockedAt = results[5]!.sent;
        // Hits while held do not extend the block: poll until it lifts.
        const released = await waitFor('the block to lift', async () => {
          const r = await c.get(challengePath(keys.cheap));
          if (r.status === 200) return r;
          assert.deepEqual([r.status, json(r)], [429, RATE_LIMITED]);
          const seconds = Number(r.headers['retry-after']);
          assert.ok(seconds >= 1 && seconds <= 3, `Retry-After ${seconds}`);
          tally.flood++;
          return undefined;
        }, 3000 + 8000, 250);
        assert.ok(released.received >= blockedAt + 3000 - SLACK_MS, `released ${released.received - blockedAt} ms after the block`);
      });

      test('X-Forwarded-For from an untrusted peer does not change the key', async () => {
        const forged = ['198.51.100.7', '2001:db8:ffff::1', 'not-an-ip', '203.0.113.9, 198.51.100.8', 'x'.repeat(2000), '10.0.0.1'];
        const { results } = await exhaust((i) => xff(forged[i]!));
        tally.flood++;
        assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200, 429]);
        assert.deepEqual(json(results[5]!), RATE_LIMITED);
      });

      test('authenticated monitoring is exempt while the same client is blocked; others are counted', async () => {
        const { c, results } = await exhaust();
        tally.flood++;
        assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200, 429]);
        const blockedAt = results[5]!.sent;
        const live: Res[] = [];
        for (let i = 0; i < 10; i++) live.push(await c.get('/.live', { authorization: BASIC }));
        const wrong = await c.get('/.live', { authorization: `Basic ${Buffer.from(`${MONITOR_USER}:nope`).toString('base64')}` });
        const none = await c.get('/.live');
        const metrics = await c.get('/.metrics', { authorization: BASIC });
        tally.flood += 2;
        assert.ok(none.received < blockedAt + 3000, 'the machine stalled past the block');
        assert.deepEqual(live.map((r) => r.status), Array(10).fill(200));
        assert.deepEqual([wrong.status, json(wrong), none.status, json(none)], [429, RATE_LIMITED, 429, RATE_LIMITED]);
        assert.equal(metrics.status, 200);
      });

      test('THREATS_ENABLED=0: 50 probes from one IP are not counted and mark nothing', async () => {
        const c = fresh();
        const results = await Promise.all(PROBES.map(([path]) => c.get(path)));
        // The flood rule answers most of them; every one passed the pre-route hook where probes are counted.
        results.forEach((r, i) => assert.ok(r.status === 429 || r.status === PROBES[i]![1], `${PROBES[i]![0]}: ${r.status}`));
        tally.flood += count(results, 429);
        const ok = await waitFor('the flood block to lift', async () => {
          const r = await c.get(challengePath(keys.readout));
          if (r.status === 200) return r;
          assert.deepEqual([r.status, json(r)], [429, RATE_LIMITED]);
          tally.flood++;
          return undefined;
        }, 3000 + 8000, 400);
        assert.equal((json(ok) as { parameters: { cost: number } }).parameters.cost, READOUT_COST);
        const { counter, payload } = await solvedChallenge(c, keys, {});
        assert.ok(counter >= 100 && counter <= 150);
        const v = await verify(c, keys, {}, payload);
        assert.deepEqual([v.data.get('penalty'), v.data.get('score'), v.data.get('classification')], ['0', '0', 'GOOD']);
      });
    });

    test('nothing was marked and the flood counter matches', async () => {
      const c = fresh();
      const auth = { authorization: BASIC };
      assert.equal(await metric(c, 'palisade_threat_events_total', 'kind="probe"', auth), 0);
      assert.equal(await metric(c, 'palisade_ip_marked_total', 'kind="probe"', auth), 0);
      assert.equal(await metric(c, 'palisade_malicious_events_total', 'reason="probing"', auth), 0);
      assert.equal(await metric(c, 'palisade_rate_limited_total', 'reason="flood"', auth), tally.flood);
      assert.equal(marks(svc, 'probe') + marks(svc, 'malicious'), 0);
    });
  });
});
