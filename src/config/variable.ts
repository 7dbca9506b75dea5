// One configuration variable: its default as the raw string a user would write, its parser, its
// meaning and its documentation group; and the parsers several concerns share. A parser throws a
// plain Error whose message says what is wrong (load.ts collects them into one report).
import {
  type CidrList, parseBoolean, parseCidrList, parseCron, parseDuration, parseInteger, parseList, parseSize,
} from '../parse.js';

export type Parser<T> = (raw: string) => T;

export interface VarSpec<T> {
  /** Default as the raw string a user would write ('' = empty/unset). */
  readonly def: string;
  readonly parse: Parser<T>;
  readonly doc: string;
  /** Never print the value (secrets, credentials, URLs with passwords). */
  readonly secret?: boolean;
  /** Where the variable groups in the documentation. */
  readonly group: string;
}

export function v<T>(group: string, def: string, parse: Parser<T>, doc: string, secret = false): VarSpec<T> {
  return { group, def, parse, doc, secret };
}

/** The parsed values so far, by variable name (a variable whose value was refused is absent). */
export type Values = Readonly<Record<string, unknown>>;

/** A rule across variables: the problems it finds in `values`, none when they agree. */
export type Check = (values: Values) => string[];

export const str: Parser<string> = (s) => s;
export const optional = (s: string): string | null => (s === '' ? null : s);
export const bool: Parser<boolean> = parseBoolean;
export const ms: Parser<number> = (s) => parseDuration(s, 'ms');
export const secs: Parser<number> = (s) => parseDuration(s, 's');
export const size: Parser<number> = parseSize;
export const optSize: Parser<number | null> = (s) => (s.trim() === '' ? null : parseSize(s));
export const uint = (min = 0, max = 2 ** 31 - 1): Parser<number> => (s) => parseInteger(s, min, max);
export const optUint = (min = 0, max = 2 ** 31 - 1): Parser<number | null> => (s) => (s.trim() === '' ? null : parseInteger(s, min, max));
export const list: Parser<string[]> = parseList;
export const cidrs: Parser<CidrList> = parseCidrList;
export const cron: Parser<string | null> = (s) => (s.trim() === '' ? null : parseCron(s));
export const oneOf = <T extends string>(...values: T[]): Parser<T> => (s) => {
  const x = s.trim() as T;
  if (!values.includes(x)) throw new Error(`"${s}" is not one of ${values.join(', ')}`);
  return x;
};
export const url: Parser<string | null> = (s) => {
  if (s.trim() === '') return null;
  try { new URL(s); } catch { throw new Error('is not a URL'); }
  return s.trim();
};
