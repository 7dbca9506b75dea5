// Checking the JSON bodies and query parameters of the admin API: each function names the field it
// refuses (AdminError INVALID_PARAMETER), so a bad request never reaches the database.
import { invalid } from './context.js';

export type Body = Readonly<Record<string, unknown>>;

/** The body as a JSON object. */
export function object(value: unknown): Body {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) invalid('the body must be a JSON object');
  return value as Body;
}

/** Refuses fields outside `allowed` (a typo must not be silently ignored). */
export function only(body: Body, allowed: readonly string[]): void {
  for (const name of Object.keys(body)) if (!allowed.includes(name)) invalid(`unknown field "${name.slice(0, 64)}"`);
}

export function text(body: Body, name: string, opts: { max?: number; min?: number; optional: true }): string | undefined;
export function text(body: Body, name: string, opts?: { max?: number; min?: number; optional?: false }): string;
export function text(body: Body, name: string, opts: { max?: number; min?: number; optional?: boolean } = {}): string | undefined {
  const v = body[name];
  if (v === undefined && opts.optional) return undefined;
  if (typeof v !== 'string') return invalid(`${name} must be a string`);
  if (v.length < (opts.min ?? 1)) return invalid(`${name} must have at least ${opts.min ?? 1} characters`);
  if (v.length > (opts.max ?? 200)) return invalid(`${name} must have at most ${opts.max ?? 200} characters`);
  return v;
}

export function bool(body: Body, name: string): boolean | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') return invalid(`${name} must be true or false`);
  return v;
}

export function num(body: Body, name: string): number | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) return invalid(`${name} must be a number`);
  return v;
}

export function strings(body: Body, name: string, maxItems: number, maxLength: number): string[] | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length > maxItems || v.some((s) => typeof s !== 'string' || s.length > maxLength)) {
    return invalid(`${name} must be an array of at most ${maxItems} strings`);
  }
  return v as string[];
}

/** A query parameter: undefined when absent, else within `max` characters. */
export function param(query: URLSearchParams, name: string, max = 200): string | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (v.length > max) return invalid(`${name} is too long`);
  return v;
}

export function intParam(query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const v = param(query, name, 20);
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v) || Number(v) < min || Number(v) > max) return invalid(`${name} must be an integer from ${min} to ${max}`);
  return Number(v);
}

export function dateParam(query: URLSearchParams, name: string): Date | undefined {
  const v = param(query, name, 40);
  if (v === undefined) return undefined;
  const t = /^\d{1,15}$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(t) || t < 0 || t > 8.64e15) return invalid(`${name} must be an ISO date or epoch milliseconds`);
  return new Date(t);
}
