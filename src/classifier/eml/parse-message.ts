// A raw RFC 5322 message parsed into the response of POST /v1/eml (docs/eml.md): the addresses,
// subject, date, ids, headers, the text and HTML bodies with the text derived from the HTML, and
// the attachments with their SHA-256. postal-mime does the MIME work on what prescan.ts leaves of
// the message; postal-mime's own bounds are set lower (nesting, header bytes, nested messages) so
// that it never throws on a message the pre-scan let through.
import { createHash } from 'node:crypto';
import PostalMime, { type Address, type Email } from 'postal-mime';
import { htmlToText, type HtmlLink } from './html-text.js';
import { EML_LIMITS, prescanMessage, type LimitReached } from './prescan.js';

export interface Mailbox {
  /** The display name ('' when none). */
  readonly name: string;
  /** The address as written ('' when the field gave none). */
  readonly address: string;
}

export interface ParsedAttachment {
  readonly filename: string | null;
  readonly contentType: string;
  /** 'attachment', 'inline' or another value as written; null without one. */
  readonly disposition: string | null;
  readonly contentId: string | null;
  /** Decoded bytes (estimated from the encoded size when omitted). */
  readonly size: number;
  /** Hex SHA-256 of the decoded bytes; null when omitted. */
  readonly sha256: string | null;
  /** 'SIZE_LIMIT' when the attachment was larger than X-Attachments-Size-Limit: reported, not decoded. */
  readonly omitted: 'SIZE_LIMIT' | null;
  /** The decoded bytes; null when omitted (the route replaces them by a base64 string or a contentUri). */
  readonly bytes: Uint8Array | null;
}

export interface ParsedMessage {
  readonly from: Mailbox | null;
  readonly sender: Mailbox | null;
  readonly to: readonly Mailbox[];
  readonly cc: readonly Mailbox[];
  readonly replyTo: readonly Mailbox[];
  readonly returnPath: string | null;
  readonly subject: string | null;
  /** ISO 8601 when the Date field parses, else the field as written; null without one. */
  readonly date: string | null;
  readonly messageId: string | null;
  readonly inReplyTo: string | null;
  readonly headers: readonly { readonly key: string; readonly value: string }[];
  /** The text/plain body as sent, or null. */
  readonly text: string | null;
  /** The text/html body as sent, or null. */
  readonly html: string | null;
  /** The text of the HTML body (html-text.ts), or null without one. */
  readonly htmlText: string | null;
  readonly attachments: readonly ParsedAttachment[];
  /** The bound the message reached (it was read up to there), or null. */
  readonly limit: LimitReached | null;
  /** For the message rules: the HTML's links and hidden characters. */
  readonly links: readonly HtmlLink[];
  readonly hiddenChars: number;
}

export interface ParseOptions {
  /** Largest decoded attachment kept (X-Attachments-Size-Limit). */
  readonly attachmentLimit: number;
  /** Random text for the pre-scan's markers. */
  readonly nonce: string;
}

/** Nested message/rfc822 levels postal-mime parses (the pre-scan bounds the total depth). */
const RFC822_DEPTH = 3;

export async function parseMessage(raw: Buffer, options: ParseOptions): Promise<ParsedMessage> {
  const scan = prescanMessage(raw, options);
  let email: Email;
  try {
    email = await PostalMime.parse(scan.message, {
      attachmentEncoding: 'arraybuffer',
      maxNestingDepth: EML_LIMITS.maxDepth + 2,
      maxHeadersSize: EML_LIMITS.maxHeaderBytes * 2,
      maxRfc822NestingDepth: RFC822_DEPTH,
    });
  } catch {
    // Not expected past the pre-scan; an empty message rather than a failure if it happens.
    email = { headers: [], headerLines: [], attachments: [] } as unknown as Email;
  }
  const html = email.html ?? null;
  const derived = html === null ? null : htmlToText(html);
  const attachments: ParsedAttachment[] = [];
  for (const a of email.attachments) {
    const marker = a.description === undefined ? undefined : scan.omitted.get(a.description);
    if (marker !== undefined) {
      attachments.push({
        filename: cleanOrNull(a.filename), contentType: wellFormed(a.mimeType), disposition: cleanOrNull(a.disposition), contentId: clean(a.contentId),
        size: marker.size, sha256: null, omitted: 'SIZE_LIMIT', bytes: null,
      });
      continue;
    }
    const bytes = a.content instanceof ArrayBuffer ? new Uint8Array(a.content)
      : typeof a.content === 'string' ? Buffer.from(a.content) : a.content;
    attachments.push({
      filename: cleanOrNull(a.filename), contentType: wellFormed(a.mimeType), disposition: cleanOrNull(a.disposition), contentId: clean(a.contentId),
      size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex'), omitted: null, bytes,
    });
  }
  // postal-mime derives text from a lone HTML body; the response keeps what was sent apart.
  const textSent = scan.plainParts > 0 || html === null ? email.text ?? null : null;
  return {
    from: first(email.from), sender: first(email.sender), to: flatten(email.to), cc: flatten(email.cc), replyTo: flatten(email.replyTo),
    returnPath: clean(email.returnPath), subject: clean(email.subject), date: clean(email.date),
    messageId: clean(email.messageId), inReplyTo: clean(email.inReplyTo),
    headers: email.headers.map((h) => ({ key: wellFormed(h.key), value: wellFormed(h.value) })),
    text: textSent === null ? null : wellFormed(textSent), html: html === null ? null : wellFormed(html),
    htmlText: derived === null ? null : wellFormed(derived.text),
    attachments, limit: scan.limit, links: derived?.links ?? [], hiddenChars: derived?.hiddenChars ?? 0,
  };
}

function first(a: Address | undefined): Mailbox | null {
  if (a === undefined) return null;
  const list = flatten([a]);
  return list[0] ?? null;
}

function flatten(list: readonly Address[] | undefined): Mailbox[] {
  const out: Mailbox[] = [];
  for (const a of list ?? []) {
    if (out.length === 1000) break;
    if (a.group !== undefined) for (const m of a.group) out.push({ name: wellFormed(m.name ?? ''), address: wellFormed(m.address ?? '') });
    else out.push({ name: wellFormed(a.name ?? ''), address: wellFormed(a.address ?? '') });
  }
  return out;
}

function clean(s: string | undefined): string | null {
  return s === undefined ? null : wellFormed(s);
}

function cleanOrNull(s: string | null): string | null {
  return s === null ? null : wellFormed(s);
}

/** Lone surrogates become U+FFFD and NUL bytes U+FFFD (JSON writes NUL as six bytes). */
function wellFormed(s: string): string {
  const w = (s as unknown as { toWellFormed(): string }).toWellFormed();
  return w.indexOf('\u0000') < 0 ? w : w.replace(/\u0000/g, '\ufffd');
}
