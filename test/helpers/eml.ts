// Messages for the /v1/eml tests: an ordinary one, the bad-input shapes of docs/eml.md, built in
// memory (nothing read from the internet).

const CRLF = '\r\n';

export function message(headers: Record<string, string> | [string, string][], body: string): string {
  const list = Array.isArray(headers) ? headers : Object.entries(headers);
  return `${list.map(([k, v]) => `${k}: ${v}`).join(CRLF)}${CRLF}${CRLF}${body}`;
}

export const HAM = message({
  Received: 'from mail.bakery-weber.de (mail.bakery-weber.de [203.0.113.5]) by mx.palisade.test (Postfix) with ESMTPS id 1; Tue, 1 Jul 2025 10:00:01 +0000',
  From: 'Anna Weber <anna@bakery-weber.de>',
  To: 'orders@example.org',
  Subject: 'Table for Friday',
  Date: 'Tue, 1 Jul 2025 10:00:00 +0000',
  'Message-ID': '<a1b2c3@bakery-weber.de>',
  'Content-Type': 'text/plain; charset=utf-8',
}, 'Hello, I would like to book a table for four people on Friday evening at seven. Thank you very much!\r\nAnna\r\n');

/** A multipart with `depth` nested multiparts. */
export function nested(depth: number): string {
  let s = `From: a@example.com${CRLF}Subject: deep${CRLF}`;
  for (let i = 0; i < depth; i++) s += `Content-Type: multipart/mixed; boundary="b${i}"${CRLF}${CRLF}--b${i}${CRLF}`;
  s += `Content-Type: text/plain${CRLF}${CRLF}innermost${CRLF}`;
  for (let i = depth - 1; i >= 0; i--) s += `--b${i}--${CRLF}`;
  return s;
}

/** `depth` nested message/rfc822 parts. */
export function nestedMessages(depth: number): string {
  let s = `From: a@example.com${CRLF}`;
  for (let i = 0; i < depth; i++) s += `Content-Type: message/rfc822${CRLF}${CRLF}From: b${i}@example.com${CRLF}`;
  return `${s}Subject: inner${CRLF}${CRLF}hi${CRLF}`;
}

/** A multipart of `count` small parts. */
export function manyParts(count: number): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(`--x${CRLF}Content-Type: text/plain${CRLF}${CRLF}part ${i}${CRLF}`);
  return `From: a@example.com${CRLF}Content-Type: multipart/mixed; boundary=x${CRLF}${CRLF}${parts.join('')}--x--${CRLF}`;
}

export function manyHeaders(count: number): string {
  const lines: string[] = ['From: a@example.com'];
  for (let i = 0; i < count; i++) lines.push(`X-Filler-${i}: value ${i}`);
  return `${lines.join(CRLF)}${CRLF}${CRLF}body${CRLF}`;
}

/** base64 text wrapped at 76 characters. */
export function base64Lines(bytes: Buffer): string {
  return bytes.toString('base64').replace(/.{76}/g, `$&${CRLF}`);
}

export function withAttachment(filename: string, bytes: Buffer, type = 'application/octet-stream', extraHeaders: Record<string, string> = {}): string {
  return message({
    From: 'a@example.com', To: 'b@example.org', Subject: 'files', Date: 'Tue, 1 Jul 2025 10:00:00 +0000', 'Message-ID': '<f@example.com>',
    'Content-Type': 'multipart/mixed; boundary="B"', ...extraHeaders,
  }, `--B${CRLF}Content-Type: text/plain${CRLF}${CRLF}see attached${CRLF}--B${CRLF}Content-Type: ${type}; name="${filename}"${CRLF}`
    + `Content-Disposition: attachment; filename="${filename}"${CRLF}Content-Transfer-Encoding: base64${CRLF}${CRLF}${base64Lines(bytes)}${CRLF}--B--${CRLF}`);
}
