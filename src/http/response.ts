// Writing replies: the status line, Content-Type and CORS headers, the usage and access-log hooks
// around the write, error replies from the catalogue, and the CORS preflight.
import type { HttpResponse } from 'uWebSockets.js';
import { ERRORS, type ErrorCode, errorBody, errorBodyOf, isPalisadeError } from '../errors.js';
import { originMatcher } from './hosts.js';
import type { Request } from './request.js';
import type { Route } from './router.js';
import type { HttpServerOptions } from './server-options.js';
import type { Pending, Traffic } from './traffic.js';
import type { Reply } from './types.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 204: '204 No Content', 301: '301 Moved Permanently', 400: '400 Bad Request', 401: '401 Unauthorized',
  403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed', 408: '408 Request Timeout',
  409: '409 Conflict', 410: '410 Gone', 413: '413 Payload Too Large', 414: '414 URI Too Long', 415: '415 Unsupported Media Type',
  429: '429 Too Many Requests', 431: '431 Request Header Fields Too Large', 500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};
const statusLine = (status: number) => STATUS_TEXT[status] ?? String(status);

export interface Responder {
  /** Writes `reply` once (nothing after the client has gone or a reply was written), corked. */
  respond(res: HttpResponse, p: Pending, req: Request, route: Route | undefined, reply: Reply, close?: boolean): void;
  /** Answers `err`: its catalogue code and status, or 500 INTERNAL (logged) for anything else. */
  fail(res: HttpResponse, p: Pending, req: Request, route: Route | undefined, err: unknown, close?: boolean): void;
  /** Answers a CORS preflight (OPTIONS with Access-Control-Request-Method) with 204. */
  preflight(res: HttpResponse, p: Pending, req: Request): void;
}

export function createResponder(
  options: Pick<HttpServerOptions, 'corsOrigins' | 'onErrorCode' | 'onResponse' | 'onWrite' | 'logger'>, traffic: Traffic,
): Responder {
  const log = options.logger;
  const corsAny = (options.corsOrigins?.length ?? 0) === 0;
  const corsAllowed = originMatcher(options.corsOrigins ?? []);

  /** Writes a complete reply (call inside cork unless still synchronous in the uWS handler). */
  const write = (res: HttpResponse, req: Request, status: number, body: string | Buffer,
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
    if (req.method === 'HEAD') res.endWithoutBody(typeof body === 'string' ? Buffer.byteLength(body) : body.length, close || traffic.draining);
    else res.end(body, close || traffic.draining);
  };

  const respond = (res: HttpResponse, p: Pending, req: Request, route: Route | undefined, reply: Reply, close = false) => {
    if (p.aborted || p.done) return;
    p.done = true;
    // Before the write: inside a uWS callback the reply leaves when the callback returns, and the
    // less runs between counting it (onWrite) and that, the less a killed worker can over-count.
    options.onResponse?.(req, reply.status, route);
    res.cork(() => write(res, req, reply.status, reply.body, reply.headers, close));
    traffic.finish();
  };

  const fail = (res: HttpResponse, p: Pending, req: Request, route: Route | undefined, err: unknown, close = false) => {
    let code: ErrorCode = 'INTERNAL';
    let headers: Record<string, string> | undefined;
    let body: string | undefined;
    if (isPalisadeError(err)) {
      code = err.code;
      body = errorBodyOf(err);
      if (err.retryAfter !== undefined) headers = { 'retry-after': String(Math.max(1, Math.ceil(err.retryAfter))) };
    } else {
      log.error({ err, method: req.method, path: req.path }, 'unhandled error in request');
    }
    options.onErrorCode?.(code);
    respond(res, p, req, route, { status: ERRORS[code].status, body: body ?? errorBody(code), headers }, close);
  };

  const preflight = (res: HttpResponse, p: Pending, req: Request) => {
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
    res.endWithoutBody(0, traffic.draining);
    options.onResponse?.(req, 204, undefined);
    traffic.finish();
  };

  return { respond, fail, preflight };
}
