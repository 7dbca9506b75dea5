// Inputs derived from a JSON Schema, to hold a hand-written parser to the schema it is documented
// by: for each property, the values its schema names (examples, enum values, bounds and one past
// them) and values of every other type; non-objects; each required property missing; extra names.
// Which of them the schema accepts is decided by ajv, not guessed here.
import type { JsonSchema } from '../../src/api-schema/types.js';

type Schema = JsonSchema;

const HOSTILE_STRINGS = ['', ' ', 'a', 'x', 'é', 'Ab-_9.', '\u0000', 'a\nb', '\ud800', '\ud83d\ude00', '127.0.0.1', '::1', 'auto', 'list:eu', 'de', '__proto__'];
const OTHER_TYPES: unknown[] = [null, false, true, 0, 1, -1, 0.5, 1.5, 11, {}, [], ['x'], [1], { a: 'x' }, { a: 1 }];

/** Sub-schemas a value may match (anyOf / oneOf / allOf branches and the schema itself). */
function branches(s: Schema): Schema[] {
  const out = [s];
  for (const k of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(s[k])) for (const b of s[k] as Schema[]) out.push(...branches(b));
  return out;
}

/** Values around what `s` says: examples, enums, consts, bounds and one past each. */
export function valueCandidates(s: Schema, stringsOnly = false): unknown[] {
  const out: unknown[] = [...HOSTILE_STRINGS];
  if (!stringsOnly) out.push(...OTHER_TYPES);
  for (const b of branches(s)) {
    if (Array.isArray(b.examples)) out.push(...(b.examples as unknown[]));
    if (Array.isArray(b.enum)) out.push(...(b.enum as unknown[]).slice(0, 5), 'NOT_IN_THE_LIST');
    if ('const' in b) out.push(b.const);
    for (const k of ['maxLength', 'minLength'] as const) {
      const n = b[k];
      if (typeof n === 'number') for (const len of [n - 1, n, n + 1]) if (len >= 0) out.push('x'.repeat(len));
    }
    if (stringsOnly) continue;
    for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const) {
      const n = b[k];
      if (typeof n === 'number') out.push(n, n - 0.001, n + 0.001, n - 1, n + 1);
    }
    if (typeof b.items === 'object') {
      const item = b.items as Schema;
      for (const v of valueCandidates(item)) out.push([v]);
      const good = firstGood(item);
      if (typeof b.maxItems === 'number') for (const n of [b.maxItems, b.maxItems + 1]) out.push(Array.from({ length: n }, () => good));
    }
    const props = objectCandidates(b);
    out.push(...props);
  }
  return out;
}

/** Objects for a map-like schema (additionalProperties / propertyNames / maxProperties). */
function objectCandidates(s: Schema): unknown[] {
  if (s.additionalProperties === undefined && s.propertyNames === undefined && s.maxProperties === undefined) return [];
  const value = typeof s.additionalProperties === 'object' ? firstGood(s.additionalProperties as Schema) : 'x';
  const out: unknown[] = [{ a: value }, { a: 1 }, { a: null }, { a: {} }, { '\ud800': value }, { '': value }];
  const names = s.propertyNames as Schema | undefined;
  if (names && typeof names.maxLength === 'number') {
    for (const len of [names.maxLength, names.maxLength + 1]) out.push({ ['n'.repeat(len)]: value });
  }
  if (typeof s.maxProperties === 'number') {
    for (const n of [s.maxProperties, s.maxProperties + 1]) out.push(Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, value])));
  }
  return out;
}

/** A value `s` most likely accepts: its first example, else one of its type. */
function firstGood(s: Schema): unknown {
  for (const b of branches(s)) {
    if (Array.isArray(b.examples)) return (b.examples as unknown[])[0];
    if (Array.isArray(b.enum)) return (b.enum as unknown[])[0];
    if ('const' in b) return b.const;
  }
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'number' || type === 'integer') return typeof s.minimum === 'number' ? s.minimum : 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [];
  if (type === 'object') return {};
  if (type === 'null') return null;
  return 'x';
}

/**
 * Objects derived from an object schema: the smallest valid-looking one, then each property set to
 * each candidate, each required one dropped, names outside the properties added; for a query
 * (`strings`), values are strings only.
 */
export function objectCases(schema: Schema, options: { strings?: boolean } = {}): unknown[] {
  const strings = options.strings ?? false;
  const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
  const required = (schema.required as string[] | undefined) ?? [];
  const base: Record<string, unknown> = {};
  for (const name of required) base[name] = firstGood(properties[name] ?? {});
  const full: Record<string, unknown> = { ...base };
  for (const [name, s] of Object.entries(properties)) full[name] = firstGood(s);
  const cases: unknown[] = [base, full];
  if (!strings) cases.push(null, [], 'x', 1, true, [base]);
  for (const [name, s] of Object.entries(properties)) {
    for (const v of valueCandidates(s, strings)) cases.push({ ...base, [name]: v }, { ...full, [name]: v });
  }
  for (const name of required) {
    const without = { ...full };
    delete without[name];
    cases.push(without);
  }
  const extraValues = strings ? ['x', ''] : ['x', 1, null];
  for (const v of extraValues) cases.push({ ...base, unknownField: v });
  for (const [pattern, s] of Object.entries((schema.patternProperties as Record<string, Schema> | undefined) ?? {})) {
    const prefix = pattern.replace(/^\^/, '').replace(/\\\./g, '.').replace(/[^A-Za-z0-9_.-]/g, '');
    const names = ['a', 'A-z_9', '', 'bad name', '__proto__', 'constructor', 'prototype', 'x'.repeat(20), 'x'.repeat(21), 'é', '\u0000', 'a.b']
      .map((n) => prefix + n);
    for (const n of names) cases.push({ ...base, [n]: firstGood(s) });
    for (const v of valueCandidates(s, strings)) cases.push({ ...base, [`${prefix}name`]: v });
  }
  return cases;
}
