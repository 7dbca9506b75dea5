// The body of POST /v1/classifier (docs/classifier.md), validated once into a ClassifierRequest.
// Field names follow ALTCHA's classifier (SENTINEL-NOTES.md section 1.2) so that integrations
// written for it work unchanged. Every problem is a 400 INVALID_PARAMETER naming the field.
import { isIP } from 'node:net';
import { PalisadeError } from '../errors.js';
import { expandCountries } from '../intel/countries.js';
import { isObject } from '../pow/payload.js';

export interface ClassifierRequest {
  /** The `text` values and the `fields` values, in order, lone surrogates replaced by U+FFFD. */
  readonly texts: readonly string[];
  /** The names of `fields`, in order (empty without fields). */
  readonly fieldNames: readonly string[];
  readonly email: string | null;
  /** 'auto' (the requester), an address, or null (no IP analysis). */
  readonly ipAddress: 'auto' | string | null;
  readonly timeZone: string | null;
  readonly expectedLanguages: readonly string[] | null;
  readonly expectedCountries: ReadonlySet<string> | null;
  readonly blockedCountries: ReadonlySet<string> | null;
  readonly disableRules: ReadonlySet<string>;
  readonly classifier: string | null;
  /** A User-Agent to judge (the device block); null without one. */
  readonly userAgent: string | null;
}

export const CLASSIFIER_REQUEST_LIMITS = Object.freeze({
  /** Strings in `text`. */
  maxTexts: 100,
  /** Entries of `fields`. */
  maxFields: 200,
  maxFieldName: 100,
  maxEmail: 320,
  maxListEntries: 300,
  maxUserAgent: 1000,
});

/** IANA zone names: Area/Location with letters, digits, _ + - (Etc/GMT+5). */
export const TIME_ZONE = /^[A-Za-z0-9_+\-/]{1,64}$/;
const LANGUAGE = /^[a-z]{2}$/;

export interface ParseOptions {
  /** Every rule name the classifier knows (disableRules must name only these). */
  readonly ruleNames: ReadonlySet<string>;
  /** Language models `classifier` may enforce. */
  readonly classifiers: ReadonlySet<string>;
}

/** Lone surrogates (JSON's "\ud800") become U+FFFD: the rules and the signed fieldsHash see well-formed text. */
const wellFormed = (s: string): string => (s as unknown as { toWellFormed(): string }).toWellFormed();
const bad = (message: string): PalisadeError => new PalisadeError('INVALID_PARAMETER', message);
const shown = (names: readonly string[]): string => names.slice(0, 10).map((n) => JSON.stringify(n.slice(0, 40))).join(', ');

export function parseClassifierRequest(body: unknown, options: ParseOptions): ClassifierRequest {
  if (!isObject(body)) throw bad('the body must be a JSON object');
  const L = CLASSIFIER_REQUEST_LIMITS;
  const texts: string[] = [];
  const text = body.text;
  if (typeof text === 'string') texts.push(wellFormed(text));
  else if (Array.isArray(text)) {
    if (text.length > L.maxTexts) throw bad(`text holds at most ${L.maxTexts} strings`);
    for (const t of text) {
      if (typeof t !== 'string') throw bad('text must be a string or an array of strings');
      texts.push(wellFormed(t));
    }
  } else if (text !== undefined && text !== null) throw bad('text must be a string or an array of strings');

  const fieldNames: string[] = [];
  const fields = body.fields;
  if (fields !== undefined && fields !== null) {
    if (!isObject(fields)) throw bad('fields must be an object of strings');
    for (const name in fields) {
      if (fieldNames.length === L.maxFields) throw bad(`fields holds at most ${L.maxFields} entries`);
      const value = fields[name];
      if (typeof value !== 'string') throw bad(`fields.${JSON.stringify(name.slice(0, 40))} must be a string (nested objects and arrays are not accepted)`);
      if (name.length > L.maxFieldName) throw bad(`field names are at most ${L.maxFieldName} characters`);
      fieldNames.push(wellFormed(name));
      texts.push(wellFormed(value));
    }
  }

  const email = optionalString(body, 'email', L.maxEmail);
  let ipAddress: string | null = null;
  const ip = body.ipAddress;
  if (ip === 'auto') ipAddress = 'auto';
  else if (typeof ip === 'string') {
    if (isIP(ip) === 0) throw bad('ipAddress must be "auto", an IPv4 or IPv6 address, or false');
    ipAddress = ip;
  } else if (ip !== undefined && ip !== null && ip !== false) throw bad('ipAddress must be "auto", an IPv4 or IPv6 address, or false');

  const timeZone = optionalString(body, 'timeZone', 64);
  if (timeZone !== null && !TIME_ZONE.test(timeZone)) throw bad('timeZone must be an IANA time zone name');

  let expectedLanguages: string[] | null = null;
  const langs = stringList(body, 'expectedLanguages', L.maxListEntries);
  if (langs !== null) {
    // "en-GB" → "en", as the widget sends the html lang attribute's first part.
    expectedLanguages = [...new Set(langs.map((l) => l.split('-', 1)[0]!.toLowerCase()))];
    const wrong = expectedLanguages.filter((l) => !LANGUAGE.test(l));
    if (wrong.length > 0) throw bad(`expectedLanguages must be ISO 639-1 codes: ${shown(wrong)}`);
  }

  const disabled = stringList(body, 'disableRules', 1000) ?? [];
  const unknown = disabled.filter((r) => !options.ruleNames.has(r));
  if (unknown.length > 0) throw bad(`disableRules names unknown rules: ${shown(unknown)}`);

  const classifier = optionalString(body, 'classifier', 16);
  if (classifier !== null && !options.classifiers.has(classifier)) {
    throw bad(`classifier must be one of ${[...options.classifiers].join(', ')}`);
  }

  return {
    texts, fieldNames, email, ipAddress, timeZone, expectedLanguages,
    expectedCountries: countries(body, 'expectedCountries'),
    blockedCountries: countries(body, 'blockedCountries'),
    disableRules: new Set(disabled),
    classifier,
    userAgent: optionalString(body, 'userAgent', L.maxUserAgent),
  };
}

function optionalString(body: Record<string, unknown>, name: string, max: number): string | null {
  const v = body[name];
  if (v === undefined || v === null || v === false) return null;
  if (typeof v !== 'string') throw bad(`${name} must be a string`);
  if (v.length > max) throw bad(`${name} is at most ${max} characters`);
  return wellFormed(v);
}

function stringList(body: Record<string, unknown>, name: string, max: number): string[] | null {
  const v = body[name];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.length > max || !v.every((e) => typeof e === 'string' && e.length <= 100)) {
    throw bad(`${name} must be an array of at most ${max} short strings`);
  }
  return v as string[];
}

function countries(body: Record<string, unknown>, name: string): ReadonlySet<string> | null {
  const list = stringList(body, name, CLASSIFIER_REQUEST_LIMITS.maxListEntries);
  if (list === null) return null;
  const wrong: string[] = [];
  const set = expandCountries(list, wrong);
  if (wrong.length > 0) throw bad(`${name}: unknown country codes or lists: ${shown(wrong)}`);
  return set;
}
