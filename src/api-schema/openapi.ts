// The OpenAPI 3.1 document of /v1/docs/openapi.json, built from the routes' descriptions (index.ts)
// and the error catalogue (src/errors.ts): the schemas in it are the ones the routes validate with.
import { ERRORS, type ErrorCode } from '../errors.js';
import type { Auth, JsonSchema, ResponseSpec, RouteSpec } from './types.js';

export interface DocumentOptions {
  /** package.json's version. */
  readonly version: string;
  /** APP_BASE_PATH ('' for none): the server URL every path is relative to. */
  readonly basePath: string;
}

const TAGS = [
  { name: 'Widget', description: 'Called by the ALTCHA widget in the browser, authorised by `?apiKey=` and the page\'s origin.' },
  { name: 'Server', description: 'Called by your backend with the key\'s secret (or a request signed with it).' },
  { name: 'Classifier', description: 'Spam classification and its training data (docs/classifier.md).' },
  { name: 'Keys', description: 'API keys.' },
  { name: 'Operations', description: 'Health, metrics and logs, behind MONITORING_IP_WHITELIST / MONITORING_HTTP_CREDENTIALS.' },
  { name: 'Documentation', description: 'This documentation (API_DOCS_ENABLED).' },
];

const SECURITY_SCHEMES = {
  browserKey: {
    type: 'apiKey', in: 'query', name: 'apiKey',
    description: 'The key id (`key_…`). The request\'s Origin (else Referer) must match one of the key\'s hostnames, when it has any.',
  },
  bearerSecret: { type: 'http', scheme: 'bearer', bearerFormat: 'sec_…', description: '`Authorization: Bearer sec_…`: the key\'s secret.' },
  bearerKeyId: {
    type: 'http', scheme: 'bearer', bearerFormat: 'key_…',
    description: '`Authorization: Bearer key_…` with X-Hmac-Signature and X-Hmac-Signature-Salt: a request signed with the key\'s secret, ' +
      'which never travels (PROTOCOL.md section 4).',
  },
  hmacSignature: {
    type: 'apiKey', in: 'header', name: 'X-Hmac-Signature',
    description: 'hex(HMAC-SHA256(secret, salt + "\\n" + METHOD + "\\n" + path with APP_BASE_PATH and query + "\\n" + body)).',
  },
  hmacSignatureSalt: {
    type: 'apiKey', in: 'header', name: 'X-Hmac-Signature-Salt',
    description: '`<UNIX seconds>.<16 to 100 of A-Z a-z 0-9 _ ->`: accepted within 5 minutes of its time, once.',
  },
  altchaSolution: {
    type: 'apiKey', in: 'header', name: 'Authorization',
    description: '`Altcha <base64 solution>` of the challenge a 401 carries in WWW-Authenticate.',
  },
  monitoringBasic: {
    type: 'http', scheme: 'basic',
    description: 'MONITORING_HTTP_CREDENTIALS, when set; otherwise the client must be in MONITORING_IP_WHITELIST.',
  },
} as const;

const SECURITY: Record<Auth, Record<string, never[]>[] | undefined> = {
  browser: [{ browserKey: [] }],
  server: [{ bearerSecret: [] }, { bearerKeyId: [], hmacSignature: [], hmacSignatureSalt: [] }],
  m2m: [{ altchaSolution: [] }],
  monitoring: [{}, { monitoringBasic: [] }],
  none: undefined,
};

/** What the HTTP layer may answer any route (src/http/). */
const HTTP_ERRORS: readonly ErrorCode[] = ['BAD_REQUEST', 'HOST_NOT_ALLOWED', 'URI_TOO_LONG', 'HEADERS_TOO_LARGE', 'RATE_LIMITED', 'INTERNAL'];
/** What reading a JSON body may answer. */
const BODY_ERRORS: readonly ErrorCode[] = ['INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'BODY_TOO_LARGE', 'REQUEST_TIMEOUT'];
const AUTH_ERRORS: Record<Auth, readonly ErrorCode[]> = {
  browser: ['API_KEY_REQUIRED', 'API_KEY_INVALID', 'ORIGIN_NOT_ALLOWED', 'RATE_LIMITED'],
  server: ['AUTHORIZATION_REQUIRED', 'API_KEY_INVALID', 'INVALID_SIGNATURE', 'INVALID_SIGNATURE_SALT', 'SIGNATURE_SALT_EXPIRED',
    'SIGNATURE_SALT_REUSED', 'RATE_LIMITED'],
  m2m: ['RATE_LIMITED'],
  monitoring: ['MONITORING_FORBIDDEN', 'MONITORING_UNAUTHORIZED'],
  none: [],
};

/** Every code a route may answer, in catalogue order. */
export function routeErrors(route: RouteSpec): ErrorCode[] {
  const codes = new Set<ErrorCode>([...route.errors, ...AUTH_ERRORS[route.auth], ...HTTP_ERRORS]);
  if (route.body !== undefined) for (const c of BODY_ERRORS) codes.add(c);
  if (route.body !== undefined || route.query !== undefined) {
    codes.add(route.invalid ?? 'INVALID_PARAMETER');
    for (const schema of [route.body, route.query]) if (schema !== undefined) for (const c of errorsIn(schema)) codes.add(c);
  }
  return (Object.keys(ERRORS) as ErrorCode[]).filter((c) => codes.has(c));
}

/** The x-error codes anywhere in `schema`. */
function errorsIn(schema: unknown, out: ErrorCode[] = []): ErrorCode[] {
  if (Array.isArray(schema)) for (const s of schema) errorsIn(s, out);
  else if (typeof schema === 'object' && schema !== null) {
    for (const [k, v] of Object.entries(schema)) {
      if (k === 'x-error' && typeof v === 'string') out.push(v as ErrorCode);
      else errorsIn(v, out);
    }
  }
  return out;
}

/** The body of every error answer. */
export const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error', 'statusCode'],
  properties: {
    error: { $ref: '#/components/schemas/ErrorCode' },
    statusCode: { type: 'integer', minimum: 400, maximum: 599 },
    message: { type: 'string', description: 'What was wrong, for some 4xx answers; never a secret.' },
  },
  additionalProperties: false,
};

const errorSchema = (status: number, codes: readonly ErrorCode[]): JsonSchema => ({
  type: 'object',
  required: ['error', 'statusCode'],
  properties: {
    error: { type: 'string', enum: [...codes] },
    statusCode: { const: status },
    message: { type: 'string', description: 'What was wrong, for some 4xx answers; never a secret.' },
  },
  additionalProperties: false,
});

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer', minimum: 1 } } };

function responseObject(r: ResponseSpec): Record<string, unknown> {
  const out: Record<string, unknown> = { description: r.description };
  if (r.headers) out.headers = headersObject(r.headers);
  if (r.schema) out.content = { [r.contentType ?? 'application/json']: { schema: r.schema } };
  return out;
}

const headersObject = (headers: NonNullable<ResponseSpec['headers']>) =>
  Object.fromEntries(Object.entries(headers).map(([name, h]) => [name, { description: h.description, schema: h.schema }]));

/** The operation's responses: the route's own, and each error status with its codes. */
function responses(route: RouteSpec): Record<string, unknown> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [status, r] of Object.entries(route.responses)) out[status] = responseObject(r);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrors(route)) {
    const status = ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const list = codes.map((c) => `- \`${c}\`: ${ERRORS[c].message}`).join('\n');
    const own = out[status];
    const schema = errorSchema(status, codes);
    const ownSchema = route.responses[status]?.schema;
    out[status] = {
      description: own ? `${own.description as string}\n\n${list}` : list,
      ...(own?.headers || status === 429 ? { headers: { ...(own?.headers as object | undefined), ...(status === 429 ? RETRY_AFTER : {}) } } : {}),
      content: { 'application/json': { schema: ownSchema ? { oneOf: [ownSchema, schema] } : schema } },
    };
  }
  return out;
}

/** A query schema as OpenAPI parameters: one per property, one form-exploded object per family of names. */
function parameters(query: JsonSchema | undefined): unknown[] {
  if (query === undefined) return [];
  const required = new Set((query.required as string[] | undefined) ?? []);
  const out: unknown[] = [];
  for (const [name, schema] of Object.entries((query.properties as Record<string, JsonSchema> | undefined) ?? {})) {
    const { description, examples, ...rest } = schema;
    out.push({
      name, in: 'query', required: required.has(name), schema: rest,
      ...(description ? { description } : {}), ...(Array.isArray(examples) ? { example: examples[0] } : {}),
    });
  }
  for (const [pattern, schema] of Object.entries((query.patternProperties as Record<string, JsonSchema> | undefined) ?? {})) {
    const name = pattern.replace(/^\^/, '').replace(/\\\./g, '.').replace(/[^A-Za-z0-9_.-]/g, '').replace(/\.$/, '') || 'other';
    out.push({
      name, in: 'query', required: false, style: 'form', explode: true,
      description: `${(query.description as string | undefined) ?? ''}\n\nSent as separate query parameters, one per entry.`.trim(),
      schema: { type: 'object', propertyNames: query.propertyNames ?? { pattern }, additionalProperties: schema },
    });
  }
  return out;
}

function operation(route: RouteSpec): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
  };
  const params = parameters(route.query);
  if (params.length > 0) op.parameters = params;
  if (route.body !== undefined) {
    op.requestBody = {
      required: true,
      description: `JSON, at most ${route.bodyLimit ?? 'REQUEST_BODY_LIMIT'} bytes.`,
      content: { 'application/json': { schema: route.body } },
    };
  }
  op.responses = responses(route);
  const security = SECURITY[route.auth];
  if (security !== undefined) op.security = security;
  return op;
}

/** The document of `routes` (those registered in this instance). */
export function buildOpenApi(routes: readonly RouteSpec[], options: DocumentOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  const used = new Set(routes.map((r) => r.tag));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Palisade API',
      version: options.version,
      summary: 'Self-hosted, ALTCHA-compatible bot protection and spam classification.',
      description: 'Every error is answered `{"error": CODE, "statusCode": N}` (some 4xx add a `message`); each operation lists the codes ' +
        'it may answer, and `ErrorCode` below lists them all (docs/errors.md). Lengths count UTF-16 code units.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: options.basePath === '' ? '/' : options.basePath }],
    tags: TAGS.filter((t) => used.has(t.name)),
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: {
        Error: ERROR_SCHEMA,
        ErrorCode: {
          type: 'string',
          enum: Object.keys(ERRORS),
          description: Object.entries(ERRORS).map(([c, e]) => `- \`${c}\` (${e.status}): ${e.message}`).join('\n'),
        },
      },
    },
  };
}
