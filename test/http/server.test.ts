import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PalisadeError } from '../../src/errors.js';
import { monitoringAccess } from '../../src/http/monitoring.js';
import { Router } from '../../src/http/router.js';
import { createHttpServer, type HttpServer, type HttpServerOptions } from '../../src/http/server.js';
import { json } from '../../src/http/types.js';
import { authorizeBrowser } from '../../src/keys/authorize.js';
import { createKeyCache } from '../../src/keys/key-cache.js';
import type { ApiKey } from '../../src/keys/types.js';
import { createLogger } from '../../src/log.js';
import { parseCidrList } from '../../src/parse.js';
import { testKeySecrets } from '../helpers/db.js';

const silent = createLogger({ level: 'silent' });
const keySecrets = testKeySecrets();
const SITE_KEY: ApiKey = {
  id: 'key_SITESITESITESITESITESITE', accountId: 'acc_1', name: '', hostnames: ['example.com'], planId: 'p',
  challengePolicy: null, rateLimit: null, enabled: true, secret: keySecrets.derive('key_SITESITESITESITESITESITE', 'n'), requestLimit: null,
};
const keyCache = createKeyCache({ byId: async (id) => (id === SITE_KEY.id ? SITE_KEY : null), idBySecretHash: async () => null }, keySecrets);

function testRouter(): Router {
  return new Router()
    .add('POST', '/echo', (req) => json({ body: req.json(), ip: req.ip, path: req.path }))
    .add('GET', '/ip', (req) => json({ ip: req.ip, q: req.query.get('q') }))
    .add('GET', '/browser', async (req) => json({ key: (await authorizeBrowser(req, keyCache)).id }))
    .add('GET', '/boom', () => { throw new Error('secret internal detail'); })
    .add('GET', '/limited', () => { throw new PalisadeError('RATE_LIMITED', undefined, 7); })
    .add('POST', '/small', (req) => json({ size: req.body?.length }), { bodyLimit: 16 })
    .add('GET', '/.live', () => json({ ok: true }), { monitoring: true });
}

async function start(options: Partial<HttpServerOptions> = {}): Promise<{ server: HttpServer; url: string; port: number }> {
  const server = createHttpServer(testRouter(), {
    port: 0, logger: silent, clientIp: { trustedProxies: parseCidrList(''), ipHeadersSecret: '' }, ...options,
  });
  const port = await server.listen();
  return { server, url: `http://127.0.0.1:${port}`, port };
}

/** Sends raw bytes and resolves with everything the server wrote until it closed (or timeout). */
async function raw(port: number, data: string | Buffer, timeoutMs = 3000): Promise<string> {
  return (await rawEnding(port, data, timeoutMs)).text;
}

/** raw, and how the connection ended: the socket error (ECONNRESET for a reset), null for a clean close. */
function rawEnding(port: number, data: string | Buffer, timeoutMs = 3000): Promise<{ text: string; error: string | null }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | null = null;
    const socket = connect(port, '127.0.0.1', () => socket.write(data));
    const done = () => { socket.destroy(); resolve({ text: Buffer.concat(chunks).toString('latin1'), error }); };
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', done);
    socket.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? err.message; done(); });
    socket.setTimeout(timeoutMs, () => { error = 'timeout'; done(); });
  });
}

describe('HTTP layer', () => {
  let s: Awaited<ReturnType<typeof start>>;
  before(async () => { s = await start(); });
  after(() => s.server.close());

  test('JSON body round trip', async () => {
    const res = await fetch(`${s.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2]}' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(await res.json(), { body: { a: [1, 2] }, ip: '127.0.0.1', path: '/echo' });
  });

  test('a browser route of a key with hostnames: 403 naming the Origin header without one, 200 with it', async () => {
    const url = `${s.url}/browser?apiKey=${SITE_KEY.id}`;
    let res = await fetch(url);
    assert.equal(res.status, 403);
    const body = await res.json() as Record<string, unknown>;
    assert.equal(body.error, 'ORIGIN_NOT_ALLOWED');
    assert.equal(body.statusCode, 403);
    assert.match(String(body.message), /\bOrigin header\b/);
    res = await fetch(url, { headers: { origin: 'https://example.com' } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { key: SITE_KEY.id });
    res = await fetch(url, { headers: { origin: 'https://example.net' } });
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { error: 'ORIGIN_NOT_ALLOWED', statusCode: 403 });
  });

  test('malformed JSON, empty body, invalid UTF-8, wrong media type', async () => {
    const post = (body: string | Uint8Array, type = 'application/json') =>
      fetch(`${s.url}/echo`, { method: 'POST', headers: { 'content-type': type }, body });
    let res = await post('{"a":');
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { error: 'INVALID_JSON', statusCode: 400 });
    // A 4xx with an explicit detail says what was wrong.
    res = await post('');
    assert.deepEqual(await res.json(), { error: 'INVALID_JSON', statusCode: 400, message: 'The body is empty.' });
    res = await post(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]));
    assert.deepEqual(await res.json(), { error: 'INVALID_JSON', statusCode: 400, message: 'The body is not valid UTF-8.' });
    res = await post('{"a":1}', 'application/x-www-form-urlencoded');
    assert.equal(res.status, 415);
    assert.deepEqual(await res.json(), { error: 'UNSUPPORTED_MEDIA_TYPE', statusCode: 415 });
    for (const type of ['Application/JSON; charset=utf-8', 'application/vnd.api+json', 'text/plain;charset=UTF-8']) {
      res = await post('{"a":1}', type);
      assert.equal(res.status, 200, type);
    }
    res = await post('{"a":1}', 'application/jsonx');
    assert.equal(res.status, 415);
    res = await post('{"__proto__":{"polluted":1}}');
    assert.equal(res.status, 200);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('a body past the limit, declared or chunked, is read to its end, answered 413 and closed cleanly', async () => {
    // (Clients in another process sending megabytes: test/reliability/hostile-http.test.ts.)
    const declared = Buffer.concat([
      Buffer.from(`POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: ${3 * 1024 * 1024}\r\n\r\n`), Buffer.alloc(3 * 1024 * 1024, 0x20),
    ]);
    const chunk = Buffer.alloc(0x10000, 0x20);
    const chunked = Buffer.concat([
      Buffer.from('POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n'),
      ...Array.from({ length: 48 }, () => Buffer.concat([Buffer.from('10000\r\n'), chunk, Buffer.from('\r\n')])),
      Buffer.from('0\r\n\r\n'),
    ]);
    for (const request of [declared, chunked]) {
      for (let i = 0; i < 3; i++) {
        const { text, error } = await rawEnding(s.port, request);
        assert.match(text, /^HTTP\/1\.1 413 [^]*"BODY_TOO_LARGE"/);
        assert.equal(error, null, 'closed without a reset: nothing was left unread');
      }
    }
  });

  test('a refused body is not waited for long: a declared length past 16 MiB at once, a stalled one after 2 s', async () => {
    let started = performance.now();
    let answer = await raw(s.port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"a":', 8000);
    assert.match(answer, /^HTTP\/1\.1 413 [^]*"BODY_TOO_LARGE"/);
    assert.ok(performance.now() - started < 1000, `answered after ${performance.now() - started} ms`);
    started = performance.now();
    answer = await raw(s.port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"a":', 8000);
    const ms = performance.now() - started;
    assert.match(answer, /^HTTP\/1\.1 413 [^]*"BODY_TOO_LARGE"/);
    assert.ok(ms > 1800 && ms < 5000, `answered after ${ms} ms (the request timeout is 10 s)`);
  });

  test('reading a refused chunked body stops at 16 MiB, or 2 s after the refusal when the rest stalls', async () => {
    // A client that keeps sending 1 MiB every 10 ms: answered once 16 MiB are in, long before 2 s.
    const streamed = (stallAfterBytes: number) => new Promise<{ text: string; ms: number }>((resolve) => {
      const chunk = Buffer.concat([Buffer.from('100000\r\n'), Buffer.alloc(0x100000, 0x20), Buffer.from('\r\n')]);
      const chunks: Buffer[] = [];
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      const started = performance.now();
      const socket = connect(s.port, '127.0.0.1', () => {
        socket.write('POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
        timer = setInterval(() => {
          if (sent >= stallAfterBytes || performance.now() - started > 8000) return;
          sent += 0x100000;
          socket.write(chunk);
        }, 10);
      });
      const done = () => {
        clearInterval(timer);
        socket.destroy();
        resolve({ text: Buffer.concat(chunks).toString('latin1'), ms: performance.now() - started });
      };
      socket.on('data', (c) => {
        chunks.push(c);
        if (Buffer.concat(chunks).includes('BODY_TOO_LARGE')) done();
      });
      socket.on('close', done);
      socket.on('error', done);
    });
    const capped = await streamed(Number.POSITIVE_INFINITY);
    assert.match(capped.text, /^HTTP\/1\.1 413 [^]*"BODY_TOO_LARGE"/);
    assert.ok(capped.ms < 1500, `answered after ${capped.ms} ms`);
    // 1 MiB past the 16-byte limit, then nothing: answered by the 2 s timer, not the 10 s request timeout.
    const stalled = await streamed(0x100000);
    assert.match(stalled.text, /^HTTP\/1\.1 413 [^]*"BODY_TOO_LARGE"/);
    assert.ok(stalled.ms > 1800 && stalled.ms < 5000, `answered after ${stalled.ms} ms`);
  });

  test('body limits: a declared length or a streamed body past the limit is refused with 413', async () => {
    let res = await fetch(`${s.url}/small`, { method: 'POST', body: 'x'.repeat(17) });
    assert.equal(res.status, 413);
    assert.deepEqual(await res.json(), { error: 'BODY_TOO_LARGE', statusCode: 413 });
    res = await fetch(`${s.url}/small`, { method: 'POST', body: 'x'.repeat(16) });
    assert.deepEqual(await res.json(), { size: 16 });
    // Chunked upload without Content-Length: refused once it passes the limit.
    const answer = await raw(s.port, 'POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /"BODY_TOO_LARGE"/);
    // The default limit applies to routes without their own (64 KB).
    res = await fetch(`${s.url}/echo`, { method: 'POST', body: JSON.stringify({ x: 'y'.repeat(70_000) }) });
    assert.equal(res.status, 413);
  });

  test('unknown routes 404, wrong methods 405 with Allow, HEAD answers without a body', async () => {
    let res = await fetch(`${s.url}/nope`);
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'NOT_FOUND', statusCode: 404 });
    res = await fetch(`${s.url}/echo`);
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'POST');
    assert.deepEqual(await res.json(), { error: 'METHOD_NOT_ALLOWED', statusCode: 405 });
    res = await fetch(`${s.url}/ip`, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    assert.ok(Number(res.headers.get('content-length')) > 0);
  });

  test('a thrown error is a 500 INTERNAL without its message; Retry-After on RATE_LIMITED', async () => {
    let res = await fetch(`${s.url}/boom`);
    assert.equal(res.status, 500);
    const text = await res.text();
    assert.equal(text, '{"error":"INTERNAL","statusCode":500}');
    res = await fetch(`${s.url}/limited`);
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '7');
  });

  test('oversized URLs and headers are refused', async () => {
    let res = await fetch(`${s.url}/ip?q=${'a'.repeat(9000)}`);
    assert.equal(res.status, 414);
    const headers: Record<string, string> = {};
    for (let i = 0; i < 20; i++) headers[`x-h${i}`] = 'v'.repeat(1000);
    res = await fetch(`${s.url}/ip`, { headers });
    assert.equal(res.status, 431);
  });

  test('CORS: any origin by default, preflight answered', async () => {
    let res = await fetch(`${s.url}/ip`, { headers: { origin: 'https://site.example' } });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    res = await fetch(`${s.url}/echo`, {
      method: 'OPTIONS',
      headers: { origin: 'https://site.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('access-control-allow-headers'), 'content-type');
    assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
  });

  test('garbage methods, paths, headers and bodies never take the server down', async () => {
    const junk = [
      'BREW /coffee HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /%00%ff%fe HTTP/1.1\r\nHost: x\r\n\r\n',
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello',
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\n folded: header\r\n\r\n',
      'GET / HTTP/1.1\nHost: x\n\n',
      '\x00\x01\x02\x03\xff\xfe\r\n\r\n',
      'GET /ip HTTP/1.1\r\nHost: x\r\nX: \x01\x02\r\n\r\n',
      `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n${'['.repeat(30)}`,
    ];
    for (const j of junk) {
      const answer = await raw(s.port, j, 1500);
      // uWS's own parser refuses a request line it cannot read (bare LF, binary) as "HTTP/1.0" with
      // 505 and closes; anything our code answers is below 500.
      assert.match(answer, /^(HTTP\/1\.1 [1-4]\d\d |HTTP\/1\.1 505 HTTP Version Not Supported\r\nConnection: close|$)/,
        `answer to ${JSON.stringify(j.slice(0, 40))}`);
    }
    const res = await fetch(`${s.url}/ip`);
    assert.equal(res.status, 200);
  });
});

describe('requests with a body: the pre-route hook, sync and async handlers, timeouts', () => {
  const router = () => testRouter()
    .add('POST', '/later', async (req) => { await new Promise((r) => setTimeout(r, 5)); return json({ later: req.json() }); })
    .add('POST', '/throws', () => { throw new PalisadeError('STORE_FULL'); });
  const limited = { status: 429, body: '{"error":"RATE_LIMITED","statusCode":429}' };
  const servers: HttpServer[] = [];
  after(() => { for (const server of servers) server.close(); });
  async function serve(beforeRoute: HttpServerOptions['beforeRoute'], requestTimeoutMs?: number) {
    const server = createHttpServer(router(), {
      port: 0, logger: silent, clientIp: { trustedProxies: parseCidrList(''), ipHeadersSecret: '' }, beforeRoute, requestTimeoutMs,
    });
    servers.push(server);
    const port = await server.listen();
    return { port, url: `http://127.0.0.1:${port}` };
  }
  const post = (url: string, path: string, body: string) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  for (const [name, pass] of [
    ['a hook that answers at once', () => undefined],
    ['a hook that answers later', () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 2))],
  ] as const) {
    test(`${name}: sync and async handlers get the whole body; handler errors keep their code`, async () => {
      const { url } = await serve(pass);
      let res = await post(url, '/echo', '{"n":1}');
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { body: { n: 1 }, ip: '127.0.0.1', path: '/echo' });
      res = await post(url, '/later', JSON.stringify({ big: 'z'.repeat(40_000) }));
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { later: { big: string } }).later.big.length, 40_000);
      res = await post(url, '/throws', '{}');
      assert.equal(res.status, 503);
      assert.deepEqual(await res.json(), { error: 'STORE_FULL', statusCode: 503 });
      res = await post(url, '/echo', '{"n":');
      assert.equal(res.status, 400);
    });
  }

  test('a hook that refuses (at once, later, or by throwing) answers without reading the body and closes', async () => {
    for (const hook of [
      () => limited,
      () => Promise.resolve(limited),
      () => { throw new PalisadeError('RATE_LIMITED', undefined, 3); },
    ]) {
      const { port } = await serve(hook);
      const answer = await raw(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"partial":');
      assert.match(answer, /^HTTP\/1\.1 429 /);
      assert.match(answer, /"RATE_LIMITED"/);
      assert.match(answer, /\r\nConnection: close\r\n/i);
    }
  });

  test('a body that does not arrive within the request timeout is answered 408 and the connection closed', async () => {
    const { port } = await serve(() => undefined, 300);
    const started = performance.now();
    const answer = await raw(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"slow":', 5000);
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(answer, /"REQUEST_TIMEOUT"/);
    assert.ok(performance.now() - started < 4000, 'closed by the request timeout, not by the client');
  });
});

// Usage is counted as a reply is written (src/usage/usage-ledger.ts): a reply written is counted
// once, and one never written, because its client left first, is not counted at all.
describe('onWrite', () => {
  test('runs once per reply written, with what the route marked; not for a client that left before its reply', async () => {
    const written: string[] = [];
    let release: () => void = () => {};
    const router = new Router()
      .add('GET', '/mark', (req) => {
        req.usage = { key: { id: 'key_a', accountId: 'acc' }, classification: 'GOOD', origin: null };
        return json({ ok: true });
      })
      .add('GET', '/slow', async (req) => {
        req.usage = { key: { id: 'key_slow', accountId: 'acc' }, classification: null, origin: null };
        await new Promise<void>((resolve) => { release = resolve; });
        return json({ ok: true });
      });
    const server = createHttpServer(router, {
      port: 0, logger: silent, clientIp: { trustedProxies: parseCidrList(''), ipHeadersSecret: '' },
      onWrite(req) {
        written.push(`${req.path}:${req.usage?.key.id ?? '-'}`);
      },
    });
    const port = await server.listen();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/mark`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { ok: true });
      assert.equal((await fetch(`http://127.0.0.1:${port}/nothing`)).status, 404);
      // A client that leaves while its reply is being made: no reply written, nothing counted.
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'));
      await new Promise((r) => setTimeout(r, 100));
      socket.destroy();
      await new Promise((r) => setTimeout(r, 100));
      release();
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(written, ['/mark:key_a', '/nothing:-']);
    } finally {
      server.close();
    }
  });
});

describe('client IP', () => {
  test('X-Forwarded-For from an untrusted peer is ignored', async () => {
    const s = await start();
    const res = await fetch(`${s.url}/ip`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.deepEqual(await res.json(), { ip: '127.0.0.1', q: null });
    s.server.close();
  });

  test('X-Forwarded-For from a trusted proxy: right-most untrusted hop', async () => {
    const s = await start({ clientIp: { trustedProxies: parseCidrList('127.0.0.1/32,10.0.0.0/8'), ipHeadersSecret: '' } });
    const ip = async (xff: string) => ((await (await fetch(`${s.url}/ip`, { headers: { 'x-forwarded-for': xff } })).json()) as { ip: string }).ip;
    assert.equal(await ip('203.0.113.9'), '203.0.113.9');
    assert.equal(await ip('198.51.100.1, 203.0.113.9, 10.1.1.1'), '203.0.113.9');
    assert.equal(await ip('2001:DB8::1'), '2001:db8::1');
    assert.equal(await ip('garbage, 203.0.113.7'), '203.0.113.7');
    assert.equal(await ip('garbage'), 'unknown');
    assert.equal(await ip('203.0.113.9:4431'), '203.0.113.9');
    s.server.close();
  });

  test('IP headers only with IP_HEADERS_SECRET', async () => {
    const s = await start({ clientIp: { trustedProxies: parseCidrList(''), ipHeadersSecret: 'proxy-secret-123' } });
    const ip = async (h: Record<string, string>) => ((await (await fetch(`${s.url}/ip`, { headers: h })).json()) as { ip: string }).ip;
    assert.equal(await ip({ 'x-real-ip': '203.0.113.5' }), '127.0.0.1');
    assert.equal(await ip({ 'x-real-ip': '203.0.113.5', 'x-ip-headers-secret': 'wrong' }), '127.0.0.1');
    assert.equal(await ip({ 'x-real-ip': '203.0.113.5', 'x-ip-headers-secret': 'proxy-secret-123' }), '203.0.113.5');
    assert.equal(await ip({ 'cf-connecting-ip': '203.0.113.6', 'x-ip-headers-secret': 'proxy-secret-123' }), '203.0.113.6');
    s.server.close();
  });
});

describe('hosts, base path, CORS lists', () => {
  test('ALLOWED_HOSTS with wildcards', async () => {
    const s = await start({ allowedHosts: ['palisade.example', '*.captcha.example'] });
    const status = async (host: string) => {
      const answer = await raw(s.port, `GET /ip HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      return Number(answer.slice(9, 12));
    };
    assert.equal(await status('palisade.example'), 200);
    assert.equal(await status('palisade.example:8080'), 200);
    assert.equal(await status('eu.captcha.example'), 200);
    assert.equal(await status('captcha.example'), 403);
    assert.equal(await status('evil.example'), 403);
    s.server.close();
  });

  test('APP_BASE_PATH prefixes every route', async () => {
    const s = await start({ basePath: '/captcha' });
    assert.equal((await fetch(`${s.url}/captcha/ip`)).status, 200);
    assert.equal((await fetch(`${s.url}/ip`)).status, 404);
    assert.equal((await fetch(`${s.url}/captchaip`)).status, 404);
    s.server.close();
  });

  test('CORS_ORIGINS: listed origins echoed, others get no CORS headers', async () => {
    const s = await start({ corsOrigins: ['https://shop.example', 'https://*.forms.example'] });
    const acao = async (origin: string) => (await fetch(`${s.url}/ip`, { headers: { origin } })).headers.get('access-control-allow-origin');
    assert.equal(await acao('https://shop.example'), 'https://shop.example');
    assert.equal(await acao('https://a.forms.example'), 'https://a.forms.example');
    assert.equal(await acao('http://a.forms.example'), null);
    assert.equal(await acao('https://evil.example'), null);
    const pre = await fetch(`${s.url}/echo`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
    s.server.close();
  });
});

describe('monitoring access', () => {
  test('whitelist that excludes loopback: 403; spoofed X-Forwarded-For does not help', async () => {
    const s = await start({ monitoringAccess: monitoringAccess({ whitelist: parseCidrList('10.0.0.0/8'), credentials: null }) });
    let res = await fetch(`${s.url}/.live`, { headers: { 'x-forwarded-for': '10.0.0.1' } });
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { error: 'MONITORING_FORBIDDEN', statusCode: 403 });
    s.server.close();
    const t = await start({ monitoringAccess: monitoringAccess({ whitelist: parseCidrList('127.0.0.1/32'), credentials: null }) });
    res = await fetch(`${t.url}/.live`);
    assert.equal(res.status, 200);
    t.server.close();
  });

  test('Basic credentials: right passes from anywhere, wrong or missing 401 with WWW-Authenticate', async () => {
    const s = await start({ monitoringAccess: monitoringAccess({ whitelist: parseCidrList('10.0.0.0/8'), credentials: { user: 'ops', password: 's3cret' } }) });
    const basic = (v: string) => ({ authorization: `Basic ${Buffer.from(v).toString('base64')}` });
    let res = await fetch(`${s.url}/.live`, { headers: basic('ops:s3cret') });
    assert.equal(res.status, 200);
    res = await fetch(`${s.url}/.live`, { headers: basic('ops:s3cres') });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    assert.deepEqual(await res.json(), { error: 'MONITORING_UNAUTHORIZED', statusCode: 401 });
    res = await fetch(`${s.url}/.live`);
    assert.equal(res.status, 401);
    res = await fetch(`${s.url}/.live`, { headers: { authorization: 'Bearer ops:s3cret' } });
    assert.equal(res.status, 401);
    s.server.close();
  });
});

describe('HTTP layer: memory', () => {
  test('a request read with a body is not kept alive by its idle keep-alive connection', async () => {
    // Nothing the connection keeps (uWS's handlers, the body timer) may hold the last request (its
    // body, headers, route) while the connection waits for the next one: every idle keep-alive
    // connection would keep one alive (commit 0dc695d measured what that cost).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let body: WeakRef<Buffer> | undefined;
    let request: WeakRef<object> | undefined;
    const router = new Router().add('POST', '/keep', (req) => {
      body = new WeakRef(req.body!);
      request = new WeakRef(req);
      return json({ size: req.body!.length });
    });
    const server = createHttpServer(router, { port: 0, logger: silent, clientIp: { trustedProxies: parseCidrList(''), ipHeadersSecret: '' } });
    const port = await server.listen();
    const socket = connect(port, '127.0.0.1');
    try {
      const answer = new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString('latin1'))));
      const payload = JSON.stringify({ pad: 'x'.repeat(4000) });
      socket.write(`POST /keep HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n${payload}`);
      assert.match(await answer, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"size":4010\}$/);
      // The connection stays open and idle; the request must be garbage all the same.
      for (let i = 0; i < 10 && (body!.deref() !== undefined || request!.deref() !== undefined); i++) {
        await new Promise((r) => setImmediate(r));
        gc();
      }
      assert.equal(body!.deref(), undefined, 'the body is still reachable');
      assert.equal(request!.deref(), undefined, 'the request is still reachable');
      assert.equal(socket.destroyed, false);
    } finally {
      socket.destroy();
      await server.close();
    }
  });
});
