// A linear pre-scan of a raw message before the MIME parser sees it, so that a crafted message
// costs bounded time and memory (docs/eml.md, "Bad input"). postal-mime bounds multipart depth
// (256, then throws) and header bytes (2 MB, then throws), but not header fields, parts or
// message/rfc822 levels: 50,000 empty parts took it 1.4 s and 85 MB, 1,000 nested message/rfc822
// parts 0.3 s (measured on this machine with postal-mime 4.0.0). The scan walks the lines once,
// follows the boundaries, and:
//   - cuts the message at the first line that passes a limit (EML_LIMITS): the parser then reads
//     a truncated message, which it handles like any truncated MIME, and `limit` says which bound
//     was reached;
//   - empties the body of every attachment-like part whose decoded size would pass the caller's
//     attachment limit, so it is reported without being decoded: a marker header carrying a
//     random nonce is put first in the part's header (postal-mime keeps the first
//     Content-Description) and `omitted` maps the marker to the part's estimated decoded size.

export const EML_LIMITS = Object.freeze({
  /** Header fields in one header block (the message's, or a part's). */
  maxHeaderFields: 1000,
  /** Bytes of one header field, folded lines included (RFC 5322 asks 998 per line). */
  maxHeaderField: 65_536,
  /** Header bytes in the whole message. */
  maxHeaderBytes: 1_048_576,
  /** Nesting of multiparts and message/rfc822 parts. */
  maxDepth: 32,
  /** MIME parts in the whole message. */
  maxParts: 250,
});

export type LimitReached = 'HEADER_FIELDS' | 'HEADER_FIELD_SIZE' | 'HEADER_BYTES' | 'DEPTH' | 'PARTS';

export interface OmittedPart {
  /** Decoded size, estimated from the encoded body (base64: 3 bytes per 4 characters). */
  readonly size: number;
}

export interface Prescan {
  /** The message to parse: the input itself when nothing was cut or emptied. */
  readonly message: Buffer;
  /** The first bound reached, or null. */
  readonly limit: LimitReached | null;
  /** Marker (the Content-Description value) → the omitted part. */
  readonly omitted: ReadonlyMap<string, OmittedPart>;
  /** Parts seen (the message itself counts as one). */
  readonly parts: number;
  /** Inline text/plain parts (a message without any sends HTML only). */
  readonly plainParts: number;
}

export interface PrescanOptions {
  /** Largest decoded attachment kept; a larger one is omitted. */
  readonly attachmentLimit: number;
  /** Random text that makes the markers unforgeable (a message could carry its own). */
  readonly nonce: string;
}

interface Level {
  /** `--boundary` of a multipart, or null for a message/rfc822 level. */
  readonly delimiter: string | null;
}

interface PartHead {
  readonly contentType: string;
  readonly disposition: string;
  readonly encoding: string;
}

const MULTIPART = /^\s*multipart\/[^;\s]*/i;
const RFC822 = /^\s*message\/(?:rfc822|global)\b/i;
const BOUNDARY = /;\s*boundary\s*=\s*(?:"([^"]{1,200})"|([^;\s]{1,200}))/i;
const NAME_PARAM = /;\s*(?:file)?name\*?(?:\*\d+\*?)?\s*=/i;

export function prescanMessage(raw: Buffer, options: PrescanOptions): Prescan {
  // Byte offsets equal character offsets in latin1.
  const s = raw.toString('latin1');
  const L = EML_LIMITS;
  const pieces: string[] = [];
  let copiedTo = 0;
  const omitted = new Map<string, OmittedPart>();
  let limit: LimitReached | null = null;
  let cutAt = -1;
  const stack: Level[] = [];
  let parts = 1;
  let plainParts = 0;
  let headerBytes = 0;
  let pos = 0;
  // The current header block.
  let inHeaders = true;
  let partStart = 0;
  let fields = 0;
  let fieldStart = -1;
  let contentType = '';
  let disposition = '';
  let encoding = '';
  let current: 'ct' | 'cd' | 'cte' | null = null;
  // The current leaf body: where it starts and whether it may be omitted.
  let bodyStart = -1;
  let bodyHead: PartHead | null = null;
  let bodyPartStart = 0;

  const reach = (what: LimitReached, at: number): void => {
    limit = what;
    cutAt = at;
  };
  const endBody = (end: number): void => {
    if (bodyStart < 0 || bodyHead === null) return;
    const head = bodyHead;
    const start = bodyStart;
    bodyStart = -1;
    bodyHead = null;
    if (!attachmentLike(head)) {
      if (/^\s*(?:text\/plain|$)/i.test(head.contentType)) plainParts++;
      return;
    }
    // The line break before a delimiter belongs to the delimiter (RFC 2046 section 5.1.1).
    const encodedEnd = Math.max(start, end > start && s.charCodeAt(end - 1) === 10 ? end - (s.charCodeAt(end - 2) === 13 ? 2 : 1) : end);
    const size = decodedSize(s, start, encodedEnd, head.encoding);
    if (size <= options.attachmentLimit) return;
    const marker = `palisade-omitted-${options.nonce}-${omitted.size}`;
    omitted.set(marker, { size });
    pieces.push(s.slice(copiedTo, bodyPartStart), `Content-Description: ${marker}\r\n`, s.slice(bodyPartStart, start));
    copiedTo = encodedEnd;
  };

  while (pos < s.length && limit === null) {
    let nl = s.indexOf('\n', pos);
    if (nl < 0) nl = s.length;
    const lineEnd = nl > pos && s.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    const next = nl + 1;
    if (inHeaders) {
      if (lineEnd === pos) {
        // The end of a header block.
        headerBytes += next - partStart;
        if (headerBytes > L.maxHeaderBytes) { reach('HEADER_BYTES', partStart); break; }
        inHeaders = false;
        current = null;
        if (MULTIPART.test(contentType)) {
          const m = BOUNDARY.exec(contentType);
          if (m !== null) {
            if (stack.length >= L.maxDepth) { reach('DEPTH', partStart); break; }
            stack.push({ delimiter: `--${(m[1] ?? m[2])!.trimEnd()}` });
          }
        } else if (RFC822.test(contentType)) {
          if (stack.length >= L.maxDepth) { reach('DEPTH', partStart); break; }
          stack.push({ delimiter: null });
          // The body is the header block of the enclosed message.
          inHeaders = true;
          fields = 0;
          contentType = disposition = encoding = '';
          partStart = next;
          pos = next;
          continue;
        } else {
          bodyStart = next;
          bodyHead = { contentType, disposition, encoding };
          bodyPartStart = partStart;
        }
        pos = next;
        continue;
      }
      const c = s.charCodeAt(pos);
      if (c === 32 || c === 9) {
        // A folded continuation of the current field.
        if (fieldStart >= 0 && next - fieldStart > L.maxHeaderField) { reach('HEADER_FIELD_SIZE', fieldStart); break; }
        if (current !== null) appendTo(current, s.slice(pos, Math.min(lineEnd, pos + 1000)));
      } else {
        if (++fields > L.maxHeaderFields) { reach('HEADER_FIELDS', pos); break; }
        fieldStart = pos;
        if (lineEnd - pos > L.maxHeaderField) { reach('HEADER_FIELD_SIZE', pos); break; }
        const colon = s.indexOf(':', pos);
        const name = colon < 0 || colon > lineEnd ? '' : s.slice(pos, colon).trim().toLowerCase();
        const value = colon < 0 || colon > lineEnd ? '' : s.slice(colon + 1, Math.min(lineEnd, colon + 1001));
        // The first occurrence decides, as in postal-mime.
        current = null;
        if (name === 'content-type' && contentType === '') { current = 'ct'; contentType = value; }
        else if (name === 'content-disposition' && disposition === '') { current = 'cd'; disposition = value; }
        else if (name === 'content-transfer-encoding' && encoding === '') { current = 'cte'; encoding = value.trim().toLowerCase(); }
      }
      pos = next;
      continue;
    }
    // A body line: a delimiter of an enclosing multipart, or content.
    if (s.charCodeAt(pos) === 45 && s.charCodeAt(pos + 1) === 45 && stack.length > 0) {
      const line = s.slice(pos, Math.min(lineEnd, pos + 210)).trimEnd();
      let level = -1;
      for (let i = stack.length - 1; i >= 0; i--) {
        const d = stack[i]!.delimiter;
        if (d !== null && (line === d || line === `${d}--`)) { level = i; break; }
      }
      if (level >= 0) {
        endBody(pos);
        const closing = line.length > stack[level]!.delimiter!.length;
        stack.length = closing ? level : level + 1;
        if (!closing) {
          if (++parts > L.maxParts) { reach('PARTS', pos); break; }
          inHeaders = true;
          fields = 0;
          contentType = disposition = encoding = '';
          partStart = next;
        }
      }
    }
    pos = next;
  }
  if (limit === null) endBody(s.length);
  if (cutAt >= 0) {
    // Whatever body was open ends at the cut.
    pieces.push(s.slice(copiedTo, cutAt));
    copiedTo = s.length;
  }
  if (pieces.length === 0) return { message: raw, limit, omitted, parts, plainParts };
  pieces.push(s.slice(copiedTo));
  return { message: Buffer.from(pieces.join(''), 'latin1'), limit, omitted, parts, plainParts };

  function appendTo(which: 'ct' | 'cd' | 'cte', more: string): void {
    if (which === 'ct' && contentType.length < 2000) contentType += more;
    else if (which === 'cd' && disposition.length < 2000) disposition += more;
  }
}

/** A part the parser would list as an attachment rather than as the message's text. */
function attachmentLike(head: PartHead): boolean {
  if (/^\s*attachment/i.test(head.disposition)) return true;
  if (NAME_PARAM.test(head.disposition) || NAME_PARAM.test(head.contentType)) return true;
  const type = head.contentType.trim().toLowerCase();
  return type !== '' && !type.startsWith('text/');
}

function decodedSize(s: string, start: number, end: number, encoding: string): number {
  if (!encoding.startsWith('base64')) return end - start;
  let chars = 0;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c !== 10 && c !== 13 && c !== 32 && c !== 9 && c !== 61) chars++;
  }
  return Math.floor((chars * 3) / 4);
}
