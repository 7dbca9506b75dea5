// The uWebSockets.js adapter: the only place that touches uWS objects. Per request: copy headers,
// resolve the client IP, check Host, find the route, run the pre-route hook (flood limit), read the
// body within its limit, call the handler, write the reply corked, then the access log and metrics.
// uWS rules: onAborted first, nothing read from `req` after the first await, writes after an await
// inside cork(), every onData chunk copied.
import uWS from 'uWebSockets.js';
import { performance } from 'node:perf_hooks';
import { ERRORS, type ErrorCode, PalisadeError, errorBody, isPalisadeError } from '../errors.js';
import type { Logger } from '../log.js';
import { formatAddress, resolveClientIp, type ClientIpOptions } from './client-ip.js';
import { hostMatcher, hostOfHeader, originMatcher } from './hosts.js';
import { Request } from './request.js';
import type { ResponseStream, Route, Router } from './router.js';
import type { Reply } from './types.js';

export interface HttpServerOptions {
  /** Default 8080; 0 picks a free port (single process only). */
  port?: number;
  /** Default '::' is not used: uWS listens on all addresses when no host is given. */
  host?: string;
  /** HTTP2_CERT / HTTP2_KEY file paths: serve TLS with SSLApp. */
  tls?: { certFile: string; keyFile: string } | null;
  /** APP_BASE_PATH ('' = none). */
  basePath?: string;
  /** ALLOWED_HOSTS ([] = any). */
  allowedHosts?: readonly string[];
  /** CORS_ORIGINS ([] = any origin). */
  corsOrigins?: readonly string[];
  clientIp: ClientIpOptions;
  /** Default REQUEST_BODY_LIMIT 64 KB. */
  bodyLimit?: number;
  /** Default 10 s: a body not complete by then is answered 408. */
  requestTimeoutMs?: number;
  /** Access check of monitoring routes; returns null when allowed, else the error code. */
  monitoringAccess?: (req: Request) => ErrorCode | null;
  /** Runs before routing (flood limit); a Reply short-circuits. `exempt` is true for allowed monitoring callers. */
  beforeRoute?: (req: Request, exempt: boolean) => Reply | undefined | Promise<Reply | undefined>;
  /** Each error answer's code (metrics of store failures). */
  onErrorCode?: (code: ErrorCode) => void;
  /** A request shaped like HTTP request smuggling (e.g. a non-numeric Content-Length) was refused. */
  onMalformed?: (req: Request) => void;
  /** With each response, just before it is written (access log, metrics). */
  onResponse?: (req: Request, status: number, route: Route | undefined) => void;
  /**
   * As each reply is written: after uWS has its status and headers and before it is given the
   * body, the last part; what runs after it until the bytes reach the kernel is uWS's own code.
   * Usage is counted here (src/usage/usage-ledger.ts): before the client can have the whole
   * response, so none it received goes uncounted, and as late as that allows, so that a process
   * killed in between has counted at most the replies it was writing at that instant.
   */
  onWrite?: (req: Request) => void;
  logger: Logger;
}

const MAX_URL_LENGTH = 8192;
const CHUNKED = /^chunked$/i;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPE = 'application/json; charset=utf-8';
const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 204: '204 No Content', 400: '400 Bad Request', 401: '401 Unauthorized',
  403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed', 408: '408 Request Timeout',
  409: '409 Conflict', 413: '413 Payload Too Large', 414: '414 URI Too Long', 415: '415 Unsupported Media Type',
  429: '429 Too Many Requests', 431: '431 Request Header Fields Too Large', 500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};
const statusLine = (status: number) => STATUS_TEXT[status] ?? String(status);

/** Per-request state the uWS callbacks share. */
interface Pending {
  aborted: boolean;
  done: boolean;
  onAbort: (() => void) | null;
}

export interface HttpServer {
  /** Starts listening; resolves with the port. */
  listen(): Promise<number>;
  /** Stops accepting connections; requests in flight go on. */
  stopAccepting(): void;
  /** Requests being handled right now. */
  readonly inFlight: number;
  /** Resolves when no request is in flight, or after `timeoutMs`. Returns the number still in flight. */
  drain(timeoutMs: number): Promise<number>;
  /** Closes every connection. */
  close(): void;
}

export function createHttpServer(router: Router, options: HttpServerOptions): HttpServer {
  const log = options.logger;
  const basePath = options.basePath ?? '';
  const bodyLimit = options.bodyLimit ?? 64 * 1024;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const hostAllowed = (options.allowedHosts?.length ?? 0) > 0 ? hostMatcher(options.allowedHosts!) : null;
  const corsAny = (options.corsOrigins?.length ?? 0) === 0;
  const corsAllowed = originMatcher(options.corsOrigins ?? []);
  const app = options.tls
    ? uWS.SSLApp({ cert_file_name: options.tls.certFile, key_file_name: options.tls.keyFile })
    : uWS.App();
  let listenSocket: uWS.us_listen_socket | null = null;
  let inFlight = 0;
  let draining = false;
  const idleWaiters: (() => void)[] = [];

  const finish = () => {
    inFlight--;
    if (inFlight === 0) for (const w of idleWaiters.splice(0)) w();
  };

  /** Writes a complete reply (call inside cork unless still synchronous in the uWS handler). */
  const write = (res: uWS.HttpResponse, req: Request, status: number, body: string | Buffer,
    headers: Readonly<Record<string, string>> | undefined, close: boolean) => {
    res.writeStatus(statusLine(status));
    if (!headers || headers['content-type'] === undefined) res.writeHeader('content-type', JSON_TYPE);
    if (headers) for (const name in headers) res.writeHeader(name, headers[name]!);
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (corsAny) {
        res.writeHeader('access-control-allow-origin', '*');
      } else if (corsAllowed(origin)) {
        res.writeHeader('access-control-allow-origin', origin);
        res.writeHeader('vary', 'Origin');
      }
    }
    options.onWrite?.(req);
    if (req.method === 'HEAD') res.endWithoutBody(typeof body === 'string' ? Buffer.byteLength(body) : body.length, close || draining);
    else res.end(body, close || draining);
  };

  const respond = (res: uWS.HttpResponse, p: Pending, req: Request, route: Route | undefined, reply: Reply, close = false) => {
    if (p.aborted || p.done) return;
    p.done = true;
    // Before the write: inside a uWS callback the reply leaves when the callback returns, and the
    // less runs between counting it (onWrite) and that, the less a killed worker can over-count.
    options.onResponse?.(req, reply.status, route);
    res.cork(() => write(res, req, reply.status, reply.body, reply.headers, close));
    finish();
  };

  const fail = (res: uWS.HttpResponse, p: Pending, req: Request, route: Route | undefined, err: unknown, close = false) => {
    let code: ErrorCode = 'INTERNAL';
    let headers: Record<string, string> | undefined;
    if (isPalisadeError(err)) {
      code = err.code;
      if (err.retryAfter !== undefined) headers = { 'retry-after': String(Math.max(1, Math.ceil(err.retryAfter))) };
    } else {
      log.error({ err, method: req.method, path: req.path }, 'unhandled error in request');
    }
    options.onErrorCode?.(code);
    respond(res, p, req, route, { status: ERRORS[code].status, body: errorBody(code), headers }, close);
  };

  app.any('/*', (res, uReq) => {
    const p: Pending = { aborted: false, done: false, onAbort: null };
    res.onAborted(() => {
      p.aborted = true;
      p.onAbort?.();
      if (!p.done) { p.done = true; finish(); }
    });
    inFlight++;
    const startedAt = performance.now();
    const method = uReq.getCaseSensitiveMethod().toUpperCase();
    let url = uReq.getUrl();
    const rawQuery = uReq.getQuery() ?? '';
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    let headerBytes = 0;
    uReq.forEach((k, val) => {
      headerBytes += k.length + val.length;
      // Repeated headers are joined as HTTP says; uWS hands them one by one.
      headers[k] = headers[k] === undefined ? val : `${headers[k]}, ${val}`;
    });
    const socketIp = formatAddress(res.getRemoteAddress());
    const ip = resolveClientIp(socketIp, headers, options.clientIp);
    if (basePath !== '') url = url === basePath ? '/' : url.startsWith(`${basePath}/`) ? url.slice(basePath.length) : '';
    const req = new Request(method, url, rawQuery, headers, ip, startedAt);

    if (url.length + rawQuery.length > MAX_URL_LENGTH) return fail(res, p, req, undefined, new PalisadeError('URI_TOO_LONG'), true);
    if (headerBytes > 16 * 1024) return fail(res, p, req, undefined, new PalisadeError('HEADERS_TOO_LARGE'), true);
    if (hostAllowed && !hostAllowed(hostOfHeader(headers.host ?? ''))) {
      return fail(res, p, req, undefined, new PalisadeError('HOST_NOT_ALLOWED'));
    }
    if (url === '') return fail(res, p, req, undefined, new PalisadeError('NOT_FOUND'));

    // CORS preflight: answered here for every path we serve.
    if (method === 'OPTIONS' && headers['access-control-request-method'] !== undefined) {
      return preflight(res, p, req);
    }

    // uWS reads a body as chunked whatever Transfer-Encoding names ("identity", "xchunked",
    // "gzip, chunked"…), where a proxy in front may frame it otherwise (RFC 9112 section 6.3): only
    // exactly "chunked" is served, and the connection of anything else is closed, whether or not
    // threat detection counts it (test/reliability/hostile-http.test.ts).
    const te = headers['transfer-encoding'];
    if (te !== undefined && !CHUNKED.test(te)) {
      options.onMalformed?.(req);
      return fail(res, p, req, undefined, new PalisadeError('BAD_REQUEST'), true);
    }

    const route = router.find(method, url);
    const exempt = route?.options.monitoring === true && options.monitoringAccess?.(req) === null;

    // The body must be subscribed to synchronously; its limit is enforced while it arrives.
    let body: Promise<Buffer> | null = null;
    if (BODY_METHODS.has(method)) {
      const limit = route?.options.bodyLimit ?? bodyLimit;
      const declared = headers['content-length'];
      if (declared !== undefined && !/^\d+$/.test(declared)) {
        options.onMalformed?.(req);
        return fail(res, p, req, route, new PalisadeError('BAD_REQUEST'), true);
      }
      if (declared !== undefined && Number(declared) > limit) {
        const refuse = () => fail(res, p, req, route, new PalisadeError('BODY_TOO_LARGE'), true);
        // Within DISCARD_BYTES the body is read and thrown away first, so that the client sees the 413.
        if (Number(declared) > DISCARD_BYTES) return refuse();
        return readBody(res, p, -1, DISCARD_MS, refuse);
      }
      if (route?.handler !== undefined && route.stream === undefined && route.options.monitoring !== true) {
        return answerWithBody(res, p, req, route, exempt, limit);
      }
      body = readBodyPromise(res, p, limit, requestTimeoutMs);
    }
    if (body === null && route?.handler !== undefined && route.stream === undefined && route.options.monitoring !== true) {
      return answerNow(res, p, req, route, exempt);
    }
    void dispatch(res, p, req, route, exempt, body);
  });

  /**
   * A request with a body to a plain route: answerNow once the body is in. When the pre-route hook
   * answers at once, the body is read with callbacks and the handler runs in uWS's last onData
   * callback, so a reply that needs no waiting is written there: no Promise, no timer beyond the
   * body's own. A pre-route hook that waits goes the Promise way (dispatch).
   */
  const answerWithBody = (res: uWS.HttpResponse, p: Pending, req: Request, route: Route, exempt: boolean, limit: number) => {
    let early: Reply | undefined | Promise<Reply | undefined>;
    try {
      early = options.beforeRoute?.(req, exempt);
    } catch (err) {
      // The body may still be arriving: close rather than read it.
      return fail(res, p, req, route, err, true);
    }
    if (early instanceof Promise) {
      void dispatch(res, p, req, route, exempt, readBodyPromise(res, p, limit, requestTimeoutMs), early);
      return;
    }
    if (early) return respond(res, p, req, route, early, true);
    readBody(res, p, limit, requestTimeoutMs, (err, body) => {
      // Body errors (413, 408) leave the connection in an unknown state: close it.
      if (err) return fail(res, p, req, route, err, true);
      req.body = body;
      handle(res, p, req, route);
    });
  };

  /**
   * A request without a body to a plain route. When the pre-route hook and the handler answer
   * without waiting (the shared-memory store, a cached key), the reply is written inside the uWS
   * callback itself: no Promise and no later cork. Whatever does wait goes on as a Promise.
   */
  const answerNow = (res: uWS.HttpResponse, p: Pending, req: Request, route: Route, exempt: boolean) => {
    let early: Reply | undefined | Promise<Reply | undefined>;
    try {
      early = options.beforeRoute?.(req, exempt);
    } catch (err) {
      return fail(res, p, req, route, err);
    }
    if (early instanceof Promise) {
      early.then((e) => (e ? respond(res, p, req, route, e) : handle(res, p, req, route)), (err: unknown) => fail(res, p, req, route, err));
    } else if (early) {
      respond(res, p, req, route, early);
    } else {
      handle(res, p, req, route);
    }
  };

  const handle = (res: uWS.HttpResponse, p: Pending, req: Request, route: Route) => {
    if (p.aborted) return;
    let reply: Reply | Promise<Reply>;
    try {
      reply = route.handler!(req);
    } catch (err) {
      return fail(res, p, req, route, err);
    }
    if (reply instanceof Promise) reply.then((r) => respond(res, p, req, route, r), (err: unknown) => fail(res, p, req, route, err));
    else respond(res, p, req, route, reply);
  };

  const preflight = (res: uWS.HttpResponse, p: Pending, req: Request) => {
    const origin = req.headers.origin ?? '';
    const allowed = corsAny || corsAllowed(origin);
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (allowed) {
      headers['access-control-allow-origin'] = corsAny ? '*' : origin;
      headers['access-control-allow-methods'] = 'GET, POST, OPTIONS';
      const asked = req.headers['access-control-request-headers'];
      headers['access-control-allow-headers'] = asked && asked.length <= 512 && /^[A-Za-z0-9, -]*$/.test(asked)
        ? asked : 'Content-Type, Authorization';
      headers['access-control-max-age'] = '600';
      if (!corsAny) headers.vary = 'Origin';
    }
    p.done = true;
    res.writeStatus(statusLine(204));
    for (const name in headers) res.writeHeader(name, headers[name]!);
    res.endWithoutBody(0, draining);
    options.onResponse?.(req, 204, undefined);
    finish();
  };

  /** The Promise way; `pending` is the pre-route hook's answer when the caller has already asked for it. */
  const dispatch = async (res: uWS.HttpResponse, p: Pending, req: Request, route: Route | undefined,
    exempt: boolean, body: Promise<Buffer> | null, pending?: Promise<Reply | undefined>) => {
    try {
      if (pending !== undefined || options.beforeRoute) {
        const early = await (pending ?? options.beforeRoute!(req, exempt));
        if (early) {
          // A body may still be arriving: close the connection rather than read it.
          return respond(res, p, req, route, early, body !== null);
        }
      }
      if (!route) {
        const allowed = router.allowed(req.path);
        if (allowed.length > 0) {
          throw Object.assign(new PalisadeError('METHOD_NOT_ALLOWED'), { allow: allowed.join(', ') });
        }
        throw new PalisadeError('NOT_FOUND');
      }
      if (route.options.monitoring) {
        const denied = options.monitoringAccess?.(req) ?? null;
        if (denied) {
          const headers = denied === 'MONITORING_UNAUTHORIZED' ? { 'www-authenticate': 'Basic realm="palisade monitoring", charset="UTF-8"' } : undefined;
          return respond(res, p, req, route, { status: ERRORS[denied].status, body: errorBody(denied), headers }, body !== null);
        }
      }
      if (body) req.body = await body;
      if (p.aborted) return;
      if (route.stream) return startStream(res, p, req, route);
      const reply = await route.handler!(req);
      respond(res, p, req, route, reply);
    } catch (err) {
      if (isPalisadeError(err) && err.code === 'METHOD_NOT_ALLOWED') {
        return respond(res, p, req, route, {
          status: 405, body: errorBody('METHOD_NOT_ALLOWED'), headers: { allow: (err as PalisadeError & { allow: string }).allow },
        }, body !== null);
      }
      // Body errors (413, 408) leave the connection in an unknown state: close it.
      const close = isPalisadeError(err) && (err.code === 'BODY_TOO_LARGE' || err.code === 'REQUEST_TIMEOUT') && body !== null;
      fail(res, p, req, route, err, close || (body !== null && !p.done && req.body === null));
    }
  };

  const startStream = (res: uWS.HttpResponse, p: Pending, req: Request, route: Route) => {
    const closers: (() => void)[] = [];
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      for (const c of closers.splice(0)) c();
    };
    p.onAbort = close;
    res.cork(() => {
      res.writeStatus('200 OK');
      res.writeHeader('content-type', req.query.get('format') === 'json' ? 'application/x-ndjson' : 'text/plain; charset=utf-8');
      res.writeHeader('cache-control', 'no-store');
    });
    const stream: ResponseStream = {
      write(chunk) {
        if (closed || p.aborted) return false;
        let ok = true;
        res.cork(() => { ok = res.write(chunk); });
        return ok;
      },
      end() {
        if (closed || p.aborted) return;
        res.cork(() => res.end());
        p.done = true;
        finish();
        close();
      },
      drop() {
        if (closed || p.aborted) return;
        p.done = true;
        res.close();
        finish();
        close();
      },
      onClose(cb) { if (closed) cb(); else closers.push(cb); },
      get closed() { return closed || p.aborted; },
    };
    options.onResponse?.(req, 200, route);
    void Promise.resolve(route.stream!(req, stream)).catch((err: unknown) => {
      log.error({ err }, 'stream handler failed');
      if (!stream.closed) { res.cork(() => res.close()); close(); }
    });
  };

  return {
    listen() {
      const port = options.port ?? 8080;
      return new Promise((resolve, reject) => {
        const cb = (socket: uWS.us_listen_socket | false) => {
          if (!socket) return reject(new Error(`cannot listen on port ${port}`));
          listenSocket = socket;
          resolve(uWS.us_socket_local_port(socket));
        };
        if (options.host) app.listen(options.host, port, cb);
        else app.listen(port, cb);
      });
    },
    stopAccepting() {
      draining = true;
      if (listenSocket) {
        uWS.us_listen_socket_close(listenSocket);
        listenSocket = null;
      }
    },
    get inFlight() { return inFlight; },
    drain(timeoutMs) {
      if (inFlight === 0) return Promise.resolve(0);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(inFlight), timeoutMs);
        idleWaiters.push(() => { clearTimeout(timer); resolve(0); });
      });
    },
    close() {
      this.stopAccepting();
      app.close();
    },
  };
}

const EMPTY = Buffer.alloc(0);

/** A refused body is read and thrown away up to this many bytes in all… */
const DISCARD_BYTES = 16 * 1024 * 1024;
/** …and for this long at most, before the 413 and the close. */
const DISCARD_MS = 2_000;

/**
 * Reads the whole body, refusing it once it passes `limit` (BODY_TOO_LARGE) or when it is not
 * complete within `timeoutMs` (REQUEST_TIMEOUT); every chunk is copied. `done` is called once,
 * inside uWS's onData callback (or the timer's), and never after the client has gone.
 *
 * A refused body is not answered at once: what is left of it is read and thrown away first, up to
 * DISCARD_BYTES in all and for DISCARD_MS at most. Closing a connection with bytes unread makes the
 * kernel reset it, and a client still sending loses the answer to the reset before it reads it
 * (uWS closes at once after the answer, with no lingering close), so it would see a reset instead
 * of the 413. A negative `limit` refuses the body from its first byte (a declared length already
 * too large). Nothing of a refused body is kept.
 */
function readBody(res: uWS.HttpResponse, p: Pending, limit: number, timeoutMs: number,
  done: (err: PalisadeError | null, body: Buffer) => void): void {
  // Once settled, nothing the handlers or the timer can reach holds the request (its body, and
  // through `done` its headers and route). While they held it, a worker under S2 load kept two to
  // five times the bytes past its scavenges, on a heap half again as large, with two to three times
  // the mark-compacts (measured with a sampling heap profile, commit 0dc695d); which reference kept them
  // alive that long was not pinned down.
  let chunks: Buffer[] | null = limit < 0 ? null : [];
  let size = 0;
  let pending: typeof done | null = done;
  const expire = () => {
    const err = new PalisadeError(chunks === null ? 'BODY_TOO_LARGE' : 'REQUEST_TIMEOUT');
    settle()?.(err, EMPTY);
  };
  let timer = setTimeout(expire, timeoutMs);
  /** `done` the first time, null after; lets go of everything either way. */
  const settle = () => {
    const callback = pending;
    pending = null;
    chunks = null;
    clearTimeout(timer);
    p.onAbort = null;
    return callback;
  };
  p.onAbort = settle;
  res.onData((chunk, isLast) => {
    if (pending === null) return;
    size += chunk.byteLength;
    if (chunks !== null && size > limit) {
      // Refused: from here on, count what arrives until its end, DISCARD_BYTES or DISCARD_MS.
      chunks = null;
      clearTimeout(timer);
      timer = setTimeout(expire, DISCARD_MS);
    }
    if (chunks === null) {
      if (isLast || size > DISCARD_BYTES) settle()!(new PalisadeError('BODY_TOO_LARGE'), EMPTY);
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0))); // the copy uWS requires, wrapped without a second copy
    if (isLast) {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      settle()!(null, body);
    }
  });
}

/** readBody as a Promise, awaited later unless a pre-route reply wins: never an unhandled rejection. */
function readBodyPromise(res: uWS.HttpResponse, p: Pending, limit: number, timeoutMs: number): Promise<Buffer> {
  const body = new Promise<Buffer>((resolve, reject) => {
    readBody(res, p, limit, timeoutMs, (err, buf) => (err ? reject(err) : resolve(buf)));
  });
  body.catch(() => {});
  return body;
}
