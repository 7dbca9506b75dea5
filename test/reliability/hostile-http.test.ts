// Battery item 7: hostile HTTP. Every request below goes out at once on its own connection to one
// worker while a probe asks GET /.live every 10 ms on a keep-alive connection. Some are answered by
// uWS's own parser before Palisade sees them (its HTML 400 and 505 pages); the rest by the HTTP
// layer and the routes. Bounds: each gets the answer listed (a 4xx, with the connection closed where
// the framing is ambiguous); the worker never dies; its event loop is never blocked more than 50 ms
// (palisade_nodejs_eventloop_lag_max_seconds over the run, the service's own measure; the probe's
// slowest answer is reported beside it).
//
// Regressions: with threat detection off, a Transfer-Encoding other than exactly "chunked" (which uWS
// reads as chunked whatever it names) was served on an open connection; and nested brackets blocked
// the event loop while parsed (the second test).
//
// What does not hold: uWS neither answers nor closes a request whose header section it cannot
// parse (obs-fold, a bare LF inside the headers, more than 100 headers, a control character in a
// field value) or an HTTP/1.1 request without Host until its 10 s idle timeout, even on a keep-alive connection that served requests
// before; those are asserted as what they are: closed, unanswered, by the timeout.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { MAX_JSON_DEPTH, parseJson } from '../../src/http/request.js';
import { childPids, createTestKey, type Service, type TestKey } from '../helpers/service.js';
import { HttpConnection, metricValue, report, sleep, startBatteryService, timingBound } from './harness.js';

const LAG_BOUND_MS = 50;
/** uWS closes a connection that has not completed a request within about 10 s. */
const IDLE_TIMEOUT_MS = 10_000;
/** uWS checks its timeouts on a 4-second tick: an idle connection closes 6 to 10 s after its last byte. */
const IDLE_TICK_MS = 4_000;

let svc: Service;
let key: TestKey;

before(async () => {
  svc = await startBatteryService({ WORKERS: '1' });
  key = await createTestKey(svc);
});

after(async () => {
  await svc?.stop();
});

interface Case {
  readonly name: string;
  readonly bytes: () => Buffer;
  /** Expected status; null = no answer at all. */
  readonly status: number | null;
  /** Expected error code of the JSON body (Palisade's answers), or 'html' for uWS's own pages. */
  readonly error?: string;
  /** Verified:false reason of a 200. */
  readonly reason?: string;
  /** The service closes the connection after answering (or, unanswered, at its idle timeout). */
  readonly closed: boolean;
}

const HEAD = (path: string, extra = '') => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${extra}`;
const post = (path: string, body: string | Buffer, extra = '') =>
  Buffer.concat([Buffer.from(`${HEAD(path, extra)}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`), Buffer.from(body)]);
const get = (target: string, extra = '') => Buffer.from(`GET ${target} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`);

function cases(keyId: string): Case[] {
  const verify = `/v1/verify?apiKey=${keyId}`;
  const chunk = '{"payload":"x"}';
  const chunked = (te: string) => Buffer.from(`${HEAD(verify, `Transfer-Encoding: ${te}\r\n`)}\r\nf\r\n${chunk}\r\n0\r\n\r\n`);
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const keys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')}}`;
  return [
    // Framing a proxy could read otherwise: refused, connection closed.
    { name: 'duplicate Content-Length', bytes: () => Buffer.from(`${HEAD(verify)}Content-Length: 15\r\nContent-Length: 15\r\n\r\n${chunk}`), status: 400, error: 'BAD_REQUEST', closed: true },
    { name: 'conflicting Content-Length', bytes: () => Buffer.from(`${HEAD(verify)}Content-Length: 15\r\nContent-Length: 16\r\n\r\n${chunk}`), status: 400, error: 'BAD_REQUEST', closed: true },
    { name: 'non-numeric Content-Length', bytes: () => Buffer.from(`${HEAD(verify)}Content-Length: 0x0f\r\n\r\n${chunk}`), status: 400, error: 'html', closed: true },
    { name: 'Content-Length with Transfer-Encoding', bytes: () => Buffer.from(`${HEAD(verify, 'Content-Length: 15\r\nTransfer-Encoding: chunked\r\n')}\r\nf\r\n${chunk}\r\n0\r\n\r\n`), status: 400, error: 'html', closed: true },
    { name: 'Transfer-Encoding: xchunked', bytes: () => chunked('xchunked'), status: 400, error: 'BAD_REQUEST', closed: true },
    { name: 'Transfer-Encoding: identity', bytes: () => chunked('identity'), status: 400, error: 'BAD_REQUEST', closed: true },
    { name: 'Transfer-Encoding: gzip, chunked', bytes: () => chunked('gzip, chunked'), status: 400, error: 'BAD_REQUEST', closed: true },
    { name: 'Transfer-Encoding twice', bytes: () => Buffer.from(`${HEAD(verify, 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n')}\r\nf\r\n${chunk}\r\n0\r\n\r\n`), status: 400, error: 'BAD_REQUEST', closed: true },
    { name: 'Transfer-Encoding on a GET', bytes: () => get('/.live', 'Transfer-Encoding: identity\r\n'), status: 400, error: 'BAD_REQUEST', closed: true },
    { name: 'chunked (the one accepted coding)', bytes: () => chunked('Chunked'), status: 200, reason: 'INVALID_PAYLOAD', closed: false },
    // Malformed messages uWS refuses itself.
    { name: 'bare LF line ends', bytes: () => Buffer.from('GET /.live HTTP/1.1\nHost: x\n\n'), status: 505, error: 'html', closed: true },
    { name: 'HTTP/1.0 request line', bytes: () => Buffer.from('GET /.live HTTP/1.0\r\n\r\n'), status: 505, error: 'html', closed: true },
    { name: 'binary garbage', bytes: () => Buffer.from([0, 1, 2, 0xff, 13, 10, 13, 10]), status: 505, error: 'html', closed: true },
    // Request forms uWS answers with its own 505 page too (docs/http.md): it serves origin-form
    // HTTP/1.1 only, whatever the request line otherwise says.
    { name: 'HTTP/1.0 with Host', bytes: () => Buffer.from('GET /.live HTTP/1.0\r\nHost: x\r\n\r\n'), status: 505, error: 'html', closed: true },
    { name: 'absolute-form target', bytes: () => get('http://x/.live'), status: 505, error: 'html', closed: true },
    { name: 'OPTIONS *', bytes: () => Buffer.from('OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'), status: 505, error: 'html', closed: true },
    // No Host: uWS drops the request before any handler and exposes no hook, so it cannot be
    // answered 400; the connection is held until the idle timeout (docs/http.md).
    { name: 'no Host header', bytes: () => Buffer.from('GET /.live HTTP/1.1\r\n\r\n'), status: null, closed: true },
    // Header sections uWS cannot parse: held until its idle timeout, never answered.
    { name: 'obs-fold', bytes: () => get('/.live', 'X-Folded: a\r\n b\r\n'), status: null, closed: true },
    { name: 'bare LF inside the headers', bytes: () => Buffer.from('GET /.live HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n'), status: null, closed: true },
    { name: '101 headers', bytes: () => get('/.live', Array.from({ length: 101 }, (_, i) => `X-H${i}: v\r\n`).join('')), status: null, closed: true },
    { name: 'NUL in a header value', bytes: () => get('/.live', 'X-A: a\u0000b\r\n'), status: null, closed: true },
    { name: 'a control character in the Authorization value', bytes: () => get('/usage', 'Authorization: Bearer sec_\u0007x\r\n'), status: null, closed: true },
    // Sizes.
    { name: 'a 20 KB header', bytes: () => get('/.live', `X-Big: ${'a'.repeat(20_000)}\r\n`), status: 431, error: 'HEADERS_TOO_LARGE', closed: true },
    { name: 'a 10 KB URL', bytes: () => get(`/.live?${'a'.repeat(10_000)}`), status: 414, error: 'URI_TOO_LONG', closed: true },
    { name: 'a 100 KB URL', bytes: () => get(`/v1/challenge?apiKey=${keyId}&${'a'.repeat(100_000)}`), status: 414, error: 'URI_TOO_LONG', closed: true },
    { name: 'a 10 MB body (declared)', bytes: () => post(verify, Buffer.alloc(10 * 1024 * 1024, 0x20)), status: 413, error: 'BODY_TOO_LARGE', closed: true },
    { name: 'a 10 MB body (chunked)', bytes: () => Buffer.concat([Buffer.from(`${HEAD(verify, 'Transfer-Encoding: chunked\r\n')}\r\n`), ...Array.from({ length: 10 }, () => Buffer.concat([Buffer.from('100000\r\n'), Buffer.alloc(0x100000, 0x20), Buffer.from('\r\n')])), Buffer.from('0\r\n\r\n')]), status: 413, error: 'BODY_TOO_LARGE', closed: true },
    // Bodies.
    { name: 'JSON nested 100,000 deep', bytes: () => post(verify, nested(100_000)), status: 413, error: 'BODY_TOO_LARGE', closed: true },
    { name: 'JSON nested 32,000 deep (within the size limit)', bytes: () => post(verify, nested(32_000)), status: 400, error: 'INVALID_JSON', closed: false },
    { name: 'JSON nested 64 deep (the most accepted)', bytes: () => post(verify, nested(64)), status: 400, error: 'INVALID_PAYLOAD', closed: false },
    { name: 'JSON with 1,000,000 keys', bytes: () => post(verify, keys(1_000_000)), status: 413, error: 'BODY_TOO_LARGE', closed: true },
    { name: 'JSON with 5,000 keys (within the size limit)', bytes: () => post(verify, keys(5_000)), status: 400, error: 'INVALID_PAYLOAD', closed: false },
    { name: '5,000 form fields', bytes: () => post(verify, `{"payload":"x","fields":${keys(5_000).replace(/:0/g, ':"v"')}}`), status: 400, error: 'INVALID_PARAMETER', closed: false },
    { name: '__proto__ beside the payload', bytes: () => post(verify, '{"payload":"x","__proto__":{"verified":true,"payload":"y"}}'), status: 200, reason: 'INVALID_PAYLOAD', closed: false },
    { name: '__proto__ holding the payload', bytes: () => post(verify, '{"__proto__":{"payload":"x"}}'), status: 400, error: 'INVALID_PAYLOAD', closed: false },
    { name: '__proto__ as a form field', bytes: () => post(verify, '{"payload":"x","fields":{"__proto__":"v","constructor":"w"}}'), status: 200, reason: 'INVALID_PAYLOAD', closed: false },
    { name: 'params.__proto__ on a challenge', bytes: () => get(`/v1/challenge?apiKey=${keyId}&params.__proto__=x`), status: 400, error: 'INVALID_PARAMETER', closed: false },
    { name: 'invalid UTF-8 in the body', bytes: () => post(verify, Buffer.from([0x7b, 0x22, 0x70, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])), status: 400, error: 'INVALID_JSON', closed: false },
    { name: 'invalid UTF-8 in the URL', bytes: () => Buffer.concat([Buffer.from(`GET /v1/challenge?apiKey=${keyId}&params.a=`), Buffer.from([0xff, 0xfe]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]), status: 400, error: 'INVALID_PARAMETER', closed: false },
    { name: 'invalid UTF-8 in the API key', bytes: () => Buffer.concat([Buffer.from('GET /v1/challenge?apiKey=key_'), Buffer.from([0xc3, 0x28]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]), status: 401, error: 'API_KEY_INVALID', closed: false },
  ];
}

interface Outcome {
  status: number | null;
  body: string;
  /** ms after the request until the service closed the connection; null while it stayed open. */
  closedAfterMs: number | null;
}

/** Writes `bytes` on a new connection; waits for an answer, then `linger` ms more to see whether the service closes. */
function send(port: number, bytes: Buffer, lingerMs: number, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let started = 0;
    let settled = false;
    const finish = (closedAfterMs: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = data.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      resolve({ status: status ? Number(status[1]) : null, body: text.slice(text.indexOf('\r\n\r\n') + 4), closedAfterMs });
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    socket.on('connect', () => {
      started = performance.now();
      socket.write(bytes, () => undefined);
    });
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      // A complete answer: wait a little to see whether the service closes the connection.
      if (/\r\n\r\n/.test(data.toString('latin1'))) {
        clearTimeout(timer);
        setTimeout(() => finish(null), lingerMs);
      }
    });
    socket.on('close', () => finish(performance.now() - started));
  });
}

test('hostile HTTP: each answered as listed (4xx, closed where ambiguous), no crash, event loop never blocked > 50 ms', async () => {
  const [worker] = await childPids(svc.proc.pid!);
  // Built before the probe starts: making 10 MB bodies would stall this process, not the service.
  const list = cases(key.id);
  const bytes = list.map((c) => c.bytes());
  // A new connection each time: uWS closes keep-alive connections idle for 10 s.
  const lag = async () => {
    const c = new HttpConnection(svc.port);
    try {
      return metricValue((await c.request('GET', '/.metrics')).body, 'palisade_nodejs_eventloop_lag_max_seconds');
    } finally {
      c.close();
    }
  };
  await lag(); // resets the worker's event-loop delay histogram

  const probe = new HttpConnection(svc.port);
  const probeMs: number[] = [];
  let probing = true;
  const probing$ = (async () => {
    while (probing) {
      probeMs.push((await probe.request('GET', '/.live')).ms);
      await sleep(10);
    }
  })();

  // The bodies refused here (up to ~12 MB) are read to their end before the 413 (src/http/body.ts,
  // readBody), so no answer is lost to a reset. Before, the answer of a body refused while
  // megabytes were still on the way was lost now and then, and such cases had to be sent again.
  const outcomes = await Promise.all(list.map((c, i) => send(svc.port, bytes[i]!, 300, IDLE_TIMEOUT_MS + 5000)));
  probing = false;
  await probing$;
  const maxLagMs = ((await lag()) ?? NaN) * 1000;
  probe.close();

  const mismatches: string[] = [];
  list.forEach((c, i) => {
    const o = outcomes[i]!;
    const problems: string[] = [];
    if (o.status !== c.status) problems.push(`status ${o.status}`);
    if (c.error === 'html' && !o.body.includes('uWebSockets')) problems.push(`body ${o.body.slice(0, 60)}`);
    if (c.error !== undefined && c.error !== 'html' && !o.body.includes(`"error":"${c.error}"`)) problems.push(`body ${o.body.slice(0, 60)}`);
    if (c.reason !== undefined && !o.body.includes(`"reason":"${c.reason}"`)) problems.push(`body ${o.body.slice(0, 60)}`);
    if ((o.closedAfterMs !== null) !== c.closed) problems.push(o.closedAfterMs === null ? 'left open' : `closed after ${o.closedAfterMs.toFixed(0)} ms`);
    if (c.status === null && o.closedAfterMs !== null && o.closedAfterMs < IDLE_TIMEOUT_MS - IDLE_TICK_MS - 500) problems.push(`closed after ${o.closedAfterMs.toFixed(0)} ms`);
    if (problems.length > 0) mismatches.push(`${c.name}: ${problems.join(', ')}`);
  });
  const workersAfter = await childPids(svc.proc.pid!);
  const died = svc.output.filter((l) => l.includes('worker died'));
  const after = new HttpConnection(svc.port);
  const live = (await after.request('GET', '/.live')).status;
  after.close();

  const answered = outcomes.filter((o) => o.status !== null).length;
  report('hostile HTTP', `${list.length} requests: ${answered} answered (${outcomes.filter((o) => o.status !== null && o.status >= 400).length} with a 4xx/505), ` +
    `${list.length - answered} unparseable header sections closed unanswered by uWS's idle timeout; worker restarts ${died.length}; ` +
    `event loop max lag ${maxLagMs.toFixed(1)} ms (bound ${LAG_BOUND_MS}), /.live probe slowest ${Math.max(...probeMs).toFixed(1)} ms ` +
    `over ${probeMs.length} probes`);

  assert.deepEqual(mismatches, []);
  assert.deepEqual(workersAfter, [worker], 'the worker is the same process');
  assert.deepEqual(died, []);
  assert.equal(live, 200);
  timingBound(maxLagMs < LAG_BOUND_MS, `event loop blocked ${maxLagMs.toFixed(1)} ms`);
});

test('a refused body of up to 16 MiB is read before the 413, so a client still sending sees the answer', async () => {
  // Closing with megabytes unread resets the connection, and a client that has not read the 413 yet
  // loses it: before the body was read first, 18 of these 20 fetches got EPIPE.
  const body = Buffer.alloc(4 * 1024 * 1024, 0x20);
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < 20; i++) {
    let outcome: string;
    try {
      const res = await fetch(`${svc.url}/v1/verify?apiKey=${key.id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      outcome = `${res.status} ${await res.text()}`;
    } catch (err) {
      outcome = String((err as { cause?: { code?: string } }).cause?.code ?? err);
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  assert.deepEqual(outcomes, { '413 {"error":"BODY_TOO_LARGE","statusCode":413}': 20 });
});

// Regression: JSON.parse took 5-30 ms of the event loop for a 64 KB body of nested brackets, so a
// few dozen such requests a second stalled a worker; they are refused by a scan before parsing.
test('a body nesting deeper than 64 levels is refused before it is parsed; 64 levels and brackets inside strings pass', () => {
  const nested = (depth: number) => Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`);
  assert.throws(() => parseJson(nested(65)), { code: 'INVALID_JSON', message: `The body nests deeper than ${MAX_JSON_DEPTH} levels.` });
  assert.throws(() => parseJson(nested(32_000)), { code: 'INVALID_JSON' });
  assert.throws(() => parseJson(Buffer.from(`{"a":${'{"a":'.repeat(70)}1${'}'.repeat(71)}`)), { code: 'INVALID_JSON' });
  assert.equal(JSON.stringify(parseJson(nested(64))).length, 128);
  const inStrings = { text: '['.repeat(500), escaped: `\\"${'{'.repeat(500)}`, after: '\\' };
  assert.deepEqual(parseJson(Buffer.from(JSON.stringify(inStrings))), inStrings);
});
