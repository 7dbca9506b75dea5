// Exact-path routing: a Map per method, built once. Palisade's public routes have no path
// parameters; a prefix route (the admin API, the console's files) takes every method and path
// under its prefix that no exact route has, and routes them itself.
import type { Handler, RequestContext } from './types.js';

/** A route that writes its answer as a stream (GET /.logs). */
export interface ResponseStream {
  /** Writes a chunk; returns false when the client is not keeping up (the caller should drop it). */
  write(chunk: string): boolean;
  end(): void;
  /** Closes the connection at once, discarding what is still buffered (a reader that cannot keep up). */
  drop(): void;
  /** Called once when the client goes away or the stream ends. */
  onClose(cb: () => void): void;
  readonly closed: boolean;
}
export type StreamHandler = (req: RequestContext, stream: ResponseStream) => void | Promise<void>;

export interface RouteOptions {
  /** Largest body accepted (bytes); default the server's REQUEST_BODY_LIMIT. */
  readonly bodyLimit?: number;
  /** Guarded by MONITORING_IP_WHITELIST / MONITORING_HTTP_CREDENTIALS. */
  readonly monitoring?: boolean;
  /** A stream's Content-Type (default text/plain, or application/x-ndjson with ?format=json). */
  readonly contentType?: string;
}

export interface Route {
  readonly method: string;
  readonly path: string;
  readonly handler?: Handler;
  readonly stream?: StreamHandler;
  readonly options: RouteOptions;
}

export class Router {
  readonly #byMethod = new Map<string, Map<string, Route>>();
  readonly #methodsByPath = new Map<string, string[]>();
  readonly #prefixes: Route[] = [];

  add(method: string, path: string, handler: Handler, options: RouteOptions = {}): this {
    return this.#add({ method: method.toUpperCase(), path, handler, options });
  }

  addStream(method: string, path: string, stream: StreamHandler, options: RouteOptions = {}): this {
    return this.#add({ method: method.toUpperCase(), path, stream, options });
  }

  /** Every method and path starting with `prefix` (which ends with '/') or equal to it without the '/'. */
  addPrefix(prefix: string, handler: Handler, options: RouteOptions = {}): this {
    if (!prefix.endsWith('/')) throw new Error(`prefix ${prefix} must end with /`);
    this.#prefixes.push({ method: '*', path: prefix, handler, options });
    return this;
  }

  #add(route: Route): this {
    let table = this.#byMethod.get(route.method);
    if (!table) this.#byMethod.set(route.method, (table = new Map()));
    if (table.has(route.path)) throw new Error(`route ${route.method} ${route.path} registered twice`);
    table.set(route.path, route);
    const methods = this.#methodsByPath.get(route.path) ?? [];
    methods.push(route.method);
    if (route.method === 'GET') methods.push('HEAD');
    this.#methodsByPath.set(route.path, methods);
    return this;
  }

  /** The route for method + path (HEAD falls back to GET), or undefined. */
  find(method: string, path: string): Route | undefined {
    const route = this.#byMethod.get(method)?.get(path) ?? (method === 'HEAD' ? this.#byMethod.get('GET')?.get(path) : undefined);
    if (route || this.#prefixes.length === 0) return route;
    for (const p of this.#prefixes) if (path.startsWith(p.path) || path === p.path.slice(0, -1)) return p;
    return undefined;
  }

  /** Every route registered, in the order of registration per method. */
  list(): { readonly method: string; readonly path: string }[] {
    return [...this.#byMethod.values()].flatMap((table) => [...table.values()].map((r) => ({ method: r.method, path: r.path })));
  }

  /** Methods registered for a path ([] when the path is unknown): for 405 and Allow. */
  allowed(path: string): readonly string[] {
    return this.#methodsByPath.get(path) ?? [];
  }
}
