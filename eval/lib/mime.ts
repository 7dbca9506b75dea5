// A light, bounded reading of a raw e-mail message for the evaluation: the sender's address and the
// body as a visitor would have typed it into a form. Headers are split from the body; multipart
// bodies are walked (text/plain preferred over text/html inside multipart/alternative, every text
// part otherwise); quoted-printable and base64 are decoded; charsets go through TextDecoder; HTML
// becomes text with each link's target kept beside its label (URL rules need the targets). Anything
// else (images, attachments, malformed structure) is skipped, never thrown on.
import { TextDecoder } from 'node:util';

export interface ExtractedMessage {
  /** The address in the From header (as written, trimmed), or null when it has none. */
  readonly from: string | null;
  /** The body text, at most `maxChars` characters. */
  readonly body: string;
}

export interface ExtractOptions {
  /** Characters of body text kept (default 10,000: the form use-case's ~10 KB). */
  readonly maxChars?: number;
}

const DEFAULTS = { maxChars: 10_000 } as const;
// Nesting and part counts a real message stays far below; a crafted one cannot make the walk deep.
const MAX_DEPTH = 6;
const MAX_PARTS = 64;

/** The sender and body text of a raw message (bytes, or a string whose characters are bytes). */
export function extractMessage(raw: Uint8Array | string, options: ExtractOptions = {}): ExtractedMessage {
  const maxChars = options.maxChars ?? DEFAULTS.maxChars;
  const text = typeof raw === 'string' ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
  // An mbox separator line ("From sender date") precedes the headers in the SpamAssassin files.
  const start = text.startsWith('From ') ? text.indexOf('\n') + 1 : 0;
  const { headers, body } = splitEntity(text.slice(start));
  const budget = { parts: 0 };
  const bodyText = normaliseWhitespace(entityText(headers, body, 0, budget));
  return { from: senderAddress(headers.get('from') ?? ''), body: bodyText.slice(0, maxChars) };
}

interface Entity {
  readonly headers: Map<string, string>;
  readonly body: string;
}

/** Headers (lower-case names, folded lines unfolded, the first of repeated names kept) and body. */
export function splitEntity(text: string): Entity {
  const match = /\r?\n\r?\n/.exec(text);
  const head = match ? text.slice(0, match.index) : text;
  const body = match ? text.slice(match.index + match[0].length) : '';
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { headers, body };
}

interface ContentType {
  readonly type: string;
  readonly params: Map<string, string>;
}

/** `type/subtype; name=value; name="value"` → lower-case type and parameters (values as written); text/plain when absent. */
export function parseContentType(value: string | undefined): ContentType {
  const params = new Map<string, string>();
  if (!value) return { type: 'text/plain', params };
  // The first type/subtype token: some senders omit the ';' before the first parameter.
  const type = /^\s*([\w.+-]+\/[\w.+-]+)/.exec(value)?.[1]?.toLowerCase() ?? 'text/plain';
  for (const param of value.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq <= 0) continue;
    const name = param.slice(0, eq).trim().toLowerCase();
    let v = param.slice(eq + 1).trim();
    if (v.startsWith('"')) v = v.slice(1, v.indexOf('"', 1) > 0 ? v.indexOf('"', 1) : undefined);
    params.set(name, v);
  }
  return { type, params };
}

function entityText(headers: Map<string, string>, body: string, depth: number, budget: { parts: number }): string {
  if (++budget.parts > MAX_PARTS || depth > MAX_DEPTH) return '';
  const { type, params } = parseContentType(headers.get('content-type'));
  if (type.startsWith('multipart/')) {
    const boundary = params.get('boundary');
    if (!boundary) return '';
    const parts = splitMultipart(body, boundary).map(splitEntity);
    if (type === 'multipart/alternative') {
      // text/plain first; spam often ships an empty one beside the HTML that carries the message.
      for (const wanted of ['text/plain', 'text/html']) {
        const part = parts.find((p) => parseContentType(p.headers.get('content-type')).type === wanted);
        const text = part ? entityText(part.headers, part.body, depth + 1, budget).trim() : '';
        if (text !== '') return text;
      }
      return '';
    }
    return parts.map((p) => entityText(p.headers, p.body, depth + 1, budget)).filter((t) => t !== '').join('\n\n');
  }
  if (type === 'message/rfc822') {
    const inner = splitEntity(body);
    return entityText(inner.headers, inner.body, depth + 1, budget);
  }
  if (type !== 'text/plain' && type !== 'text/html') return '';
  if (/^attachment/i.test(headers.get('content-disposition') ?? '')) return '';
  const bytes = decodeTransfer(body, (headers.get('content-transfer-encoding') ?? '').trim().toLowerCase());
  const text = decodeCharset(bytes, params.get('charset'));
  return type === 'text/html' ? htmlToText(text) : text;
}

/** The parts between `--boundary` lines, up to the closing `--boundary--` (preamble and epilogue dropped). */
export function splitMultipart(body: string, boundary: string): string[] {
  const delimiter = `--${boundary}`;
  const parts: string[] = [];
  let current: string[] | null = null;
  for (const line of body.split(/\r?\n/)) {
    const trimmed = line.trimEnd();
    if (trimmed === delimiter || trimmed === `${delimiter}--`) {
      if (current) parts.push(current.join('\n'));
      if (trimmed !== delimiter || parts.length >= MAX_PARTS) return parts;
      current = [];
    } else if (current) {
      current.push(line);
    }
  }
  if (current) parts.push(current.join('\n'));
  return parts;
}

/** The bytes of a body under its Content-Transfer-Encoding (7bit, 8bit and binary pass through). */
export function decodeTransfer(body: string, encoding: string): Buffer {
  if (encoding === 'base64') return Buffer.from(body.replace(/[^A-Za-z0-9+/]/g, ''), 'base64');
  if (encoding === 'quoted-printable') {
    const decoded = body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(decoded, 'latin1');
  }
  return Buffer.from(body, 'latin1');
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Text of the bytes in the declared charset; undeclared or unknown: UTF-8 when valid, else
 * windows-1252. Labels of Latin-1 and ASCII mean windows-1252, as the WHATWG Encoding standard and
 * mail clients read them (senders put €, dashes and curly quotes in those bytes).
 */
export function decodeCharset(bytes: Buffer, charset: string | undefined): string {
  if (charset) {
    let decoder: TextDecoder | null = null;
    try {
      decoder = new TextDecoder(charset.trim().toLowerCase());
    } catch {
      // An unknown label (e.g. "unknown-8bit"): fall through to the guess below.
    }
    if (decoder) return decoder.encoding === 'windows-1252' ? windows1252(bytes) : decoder.decode(bytes);
  }
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    return windows1252(bytes);
  }
}

// Node 20's TextDecoder('windows-1252') decodes as ISO-8859-1: bytes 0x80–0x9F come out as C1
// controls instead of €, ‚, “, ” … This table gives them their windows-1252 characters (the five
// undefined bytes stay as they are).
const CP1252_HIGH = '€\x81‚ƒ„…†‡ˆ‰Š‹Œ\x8dŽ\x8f\x90‘’“”•–—˜™š›œ\x9džŸ';

function windows1252(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/[\x80-\x9f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!);
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', copy: '©', reg: '®', euro: '€', pound: '£',
  hellip: '…', mdash: '—', ndash: '–', laquo: '«', raquo: '»', rsquo: '’', lsquo: '‘', rdquo: '”', ldquo: '“',
};

/** Visible text of an HTML document: scripts, styles and comments dropped, block ends as line breaks, a link as "label (href)". */
export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<a\b[^>]*?\bhref\s*=\s*["']?([^"'\s>]+)["']?[^>]*>([\s\S]*?)<\/a\s*>/gi, (_m, href: string, label: string) => {
      const text = label.replace(/<[^>]*>/g, '').trim();
      return /^https?:/i.test(href) && text !== href ? `${text} (${href})` : text;
    })
    .replace(/<(br|\/p|\/div|\/li|\/tr|\/h[1-6]|p|div|li|tr|h[1-6])\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/gi, (m, ref: string) => {
      if (ref[0] !== '#') return ENTITIES[ref.toLowerCase()] ?? m;
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      // &#128;–&#159; name windows-1252 characters, as in HTML's parser (&#149; is a bullet).
      if (code >= 0x80 && code <= 0x9f) return CP1252_HIGH[code - 0x80]!;
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    });
}

/** Trailing spaces dropped, runs of spaces and of blank lines collapsed, ends trimmed. */
function normaliseWhitespace(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The addr-spec of a From header: inside <…> when present, else the first token with an @. */
export function senderAddress(from: string): string | null {
  const angle = /<([^<>\s]+@[^<>\s]+)>/.exec(from);
  if (angle) return angle[1]!;
  const bare = /[^\s<>"(),;:]+@[^\s<>"(),;:]+/.exec(from);
  return bare ? bare[0] : null;
}
