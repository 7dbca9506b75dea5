// Hosts of the links the scanner found: URL shorteners (vocabularies/shorteners.txt) and the
// phishing list (someone else's PhishingMatcher), asked about at most MAX_CHECKED_URLS links.
import { readFileSync } from 'node:fs';
import type { PhishingMatcher } from '../types.js';
import { VOCABULARY_DIR } from './lexicon.js';

export interface Shorteners {
  /** Hosts matched exactly. */
  readonly hosts: ReadonlySet<string>;
  /** Domains whose every subdomain is a shortener ("page.link"). */
  readonly domains: ReadonlySet<string>;
}

export function loadShorteners(): Shorteners {
  const hosts = new Set<string>();
  const domains = new Set<string>();
  for (const raw of readFileSync(new URL('shorteners.txt', VOCABULARY_DIR), 'utf8').split('\n')) {
    const line = raw.trim().toLowerCase();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('.')) domains.add(line.slice(1));
    else hosts.add(line);
  }
  return { hosts, domains };
}

/** Lower-case host of a link as the scanner cut it ("https://user@Bit.ly:443/x" → "bit.ly"). */
export function linkHost(link: string): string {
  let start = link.indexOf('://');
  start = start < 0 ? 0 : start + 3;
  let end = start;
  while (end < link.length) {
    const c = link.charCodeAt(end);
    if (c === 0x2f || c === 0x3f || c === 0x23) break; // / ? #
    end++;
  }
  let host = link.slice(start, end);
  const at = host.lastIndexOf('@');
  if (at >= 0) host = host.slice(at + 1);
  const colon = host.indexOf(':');
  if (colon >= 0) host = host.slice(0, colon);
  host = host.toLowerCase();
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

export function isShortener(host: string, shorteners: Shorteners): boolean {
  const bare = host.startsWith('www.') ? host.slice(4) : host;
  if (shorteners.hosts.has(bare)) return true;
  for (let dot = bare.indexOf('.'); dot >= 0; dot = bare.indexOf('.', dot + 1)) {
    if (shorteners.domains.has(bare.slice(dot + 1))) return true;
  }
  return false;
}

export interface LinkFindings {
  shorteners: number;
  phishing: number;
}

/**
 * Looks at the links of `text` given as start/end pairs; `bare[i]` marks a link written without a
 * scheme, which the phishing matcher is given with "http://" in front.
 */
export function checkLinks(
  text: string, spans: readonly number[], bare: readonly boolean[], shorteners: Shorteners | null, phishing: PhishingMatcher | null,
): LinkFindings {
  const found: LinkFindings = { shorteners: 0, phishing: 0 };
  for (let i = 0; i < bare.length; i++) {
    const link = text.slice(spans[2 * i]!, spans[2 * i + 1]!);
    if (shorteners !== null && isShortener(linkHost(link), shorteners)) found.shorteners++;
    if (phishing !== null && phishingMatch(phishing, bare[i] ? `http://${link}` : link)) found.phishing++;
  }
  return found;
}

/** A matcher that throws on a malformed link (the scanner cuts links loosely) counts as no match. */
function phishingMatch(phishing: PhishingMatcher, link: string): boolean {
  try {
    return phishing.match(link) !== null;
  } catch {
    return false;
  }
}
