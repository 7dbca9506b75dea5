// The contract between the uWS adapter (src/http/) and route handlers (src/routes/). Handlers never
// see uWS objects: they get a RequestContext whose headers and body are already copied, and return
// a Reply (or throw a PalisadeError, which the adapter turns into {"error","statusCode"}).

export interface RequestContext {
  /** Upper-case method. */
  readonly method: string;
  /** Path without APP_BASE_PATH and without the query string. */
  readonly path: string;
  /** Raw query string without the leading `?` ('' when none). */
  readonly rawQuery: string;
  /** Parsed query (first value wins); built lazily by the adapter. */
  readonly query: URLSearchParams;
  /** Request headers, names lower-case; copied before any await. */
  readonly headers: Readonly<Record<string, string>>;
  /** The client IP after X_FORWARDED_FOR_TRUSTED / IP_HEADERS_SECRET resolution. */
  readonly ip: string;
  /** The body, complete and within the route's limit (null for bodiless methods). */
  readonly body: Buffer | null;
  /** Parses the body as JSON; throws PalisadeError INVALID_JSON / UNSUPPORTED_MEDIA_TYPE. */
  json(): unknown;
  /** Monotonic start time (performance.now()) for durations. */
  readonly startedAt: number;
  /** The API key the request was authorised with, once a route has done so (request logs). */
  authorizedKey?: { readonly id: string; readonly accountId: string } | null;
  /**
   * Set by a route when the request counts as one request of an API key (usage, plan limits). It
   * is counted as the reply is written (HttpServerOptions.onWrite): a reply never written, to a
   * client gone or a process killed first, is never counted, and one written always is.
   */
  usage?: UsageMark | null;
  /** The client's country and threat kinds, once a route looked them up (request logs reuse them). */
  clientSignals?: { readonly country: string | null; readonly threats: Readonly<Record<string, string>> | null } | null;
}

/** One request of `key` with its classification and referrer origin (src/usage/usage-buffer.ts countUsage). */
export interface UsageMark {
  readonly key: { readonly id: string; readonly accountId: string };
  readonly classification: 'GOOD' | 'NEUTRAL' | 'BAD' | null;
  readonly origin: string | null;
}

export interface Reply {
  readonly status: number;
  /** Extra headers; Content-Type defaults to application/json. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

export type Handler = (req: RequestContext) => Reply | Promise<Reply>;

/** A JSON reply with status 200 unless given. */
export function json(body: unknown, status = 200, headers?: Record<string, string>): Reply {
  return { status, body: JSON.stringify(body), headers };
}
