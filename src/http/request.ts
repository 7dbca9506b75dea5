// The RequestContext handed to route handlers: everything copied out of uWS before the first await.
import { PalisadeError } from '../errors.js';
import { nestsDeeper } from '../json-depth.js';
import type { RequestContext, UsageMark } from './types.js';

export class Request implements RequestContext {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: Record<string, string>;
  readonly ip: string;
  readonly startedAt: number;
  body: Buffer | null = null;
  authorizedKey: { readonly id: string; readonly accountId: string } | null = null;
  usage: UsageMark | null = null;
  clientSignals: RequestContext['clientSignals'] = null;
  #query: URLSearchParams | undefined;

  constructor(method: string, path: string, rawQuery: string, headers: Record<string, string>, ip: string, startedAt: number) {
    this.method = method;
    this.path = path;
    this.rawQuery = rawQuery;
    this.headers = headers;
    this.ip = ip;
    this.startedAt = startedAt;
  }

  get query(): URLSearchParams {
    this.#query ??= new URLSearchParams(this.rawQuery);
    return this.#query;
  }

  json(): unknown {
    const type = this.headers['content-type'];
    if (type !== undefined && !isJsonType(type)) throw new PalisadeError('UNSUPPORTED_MEDIA_TYPE');
    if (this.body === null || this.body.length === 0) throw new PalisadeError('INVALID_JSON', 'The body is empty.');
    return parseJson(this.body);
  }
}

/** application/json, application/*+json and text/plain (sendBeacon-style posts) with any parameters. */
function isJsonType(type: string): boolean {
  if (type === 'application/json') return true; // what the widget and the client libraries send
  const t = type.split(';', 1)[0]!.trim().toLowerCase();
  return t === 'application/json' || t === 'text/plain' || (t.startsWith('application/') && t.endsWith('+json'));
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Deepest nesting accepted. Our bodies nest two levels; V8 takes 5-30 ms to parse 64 KB of nested
 * brackets, so without this a few dozen such bodies a second stall a worker
 * (test/reliability/hostile-http.test.ts). The scan costs about a microsecond per kilobyte.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Strict JSON: invalid UTF-8, JSON errors and nesting deeper than MAX_JSON_DEPTH are a 400, never a
 * crash; `__proto__` keys stay plain data (JSON.parse defines them as own properties).
 */
export function parseJson(body: Buffer): unknown {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw new PalisadeError('INVALID_JSON', 'The body is not valid UTF-8.');
  }
  if (text.length > 2 * MAX_JSON_DEPTH && nestsDeeper(text, MAX_JSON_DEPTH)) {
    throw new PalisadeError('INVALID_JSON', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new PalisadeError('INVALID_JSON');
  }
}
