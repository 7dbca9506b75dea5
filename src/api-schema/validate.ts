// The routes' request validation: each RouteSpec's query and body schemas compiled once with ajv
// (JSON Schema 2020-12) into a check that throws the PalisadeError the route answers with. The same
// schemas are the OpenAPI document's (openapi.ts), so what the document says is what is refused.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { PalisadeError, type ErrorCode } from '../errors.js';
import type { JsonSchema, RouteSpec } from './types.js';

/** Our annotations (types.ts) and OpenAPI's own, which validators ignore. */
const ANNOTATIONS = ['x-message', 'x-error', 'example', 'externalDocs', 'xml', 'discriminator'];

/** ajv's console, without its notice that `unicode: false` is deprecated (it still works, and is what we mean). */
const QUIET_ABOUT_UNICODE = {
  log: console.log,
  warn: (...args: unknown[]) => {
    if (!String(args[0]).startsWith('DEPRECATED: option unicode')) console.warn(...args);
  },
  error: console.error,
};

/**
 * An ajv for the API's schemas. Lengths count UTF-16 code units (String.length), as everywhere
 * else in the service, rather than code points.
 */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: false, unicode: false, logger: QUIET_ABOUT_UNICODE });
  (addFormatsPlugin as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addVocabulary(ANNOTATIONS);
  return ajv;
}

let shared: Ajv2020 | null = null;
/** The one instance the routes compile with. */
export function apiAjv(): Ajv2020 {
  return (shared ??= createAjv());
}

/** Throws the route's PalisadeError for a value its schema refuses. */
export type Check = (value: unknown) => void;

/** The check of `spec`'s body (nothing to check when it has none). */
export function bodyCheck(spec: RouteSpec): Check {
  if (spec.body === undefined) throw new Error(`${spec.method} ${spec.path} has no body schema`);
  return compileCheck(spec.body, spec.invalid ?? 'INVALID_PARAMETER', 'the body');
}

/** The check of `spec`'s query: `query` is turned into an object, the first value of each name. */
export function queryCheck(spec: RouteSpec): (query: URLSearchParams) => void {
  if (spec.query === undefined) throw new Error(`${spec.method} ${spec.path} has no query schema`);
  const check = compileCheck(spec.query, spec.invalid ?? 'INVALID_PARAMETER', 'the query');
  return (query) => check(queryObject(query));
}

/** The query as the object its schema describes: the first value of each name wins. */
export function queryObject(query: URLSearchParams): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [name, value] of query) if (!(name in out)) out[name] = value;
  return out;
}

/** A check of `schema`: refused values throw `fallback` (or the value's x-error) with its x-message. */
export function compileCheck(schema: JsonSchema, fallback: ErrorCode, what: string): Check {
  const validate: ValidateFunction = apiAjv().compile(schema);
  return (value) => {
    if (validate(value)) return;
    const error = validate.errors![0]!;
    const { code, message } = explain(schema, error, fallback, what);
    throw new PalisadeError(code, message);
  };
}

/**
 * The code and message of ajv's first error: the deepest `x-error` and `x-message` on the way from
 * the root schema to the refused value (a missing property's own schema included; the root's only
 * for the whole value), else the route's code and ajv's words.
 */
export function explain(root: JsonSchema, error: ErrorObject, fallback: ErrorCode, what: string): { code: ErrorCode; message: string } {
  const path = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let unknown: string | null = null;
  if (error.keyword === 'required') path.push(String(error.params.missingProperty));
  else if (error.keyword === 'additionalProperties') unknown = String(error.params.additionalProperty);
  let code = fallback;
  let message: string | null = null;
  let schema: JsonSchema | undefined = root;
  const note = (s: JsonSchema) => {
    if (typeof s['x-error'] === 'string') code = s['x-error'] as ErrorCode;
    if (typeof s['x-message'] === 'string') message = s['x-message'];
  };
  // The root's annotations speak of the body (or query) as a whole, not of what is inside it (an
  // unknown field included: it gets the route's code).
  if (path.length === 0 && unknown === null) note(root);
  for (const segment of path) {
    schema = schema === undefined ? undefined : child(schema, segment);
    if (schema === undefined) break;
    note(schema);
  }
  const field = path.length === 0 ? what : path.join('.');
  if (unknown !== null) return { code, message: `unknown field ${JSON.stringify(unknown.slice(0, 40))}` };
  return { code, message: message ?? `${field} ${error.message ?? 'is not valid'}` };
}

/** The schema of `segment` (a property name or an array index) under `schema`, when it says. */
function child(schema: JsonSchema, segment: string): JsonSchema | undefined {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties !== undefined && Object.hasOwn(properties, segment)) return properties[segment];
  const patterns = schema.patternProperties as Record<string, JsonSchema> | undefined;
  if (patterns !== undefined) {
    for (const [pattern, s] of Object.entries(patterns)) if (new RegExp(pattern, 'u').test(segment)) return s;
  }
  if (/^\d+$/.test(segment) && typeof schema.items === 'object') return schema.items as JsonSchema;
  if (typeof schema.additionalProperties === 'object') return schema.additionalProperties as JsonSchema;
  return undefined;
}
