// The uWebSockets.js adapter: the only place that touches uWS objects. Per request: copy headers,
// resolve the client IP, check Host, find the route, run the pre-route hook (flood limit), read the
// body within its limit, call the handler, write the reply corked, then the access log and metrics.
// uWS rules: onAborted first, nothing read from `req` after the first await, writes after an await
// inside cork(), every onData chunk copied.
//   server.ts          listening (TLS or not), the request's head: copied, checked, routed
//   dispatch.ts        from the head to the reply: pre-route hook, body, handler or stream
//   body.ts            reading a body within its limit and time
//   response.ts        writing replies, errors and CORS preflights
//   stream.ts          streamed answers (GET /.logs)
//   traffic.ts         requests in flight, draining
import uWS from 'uWebSockets.js';
import { performance } from 'node:perf_hooks';
import { PalisadeError } from '../errors.js';
import { DISCARD_BYTES, DISCARD_MS, readBody, readBodyPromise } from './body.js';
import { formatAddress, resolveClientIp } from './client-ip.js';
import { createDispatcher } from './dispatch.js';
import { hostMatcher, hostOfHeader } from './hosts.js';
import { Request } from './request.js';
import { createResponder } from './response.js';
import type { Router } from './router.js';
import type { HttpServerOptions } from './server-options.js';
import { type Pending, Traffic } from './traffic.js';

export type { HttpServerOptions } from './server-options.js';

const MAX_URL_LENGTH = 8192;
const CHUNKED = /^chunked$/i;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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
  const basePath = options.basePath ?? '';
  const bodyLimit = options.bodyLimit ?? 64 * 1024;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const hostAllowed = (options.allowedHosts?.length ?? 0) > 0 ? hostMatcher(options.allowedHosts!) : null;
  const app = options.tls
    ? uWS.SSLApp({ cert_file_name: options.tls.certFile, key_file_name: options.tls.keyFile })
    : uWS.App();
  let listenSocket: uWS.us_listen_socket | null = null;
  const traffic = new Traffic();
  const responder = createResponder(options, traffic);
  const { fail, preflight } = responder;
  const { answerWithBody, answerNow, dispatch } = createDispatcher(router, options, responder, traffic);

  app.any('/*', (res, uReq) => {
    const p: Pending = { aborted: false, done: false, onAbort: null };
    res.onAborted(() => {
      p.aborted = true;
      p.onAbort?.();
      if (!p.done) { p.done = true; traffic.finish(); }
    });
    traffic.inFlight++;
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
      traffic.draining = true;
      if (listenSocket) {
        uWS.us_listen_socket_close(listenSocket);
        listenSocket = null;
      }
    },
    get inFlight() { return traffic.inFlight; },
    drain(timeoutMs) {
      return traffic.drain(timeoutMs);
    },
    close() {
      this.stopAccepting();
      app.close();
    },
  };
}

