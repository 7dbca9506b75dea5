// The phishing list a serving process matches URLs against (the text rules' URL_PHISHING): the file
// the primary keeps in DATA_DIR/lists/phishing.tsv (phishing-csv.ts writes it), or nothing: no
// list ships embedded, and an empty list matches nothing.
//
// A URL is compared in a normalised form, its key: host (lower case, IDN as punycode, without a
// trailing dot) and port unless the default, then the path without trailing slashes, then the
// query; no scheme (http and https of one URL are the same phish), no user name or password
// (http://bank.example@evil.example/ is on evil.example), no fragment. A URL matches
//   1. a listed URL with the same key, or
//   2. a listed URL without a query and the same key up to the query (?utm=… does not hide it), or
//   3. a listed bare root (http://evil.example/ : no path, no query) of its host or of a parent host.
// A listed URL with a path flags only itself: a phish at sites.google.com/view/x says nothing
// about the rest of sites.google.com, let alone google.com. A bare root flags its host and what is
// below it, never a parent; "www." in front of a registrable domain is dropped (www.evil.example
// flags evil.example). A root that is a public suffix, ICANN or private (github.io, blogspot.com,
// co.uk: tldts with private domains) flags nothing by host, since its subdomains belong to
// unrelated owners; it still matches itself as a URL (rule 1).
import { readFile } from 'node:fs/promises';
import { parse as parseHost } from 'tldts';
import type { PhishingEntry, PhishingMatcher } from './types.js';

/** URLs longer than this are not looked at (no listed phish is that long; bounds the work). */
const MAX_URL = 8192;

export interface PhishingKey {
  /** host[:port]/path?query, as described above. */
  readonly key: string;
  /** The key without its query ('' when it has none). */
  readonly withoutQuery: string;
  readonly host: string;
  /** No path and no query. */
  readonly root: boolean;
}

/** The key of an http(s) URL (a URL without scheme is taken as http://), or null for anything else. */
export function phishingKey(raw: string): PhishingKey | null {
  let s = raw.trim();
  if (s.length === 0 || s.length > MAX_URL) return null;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(s)) s = `http://${s}`;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  let host = url.hostname;
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return null;
  let end = url.pathname.length;
  while (end > 0 && url.pathname.charCodeAt(end - 1) === 0x2f) end--;
  const base = `${host}${url.port === '' ? '' : `:${url.port}`}${url.pathname.slice(0, end)}`;
  const query = url.search;
  return { key: `${base}${query}`, withoutQuery: query === '' ? '' : base, host, root: end === 0 && query === '' };
}

export class PhishingList implements PhishingMatcher {
  readonly #byKey = new Map<string, number>();
  readonly #byRootHost = new Map<string, number>();
  readonly #ids: string[] = [];
  readonly #targets: (string | null)[] = [];
  readonly #submitted: (number | null)[] = [];

  /** `text`: the kept file, `id TAB submittedAt TAB target TAB url` per line; bad lines are skipped. */
  constructor(text: string) {
    const targets = new Map<string, string>();
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const line = text.slice(start, end);
      start = end + 1;
      const t1 = line.indexOf('\t');
      const t2 = line.indexOf('\t', t1 + 1);
      const t3 = line.indexOf('\t', t2 + 1);
      if (t1 <= 0 || t2 < 0 || t3 < 0) continue;
      const key = phishingKey(line.slice(t3 + 1));
      if (key === null || this.#byKey.has(key.key)) continue;
      const row = this.#ids.length;
      this.#ids.push(line.slice(0, t1));
      const submitted = t2 > t1 + 1 ? Number(line.slice(t1 + 1, t2)) : NaN;
      this.#submitted.push(Number.isFinite(submitted) ? submitted : null);
      const target = line.slice(t2 + 1, t3);
      // A few dozen distinct targets: one string each, not one per row.
      let shared = targets.get(target);
      if (shared === undefined) { shared = target; targets.set(target, target); }
      this.#targets.push(shared === '' ? null : shared);
      this.#byKey.set(key.key, row);
      if (key.root) {
        const host = rootHost(key.host);
        if (host !== null && !this.#byRootHost.has(host)) this.#byRootHost.set(host, row);
      }
    }
  }

  static readonly EMPTY = new PhishingList('');

  get size(): number { return this.#ids.length; }

  match(url: string): PhishingEntry | null {
    if (this.#ids.length === 0) return null;
    const key = phishingKey(url);
    if (key === null) return null;
    let row = this.#byKey.get(key.key);
    if (row === undefined && key.withoutQuery !== '') row = this.#byKey.get(key.withoutQuery);
    if (row === undefined && this.#byRootHost.size > 0) {
      let host = key.host;
      // An IP address (v6 in brackets, v4 ending in a digit: WHATWG URL hosts) has no parents.
      const ip = host.charCodeAt(0) === 0x5b || isDigit(host.charCodeAt(host.length - 1));
      for (;;) {
        row = this.#byRootHost.get(host);
        if (row !== undefined || ip) break;
        const dot = host.indexOf('.');
        if (dot < 0) break;
        host = host.slice(dot + 1);
      }
    }
    if (row === undefined) return null;
    return { id: this.#ids[row]!, target: this.#targets[row]!, submittedAt: this.#submitted[row]! };
  }
}

/** The host a listed bare root flags (with its subdomains), or null when it must flag none. */
function rootHost(host: string): string | null {
  const parsed = parseHost(host, { allowPrivateDomains: true });
  if (parsed.isIp) return host;
  if (parsed.domain === null) return null;
  const sub = parsed.subdomain ?? '';
  if (sub === 'www') return parsed.domain;
  return host;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Reads the kept file; an absent file is the empty list. */
export async function loadPhishingList(path: string): Promise<PhishingList> {
  try {
    return new PhishingList(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return PhishingList.EMPTY;
    throw err;
  }
}
