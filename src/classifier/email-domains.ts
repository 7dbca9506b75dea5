// Lists of e-mail domains and the one form a domain is compared in: lower-case ASCII (IDNA, so
// "bücher.de" is "xn--bcher-kva.de"), labels of letters, digits and inner hyphens, two labels at
// least. Two lists ship embedded:
//   - disposable domains: the `disposable-email-domains` npm package (MIT; index.json, about
//     121,000 domains, plus wildcard.json, whose entries count with every subdomain, as all
//     entries do here). A download from EMAIL_LIST_DISPOSABLE replaces it (classifier-lists.ts).
//   - free providers: the `email-providers` npm package (ISC; all.json, about 8,800 domains of
//     providers anyone can sign up with, from goware/emailproviders). It also holds about 3,000
//     disposable domains: the e-mail rules let DISPOSABLE win over FREE_PROVIDER.
// The embedded lists are built on first use (about 10 MB and 60 ms for the disposable one), so a
// process that never classifies an address never pays for them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { domainToASCII } from 'node:url';
import { ListFetchError } from '../lists/fetch-list.js';
import { gunzipIfGzip } from '../intel/user-agent-list.js';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The domain in its compared form, or null when it is none: IDNA to ASCII, lower case, at most
 * 253 characters, two labels or more, each 1–63 letters, digits or inner hyphens; a top-level
 * label of digits only (an IPv4 address) is refused.
 */
export function normalizeDomain(raw: string): string | null {
  if (raw.length === 0 || raw.length > 253 * 4) return null;
  const ascii = domainToASCII(raw);
  if (ascii === '' || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2) return null;
  for (const label of labels) if (!LABEL.test(label)) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return null;
  return ascii;
}

/** An immutable set of domains; `match` also finds a listed parent (sub.mailinator.com → mailinator.com). */
export class DomainList {
  readonly #domains: ReadonlySet<string>;

  constructor(domains: Iterable<string>) {
    this.#domains = domains instanceof Set ? domains : new Set(domains);
  }

  static readonly EMPTY = new DomainList([]);

  /** One normalised domain per line; blank lines, `#` comments and invalid lines are skipped. */
  static fromText(text: string): DomainList {
    return new DomainList(parseDomainLines(text).domains);
  }

  get size(): number { return this.#domains.size; }

  /** Listed exactly. */
  has(domain: string): boolean {
    return this.#domains.has(domain);
  }

  /** The listed domain that is `domain` or one of its parents (two labels at least), or null. */
  match(domain: string): string | null {
    let at = 0;
    let candidate = domain;
    for (;;) {
      if (this.#domains.has(candidate)) return candidate;
      at = domain.indexOf('.', at) + 1;
      if (at === 0) return null;
      candidate = domain.slice(at);
      if (candidate.indexOf('.') < 0) return null;
    }
  }
}

interface ParsedLines {
  readonly domains: Set<string>;
  /** Lines that were neither blank, a comment nor a domain. */
  readonly invalid: number;
}

/** Each line: a domain (a leading `*.` or `.` is dropped: subdomains match anyway), a `#` comment or blank. */
function parseDomainLines(text: string): ParsedLines {
  const domains = new Set<string>();
  let invalid = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let line = text.slice(start, end).trim();
    start = end + 1;
    const hash = line.indexOf('#');
    if (hash >= 0) line = line.slice(0, hash).trim();
    if (line === '') continue;
    if (line.startsWith('*.')) line = line.slice(2);
    else if (line.startsWith('.')) line = line.slice(1);
    const domain = normalizeDomain(line);
    if (domain === null) invalid++;
    else domains.add(domain);
  }
  return { domains, invalid };
}

/**
 * A disposable-domain download → the file kept (ListSource.prepare): the valid domains, one per
 * line, normalised and without duplicates. Gzip is unpacked (at most `maxUnpacked` bytes).
 * Refused as 'invalid' when it holds no domain, or more invalid lines than domains (an HTML page
 * or another format).
 */
export function prepareDisposableList(body: Buffer, maxUnpacked: number): { data: Buffer; entries: number } {
  const { domains, invalid } = parseDomainLines(gunzipIfGzip(body, maxUnpacked).toString('utf8'));
  if (domains.size === 0) throw new ListFetchError('invalid', 'no domains');
  if (invalid > domains.size) throw new ListFetchError('invalid', `${invalid} lines are not domains, ${domains.size} are`);
  return { data: Buffer.from(`${[...domains].join('\n')}\n`, 'utf8'), entries: domains.size };
}

let embeddedDisposable: DomainList | undefined;
let embeddedFree: DomainList | undefined;

/** The disposable domains of the `disposable-email-domains` package (index.json and wildcard.json). */
export function embeddedDisposableDomains(): DomainList {
  embeddedDisposable ??= new DomainList(packageDomains('disposable-email-domains', ['index.json', 'wildcard.json']));
  return embeddedDisposable;
}

/** The free-provider domains of the `email-providers` package (all.json). */
export function embeddedFreeProviders(): DomainList {
  embeddedFree ??= new DomainList(packageDomains('email-providers', ['all.json']));
  return embeddedFree;
}

function packageDomains(pkg: string, files: readonly string[]): Set<string> {
  const require = createRequire(import.meta.url);
  const out = new Set<string>();
  for (const file of files) {
    const list = JSON.parse(readFileSync(require.resolve(`${pkg}/${file}`), 'utf8')) as unknown;
    if (!Array.isArray(list)) throw new Error(`${pkg}/${file} is not a JSON array`);
    for (const item of list) {
      if (typeof item !== 'string') continue;
      // The packages hold lower-case ASCII domains: only the rare other one pays for IDNA.
      const domain = /^[a-z0-9.-]+$/.test(item) && item.includes('.') ? item : normalizeDomain(item);
      if (domain !== null) out.add(domain);
    }
  }
  return out;
}
