// The e-mail block of a classification: what an address says about the sender. The widget sends
// only the domain part ("@example.com", SENTINEL-NOTES.md section 1.2), server-side callers the
// whole address; both are valid, and the rules on the local part simply do not fire on the first.
// Scores are chosen so an ordinary address at a free provider totals 0.2 (GOOD), a disposable or
// non-existent domain 3 or more on its own; docs/classifier.md lists them.
import { domainToUnicode } from 'node:url';
import { parse as parseDomain } from 'tldts';
import type { EmailBlock, RuleDefinition } from './types.js';
import { normalizeDomain, type DomainList } from './email-domains.js';
import type { MxLookup, MxVerdict } from './mx-lookup.js';

export const EMAIL_RULES: readonly RuleDefinition[] = Object.freeze([
  {
    name: 'SYNTAX', dimension: 'email', score: 3,
    description: 'Not an e-mail address: no single @, a local part longer than 64 characters or with characters, dots or spaces an address cannot have, a domain that is no valid host name (IDN allowed) or whose top-level domain does not exist, or more than 254 characters in all. "@domain" alone (the widget\'s form) is valid. The other rules do not fire on an invalid address.',
  },
  {
    name: 'DISPOSABLE', dimension: 'email', score: 3,
    description: 'The domain, or a parent of it, is a disposable (throw-away) mail service: the EMAIL_LIST_DISPOSABLE download, or until there is one the list embedded from the disposable-email-domains package.',
  },
  {
    name: 'FREE_PROVIDER', dimension: 'email', score: 0.2,
    description: 'A free mail provider anyone can sign up with (gmail.com, outlook.com, …; the email-providers package). Mild: most people write from one. Does not fire when DISPOSABLE does.',
  },
  {
    name: 'MX', dimension: 'email', score: 3,
    description: 'The domain cannot receive mail: 3 when it does not exist (NXDOMAIN), 2 when it has neither an MX record nor an A/AAAA record, or a null MX (RFC 7505). A domain with only an A/AAAA record receives mail (RFC 5321 implicit MX) and scores 0. No answer within DNS_TIMEOUT, SERVFAIL or a refusal score 0: a slow resolver is no evidence against the sender. Free providers are not looked up (they receive mail).',
  },
  {
    name: 'IDN_HOMOGRAPH', dimension: 'email', score: 2,
    description: 'A label of the domain mixes Latin letters with Cyrillic, Greek or Armenian ones (gmаil.com with a Cyrillic а), or consists only of Cyrillic letters that look Latin (раураl.com) under a non-Cyrillic top-level domain.',
  },
  {
    name: 'ROLE', dimension: 'email', score: 0.5,
    description: 'The local part names no person but a function that does not fill in forms: noreply, no-reply, donotreply, mailer-daemon, postmaster, hostmaster, webmaster, abuse, root, nobody, test and the like (info, sales, contact and support are not counted).',
  },
  {
    name: 'RANDOM', dimension: 'email', score: 1,
    description: 'The local part (before any +tag, without dots, hyphens and underscores) looks generated: 8 or more characters switching between letters and digits at least 4 times (a8f3k2p9), or 10 or more letters with a run of 6 consonants and fewer than one in five vowels (qwrtzpkxmn).',
  },
]);

/** The MX rule's score when the domain exists but has no mail host (nxdomain scores the full 3). */
const MX_NO_MAIL_SCORE = 2;

const ROLE_NAMES: ReadonlySet<string> = new Set([
  'noreply', 'no-reply', 'no_reply', 'donotreply', 'do-not-reply', 'do_not_reply', 'mailer-daemon', 'postmaster',
  'hostmaster', 'webmaster', 'abuse', 'root', 'nobody', 'test', 'null', 'devnull', 'spam', 'bounce', 'bounces',
]);

const SCORES: Readonly<Record<string, number>> = Object.freeze(Object.fromEntries(EMAIL_RULES.map((r) => [r.name, r.score])));
/** Longest input looked at: RFC 5321's 254 plus room for spaces around it. */
const MAX_INPUT = 320;
/** RFC 5322 atext plus non-ASCII (RFC 6531), dot-separated. */
const LOCAL_PART = /^[\p{L}\p{N}\p{M}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}\p{M}!#$%&'*+/=?^_`{|}~-]+)*$/u;
/** Cyrillic letters drawn like Latin ones (а с е і ј о р ѕ х у ԁ һ ԛ ԝ ӏ). */
const LATIN_LOOKING_CYRILLIC = /^[асеіјорѕхуԁһԛԝӏ]+$/u;

export interface EmailDeps {
  /** The disposable domains in use (a download or the embedded list). */
  readonly disposable: DomainList;
  readonly freeProviders: DomainList;
  /** DNS checks; null = the MX rule does not run. */
  readonly mx: MxLookup | null;
}

export interface EmailOptions {
  /** Rule names not to run (the request's disableRules); they are absent from the block. */
  readonly disabled: ReadonlySet<string>;
}

export async function analyzeEmail(email: string, deps: EmailDeps, options: EmailOptions): Promise<EmailBlock> {
  const started = performance.now();
  const on = (name: string) => !options.disabled.has(name);
  const fired = new Map<string, number>();
  const parts = splitAddress(email);
  if (parts === null) {
    fired.set('SYNTAX', SCORES.SYNTAX!);
    return block(fired, null, options.disabled, deps.mx !== null, started);
  }
  const { local, domain } = parts;
  const disposable = deps.disposable.match(domain) !== null;
  const free = !disposable && deps.freeProviders.has(domain);
  if (disposable && on('DISPOSABLE')) fired.set('DISPOSABLE', SCORES.DISPOSABLE!);
  if (free && on('FREE_PROVIDER')) fired.set('FREE_PROVIDER', SCORES.FREE_PROVIDER!);
  // A known provider receives mail: no DNS query for the most common domains.
  if (on('MX') && deps.mx !== null && !free) fired.set('MX', mxScore(await deps.mx.lookup(domain)));
  if (on('IDN_HOMOGRAPH') && domain.includes('xn--') && isHomograph(domain)) fired.set('IDN_HOMOGRAPH', SCORES.IDN_HOMOGRAPH!);
  if (local !== '') {
    const bare = local.toLowerCase();
    if (on('ROLE') && ROLE_NAMES.has(bare.split('+')[0]!)) fired.set('ROLE', SCORES.ROLE!);
    if (on('RANDOM') && looksRandom(bare)) fired.set('RANDOM', SCORES.RANDOM!);
  }
  return block(fired, domain, options.disabled, deps.mx !== null, started);
}

function block(fired: ReadonlyMap<string, number>, domain: string | null, disabled: ReadonlySet<string>, mx: boolean, started: number): EmailBlock {
  const rules: Record<string, { score: number }> = {};
  let total = 0;
  for (const rule of EMAIL_RULES) {
    if (disabled.has(rule.name) || (rule.name === 'MX' && !mx)) continue;
    const score = fired.get(rule.name) ?? 0;
    rules[rule.name] = { score };
    total += score;
  }
  return { rules, score: round2(total), time: round2(performance.now() - started), domain };
}

function mxScore(verdict: MxVerdict): number {
  if (verdict === 'nxdomain') return SCORES.MX!;
  if (verdict === 'no_mail') return MX_NO_MAIL_SCORE;
  return 0;
}

/**
 * `local@domain` or `@domain` → the local part as written and the normalised domain; null when
 * it is no address (rule SYNTAX).
 */
export function splitAddress(email: string): { local: string; domain: string } | null {
  if (email.length > MAX_INPUT) return null;
  const address = email.trim();
  if (address.length > 254) return null;
  const at = address.lastIndexOf('@');
  if (at < 0 || address.indexOf('@') !== at) return null;
  const local = address.slice(0, at);
  if (local.length > 64 || (local !== '' && !LOCAL_PART.test(local))) return null;
  const domain = normalizeDomain(address.slice(at + 1));
  if (domain === null) return null;
  const parsed = parseDomain(domain, { allowPrivateDomains: false });
  // A name under a wildcard suffix (*.sch.uk, *.ck) is a public suffix itself and has no
  // registrable domain, yet it is a real host: three labels or more pass.
  if (parsed.isIcann !== true || (parsed.domain === null && domain.split('.').length < 3)) return null;
  return { local, domain };
}

function isHomograph(domain: string): boolean {
  const labels = domainToUnicode(domain).split('.');
  const cyrillicTld = /\p{Script=Cyrillic}/u.test(labels[labels.length - 1]!);
  for (const label of labels) {
    const latin = /\p{Script=Latin}/u.test(label);
    if (latin && /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}]/u.test(label)) return true;
    if (!latin && !cyrillicTld && LATIN_LOOKING_CYRILLIC.test(label)) return true;
  }
  return false;
}

function looksRandom(local: string): boolean {
  const plus = local.indexOf('+');
  const s = (plus >= 0 ? local.slice(0, plus) : local).replace(/[._-]/g, '');
  if (!/^[a-z0-9]+$/.test(s)) return false;
  if (s.length >= 8) {
    let switches = 0;
    for (let i = 1; i < s.length; i++) if (isDigit(s.charCodeAt(i)) !== isDigit(s.charCodeAt(i - 1))) switches++;
    if (switches >= 4) return true;
  }
  if (s.length >= 10 && /^[a-z]+$/.test(s)) {
    const vowels = s.replace(/[^aeiouy]/g, '').length;
    const longestConsonants = Math.max(...s.split(/[aeiouy]+/).map((run) => run.length));
    if (longestConsonants >= 6 && vowels * 5 < s.length) return true;
  }
  return false;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
