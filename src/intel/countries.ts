// Country codes and the named country lists a key's policy may use (`list:eu`, `list:sanctioned`),
// from one data file (countries.json, which names the source of each list).
import { readFileSync } from 'node:fs';

interface CountryData {
  readonly codes: string;
  readonly lists: Readonly<Record<string, string>>;
}

const data = JSON.parse(readFileSync(new URL('../../../src/intel/countries.json', import.meta.url), 'utf8')) as CountryData;

export const COUNTRY_CODES: ReadonlySet<string> = new Set(data.codes.split(/\s+/));
export const COUNTRY_LISTS: Readonly<Record<string, readonly string[]>> = Object.freeze(
  Object.fromEntries(Object.entries(data.lists).map(([name, codes]) => [name, Object.freeze(codes.split(/\s+/))])),
);

/**
 * Expands ISO codes (any case) and `list:<name>` into a set of upper-case codes; `bad` receives
 * every entry that is neither.
 */
export function expandCountries(entries: readonly unknown[], bad: string[]): Set<string> {
  const out = new Set<string>();
  for (const e of entries) {
    if (typeof e !== 'string') { bad.push(String(e)); continue; }
    if (e.startsWith('list:')) {
      const list = COUNTRY_LISTS[e.slice(5)];
      if (list === undefined) bad.push(e);
      else for (const c of list) out.add(c);
      continue;
    }
    const code = e.toUpperCase();
    if (COUNTRY_CODES.has(code)) out.add(code);
    else bad.push(e);
  }
  return out;
}
