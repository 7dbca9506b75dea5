// The message block of an /v1/eml classification: what the structure of a parsed message says,
// on top of the text, e-mail, IP and location blocks of its content and sender. Scores follow the
// classifier's bands (docs/classifier.md: GOOD < 1 ≤ NEUTRAL < 2 ≤ BAD): a lure that is hardly
// ever innocent (an executable attachment, a link whose text names another site) is BAD on its own,
// a habit of bulk senders (no Message-ID, HTML only) only adds up with others.
import { getDomain } from 'tldts';
import { ruleBlock } from '../block.js';
import type { Block, RuleDefinition } from '../types.js';
import type { Authentication } from './authenticate.js';
import type { ParsedMessage } from './parse-message.js';

export const MESSAGE_RULES: readonly RuleDefinition[] = Object.freeze([
  {
    name: 'REPLY_TO_MISMATCH', dimension: 'message', score: 1,
    description: 'Reply-To names a domain other than the From address\'s (registrable domains compared), so answers go elsewhere than the message claims to come from. Mailing lists (a List-Id or List-Post field) are exempt: they set Reply-To to the list.',
  },
  {
    name: 'DISPLAY_NAME_SPOOF', dimension: 'message', score: 2,
    description: 'The From display name holds an e-mail address or a domain name ("service@paypal.com" <x@elsewhere.example>) whose registrable domain is not the address\'s own.',
  },
  {
    name: 'LINK_TEXT_MISMATCH', dimension: 'message', score: 2,
    description: 'A link of the HTML body shows a URL or domain as its text that points elsewhere: the registrable domain of the text differs from the target\'s.',
  },
  {
    name: 'EXECUTABLE_ATTACHMENT', dimension: 'message', score: 3,
    description: 'An attachment whose file name ends in an extension Windows or a script host runs: .exe, .scr, .com, .pif, .bat, .cmd, .vbs, .vbe, .js, .jse, .wsf, .wsh, .hta, .msi, .jar, .ps1, .lnk, .cpl, .reg and the like.',
  },
  {
    name: 'DOUBLE_EXTENSION', dimension: 'message', score: 3,
    description: 'An attachment whose file name hides its real type behind a document extension: a document or media extension followed by an executable one (invoice.pdf.exe), or an extension pushed out of sight by a run of spaces.',
  },
  {
    name: 'MISSING_MESSAGE_ID', dimension: 'message', score: 0.5,
    description: 'No Message-ID field: every mail program sets one (RFC 5322 section 3.6.4 asks for it); bulk senders often do not.',
  },
  {
    name: 'MISSING_DATE', dimension: 'message', score: 0.5,
    description: 'No Date field, which RFC 5322 requires of every message.',
  },
  {
    name: 'HTML_ONLY', dimension: 'message', score: 0.3,
    description: 'An HTML body without a text/plain alternative. Mild: some legitimate senders do it too.',
  },
  {
    name: 'HTML_ONLY_HIDDEN_TEXT', dimension: 'message', score: 1.5,
    description: 'HTML only, and 20 or more characters of it hidden from the reader (display:none, visibility:hidden, font-size 0 or 1px, opacity 0, the hidden attribute): words meant for filters, not people.',
  },
  {
    name: 'SPF_FAIL', dimension: 'message', score: 1,
    description: 'With X-Authenticate: the sender\'s IP (from the Received chain) is not allowed by the envelope domain\'s SPF record: 1 for fail, 0.5 for softfail.',
  },
  {
    name: 'DKIM_FAIL', dimension: 'message', score: 1,
    description: 'With X-Authenticate: a DKIM signature is present and does not verify (a signature or body hash that does not match: altered message, wrong key); a missing signature, or a key that cannot be fetched, does not count.',
  },
  {
    name: 'DMARC_FAIL', dimension: 'message', score: 2,
    description: 'With X-Authenticate: the From domain publishes DMARC and neither an aligned SPF pass nor an aligned DKIM pass backs the message: 2 when the policy is quarantine or reject, 1 when it is none.',
  },
  {
    name: 'STRUCTURE_LIMIT', dimension: 'message', score: 2,
    description: 'The message passed a structural bound (more than 1,000 header fields in a block, a header field over 64 KB, 1 MB of headers, nesting over 32 levels or more than 250 parts) and was read only up to there. Mail programs write nothing of the kind.',
  },
]);

const EXECUTABLE = new Set([
  'exe', 'scr', 'com', 'pif', 'bat', 'cmd', 'vbs', 'vbe', 'js', 'jse', 'wsf', 'wsh', 'hta', 'msi', 'msp', 'jar', 'ps1', 'psm1',
  'lnk', 'cpl', 'reg', 'dll', 'gadget', 'application', 'msc', 'scf', 'inf', 'sct', 'apk', 'app', 'vb', 'appref-ms',
]);
const DOCUMENT = new Set([
  'pdf', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'txt', 'rtf', 'odt', 'jpg', 'jpeg', 'png', 'gif', 'bmp', 'mp3', 'mp4',
  'avi', 'zip', 'rar', 'htm', 'html', 'csv', 'xml', 'wav', 'mov',
]);
/** Smallest amount of hidden text that counts (a preheader's spacer is less). */
const MIN_HIDDEN_CHARS = 20;
const ADDRESS_IN_NAME = /[a-z0-9._%+-]+@([a-z0-9-]+(?:\.[a-z0-9-]+)+)/i;
const DOMAIN_IN_NAME = /(?:^|[\s"'(<])((?:[a-z0-9-]+\.)+[a-z]{2,24})(?=$|[\s"')>/:,])/i;
const URL_TEXT = /^(?:https?:\/\/)?((?:[a-z0-9-]+\.)+[a-z]{2,24})(?::\d+)?(?:[/?#]\S*)?$/i;

export function analyzeMessage(m: ParsedMessage, auth: Authentication | null, disabled: ReadonlySet<string>): Block {
  const started = performance.now();
  const fired: Record<string, number> = {};
  const fromDomain = registrable(domainOf(m.from?.address ?? ''));
  const isList = m.headers.some((h) => h.key === 'list-id' || h.key === 'list-post');
  if (fromDomain !== null && !isList) {
    const other = m.replyTo.some((r) => {
      const d = registrable(domainOf(r.address));
      return d !== null && d !== fromDomain;
    });
    if (other) fired.REPLY_TO_MISMATCH = 1;
  }
  if (m.from !== null && fromDomain !== null && displayNameSpoofs(m.from.name, fromDomain)) fired.DISPLAY_NAME_SPOOF = 1;
  for (const link of m.links) {
    if (linkMisleads(link.label, link.href)) {
      fired.LINK_TEXT_MISMATCH = 1;
      break;
    }
  }
  for (const a of m.attachments) {
    const name = a.filename;
    if (name === null) continue;
    const parts = name.toLowerCase().trim().split('.');
    const last = parts.length > 1 ? parts[parts.length - 1]! : '';
    if (EXECUTABLE.has(last)) fired.EXECUTABLE_ATTACHMENT = 1;
    const beforeLast = parts.length > 2 ? parts[parts.length - 2]!.trim() : '';
    if ((EXECUTABLE.has(last) && DOCUMENT.has(beforeLast)) || /\S {5,}\.[a-z0-9]{2,5}$/i.test(name)) fired.DOUBLE_EXTENSION = 1;
  }
  if (m.messageId === null || m.messageId.trim() === '') fired.MISSING_MESSAGE_ID = 1;
  if (!m.headers.some((h) => h.key === 'date')) fired.MISSING_DATE = 1;
  if (m.html !== null && m.text === null) {
    fired.HTML_ONLY = 1;
    if (m.hiddenChars >= MIN_HIDDEN_CHARS) fired.HTML_ONLY_HIDDEN_TEXT = 1;
  }
  if (m.limit !== null) fired.STRUCTURE_LIMIT = 1;
  if (auth !== null) {
    if (auth.SPF.result === 'fail') fired.SPF_FAIL = 1;
    else if (auth.SPF.result === 'softfail') fired.SPF_FAIL = 0.5;
    // mailauth answers neutral, not fail, for a body changed after signing (RFC 6376 section 6.3 leaves the word to the verifier).
    if (auth.DKIM.some((d) => d.result === 'fail' || (d.result === 'neutral' && /did not verify/.test(d.comment)))) fired.DKIM_FAIL = 1;
    if (auth.DMARC.result === 'fail') fired.DMARC_FAIL = auth.DMARC.policy === 'none' ? 0.5 : 1;
  }
  return ruleBlock(MESSAGE_RULES, fired, disabled, started);
}

function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).trim().toLowerCase();
}

function registrable(host: string): string | null {
  if (host === '') return null;
  return getDomain(host, { allowPrivateDomains: false }) ?? null;
}

function displayNameSpoofs(name: string, fromDomain: string): boolean {
  if (name === '') return false;
  const address = ADDRESS_IN_NAME.exec(name);
  const domain = address?.[1] ?? DOMAIN_IN_NAME.exec(name)?.[1];
  if (domain === undefined) return false;
  const named = registrable(domain.toLowerCase());
  return named !== null && named !== fromDomain;
}

function linkMisleads(label: string, href: string): boolean {
  const shown = URL_TEXT.exec(label.trim());
  if (shown === null) return false;
  let target: string;
  try {
    const url = new URL(href);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    target = url.hostname;
  } catch {
    return false;
  }
  const a = registrable(shown[1]!.toLowerCase());
  const b = registrable(target);
  return a !== null && b !== null && a !== b;
}
