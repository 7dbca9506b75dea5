// Hostnames of API keys and the origin of browser requests (PROTOCOL.md section 4).
//
// Matching rules (docs/data.md): comparison is case-insensitive and ignores scheme and port. An
// entry `example.com` matches exactly that host. `*.example.com` matches every sub-domain at any
// depth (`a.example.com`, `a.b.example.com`) but NOT the apex `example.com`: list the apex as well
// when it should be accepted, as with TLS wildcard certificates. A key without hostnames accepts
// any origin.
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/**
 * A hostname for which a free key may be generated: a real DNS name with at least two labels, an
 * alphabetic (or punycode) TLD, no IP address, no wildcard, at most 253 characters. Unicode names
 * are converted to punycode. Returns the lower-case ASCII form, or null.
 */
export function normalizeDnsHostname(input: unknown): string | null {
  if (typeof input !== 'string' || input.length === 0 || input.length > 253) return null;
  // Control characters and spaces first: domainToASCII would silently strip some of them.
  // eslint-disable-next-line no-control-regex
  if (isIP(input) !== 0 || input.includes('*') || /[\x00-\x20\x7f]/.test(input)) return null;
  // eslint-disable-next-line no-control-regex
  const ascii = /^[\x21-\x7e]+$/.test(input) ? input.toLowerCase() : domainToASCII(input);
  if (ascii === '' || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2) return null;
  for (const label of labels) if (!LABEL.test(label)) return null;
  if (!TLD.test(labels[labels.length - 1]!)) return null;
  return ascii;
}

/**
 * An entry of a key's hostname list (CLI and admin): a DNS name (single labels such as `localhost`
 * allowed), `*.` + a name of at least two labels, or an IP address. Returns the normalised entry or null.
 */
export function normalizeKeyHostname(input: string): string | null {
  const text = input.trim().toLowerCase();
  if (text.length === 0 || text.length > 253) return null;
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIP(bare) !== 0) return bare;
  const wildcard = text.startsWith('*.');
  const name = wildcard ? text.slice(2) : text;
  const labels = name.split('.');
  if (wildcard && labels.length < 2) return null;
  for (const label of labels) if (!LABEL.test(label)) return null;
  return text;
}

/** Does `host` (lower case, no port, IPv6 without brackets) match one of `hostnames`? */
export function hostMatches(hostnames: readonly string[], host: string): boolean {
  for (const entry of hostnames) {
    if (entry === host) return true;
    if (entry.charCodeAt(0) === 42 /* * */ && host.length > entry.length - 1 && host.endsWith(entry.slice(1))) {
      return true;
    }
  }
  return false;
}

export interface RequestOrigin {
  /** `https://example.com` or `https://example.com:8443`: the referrer bucket for usage. */
  readonly origin: string;
  /** Lower-case host without port; IPv6 without brackets. */
  readonly host: string;
}

/**
 * The origin of a browser request: the `Origin` header, else `Referer`. Only http(s) URLs with a
 * plain host count; `Origin: null`, credentials in the URL, or anything malformed give null.
 */
export function requestOrigin(headers: Readonly<Record<string, string>>): RequestOrigin | null {
  const origin = headers.origin;
  if (origin !== undefined && origin !== '' && origin !== 'null') return parseOrigin(origin);
  const referer = headers.referer;
  if (referer !== undefined && referer !== '') return parseOrigin(referer);
  return null;
}

const HOST_CHARS = /^[a-z0-9.-]+$/;
const PORT = /^\d{1,5}$/;

/** Scheme, host and port of an absolute http(s) URL, without allocating a URL object. */
export function parseOrigin(url: string): RequestOrigin | null {
  if (url.length > 2048) return null;
  const sep = url.indexOf('://');
  if (sep < 0) return null;
  const scheme = url.slice(0, sep).toLowerCase();
  if (scheme !== 'https' && scheme !== 'http') return null;
  let end = url.length;
  for (let i = sep + 3; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) { end = i; break; }
  }
  const authority = url.slice(sep + 3, end).toLowerCase();
  if (authority.length === 0 || authority.includes('@')) return null;
  let host: string;
  let port = '';
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) return null;
    host = authority.slice(1, close);
    if (isIP(host) !== 6) return null;
    const rest = authority.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':') || !PORT.test(rest.slice(1))) return null;
      port = rest.slice(1);
    }
  } else {
    const colon = authority.lastIndexOf(':');
    host = colon < 0 ? authority : authority.slice(0, colon);
    if (colon >= 0) {
      port = authority.slice(colon + 1);
      if (!PORT.test(port)) return null;
    }
    if (host.endsWith('.')) host = host.slice(0, -1);
    if (!HOST_CHARS.test(host) || host.startsWith('.') || host.includes('..')) return null;
  }
  if (port !== '' && Number(port) > 65535) return null;
  const defaultPort = scheme === 'https' ? '443' : '80';
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { origin: `${scheme}://${shownHost}${port === '' || port === defaultPort ? '' : `:${port}`}`, host };
}
