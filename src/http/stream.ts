// A streamed answer (GET /.logs): the status and headers at once, then chunks as the route writes
// them, until it ends, drops a reader that cannot keep up, or the client goes.
import type { HttpResponse } from 'uWebSockets.js';
import type { Request } from './request.js';
import type { ResponseStream, Route } from './router.js';
import type { HttpServerOptions } from './server-options.js';
import type { Pending, Traffic } from './traffic.js';

export function startStream(res: HttpResponse, p: Pending, req: Request, route: Route, traffic: Traffic,
  options: Pick<HttpServerOptions, 'onResponse' | 'logger'>): void {
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
    res.writeHeader('content-type', route.options.contentType ?? (req.query.get('format') === 'json' ? 'application/x-ndjson' : 'text/plain; charset=utf-8'));
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
      traffic.finish();
      close();
    },
    drop() {
      if (closed || p.aborted) return;
      p.done = true;
      res.close();
      traffic.finish();
      close();
    },
    onClose(cb) { if (closed) cb(); else closers.push(cb); },
    get closed() { return closed || p.aborted; },
  };
  options.onResponse?.(req, 200, route);
  void Promise.resolve(route.stream!(req, stream)).catch((err: unknown) => {
    options.logger.error({ err }, 'stream handler failed');
    if (!stream.closed) { res.cork(() => res.close()); close(); }
  });
}
