// From a request whose head has been checked to its reply: the pre-route hook (flood limit), the
// body, monitoring access, the route's handler or stream, 404 and 405. A reply that needs no waiting
// is written inside the uWS callback itself; whatever waits goes on as a Promise.
import type { HttpResponse } from 'uWebSockets.js';
import { ERRORS, PalisadeError, errorBody, isPalisadeError } from '../errors.js';
import { readBody, readBodyPromise } from './body.js';
import type { Request } from './request.js';
import type { Responder } from './response.js';
import type { Route, Router } from './router.js';
import type { HttpServerOptions } from './server-options.js';
import { startStream } from './stream.js';
import type { Pending, Traffic } from './traffic.js';
import type { Reply } from './types.js';

export interface Dispatcher {
  /** A request with a body to a plain route (a handler, not a stream nor a monitoring route). */
  answerWithBody(res: HttpResponse, p: Pending, req: Request, route: Route, exempt: boolean, limit: number): void;
  /** A request without a body to a plain route. */
  answerNow(res: HttpResponse, p: Pending, req: Request, route: Route, exempt: boolean): void;
  /** Every other request: the Promise way; `pending` is the pre-route hook's answer when the caller has already asked for it. */
  dispatch(res: HttpResponse, p: Pending, req: Request, route: Route | undefined, exempt: boolean,
    body: Promise<Buffer> | null, pending?: Promise<Reply | undefined>): Promise<void>;
}

export function createDispatcher(router: Router, options: HttpServerOptions, responder: Responder, traffic: Traffic): Dispatcher {
  const { respond, fail } = responder;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;

  /**
   * A request with a body to a plain route: answerNow once the body is in. When the pre-route hook
   * answers at once, the body is read with callbacks and the handler runs in uWS's last onData
   * callback, so a reply that needs no waiting is written there: no Promise, no timer beyond the
   * body's own. A pre-route hook that waits goes the Promise way (dispatch).
   */
  const answerWithBody = (res: HttpResponse, p: Pending, req: Request, route: Route, exempt: boolean, limit: number) => {
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
  const answerNow = (res: HttpResponse, p: Pending, req: Request, route: Route, exempt: boolean) => {
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

  const handle = (res: HttpResponse, p: Pending, req: Request, route: Route) => {
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

  /** The Promise way; `pending` is the pre-route hook's answer when the caller has already asked for it. */
  const dispatch = async (res: HttpResponse, p: Pending, req: Request, route: Route | undefined,
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
      if (route.stream) return startStream(res, p, req, route, traffic, options);
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

  return { answerWithBody, answerNow, dispatch };
}
