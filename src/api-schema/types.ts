// The shape of one route's description: the JSON Schemas of its query and body (what the route
// validates with, src/api-schema/validate.ts), its responses and the error codes it answers. The
// OpenAPI document served at /v1/docs/openapi.json is built from these (src/api-schema/openapi.ts).
import type { ErrorCode } from '../errors.js';

/**
 * A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1). Two annotations of our own, ignored by
 * validators and shown in the document: `x-message`, the text of a 400 when the value under it is
 * refused, and `x-error`, the error code it is refused with (default: the route's `invalid`).
 */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** Who may call a route (PROTOCOL.md section 4, src/keys/authorize.ts). */
export type Auth =
  /** `?apiKey=key_…` and an Origin (else Referer) matching one of the key's hostnames. */
  | 'browser'
  /** `Authorization: Bearer sec_…`, or `Bearer key_…` with X-Hmac-Signature and X-Hmac-Signature-Salt. */
  | 'server'
  /** `Authorization: Altcha …`: a solution of the machine-to-machine challenge of WWW-Authenticate. */
  | 'm2m'
  /** MONITORING_IP_WHITELIST and, when set, MONITORING_HTTP_CREDENTIALS (HTTP Basic). */
  | 'monitoring'
  | 'none';

export interface ResponseSpec {
  readonly description: string;
  /** The body's schema; JSON unless `contentType` says otherwise (text bodies: a string schema). */
  readonly schema?: JsonSchema;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, { readonly description: string; readonly schema: JsonSchema }>>;
}

export interface RouteSpec {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Without APP_BASE_PATH. */
  readonly path: string;
  readonly operationId: string;
  /** The document's section (a tag of TAGS in openapi.ts). */
  readonly tag: string;
  readonly summary: string;
  /** Markdown. */
  readonly description: string;
  readonly auth: Auth;
  /**
   * The query as an object of its parameters (the first value of a repeated name, as
   * RequestContext.query): `properties` are named parameters, `patternProperties` families such as
   * `params.<name>`. The browser key's `apiKey` is the auth scheme's, not listed here.
   */
  readonly query?: JsonSchema;
  /** The JSON body (application/json). */
  readonly body?: JsonSchema;
  /** The largest body, in words (REQUEST_BODY_LIMIT unless the route has its own). */
  readonly bodyLimit?: string;
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /** Codes this route answers itself; those of the HTTP layer, the body and the auth scheme are added. */
  readonly errors: readonly ErrorCode[];
  /** The code of a query or body its schema refuses, unless the refused value's schema says `x-error`. Default INVALID_PARAMETER. */
  readonly invalid?: ErrorCode;
}
