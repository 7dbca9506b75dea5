// The bad input of docs/eml.md, parsed as POST /v1/eml parses it: each case finishes within a
// bounded time, keeps its output bounded, never throws, and says which bound it reached.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseMessage, type ParsedMessage } from '../../src/classifier/eml/parse-message.js';
import { analyzeMessage } from '../../src/classifier/eml/message-rules.js';
import { EML_LIMITS, prescanMessage } from '../../src/classifier/eml/prescan.js';
import { base64Lines, HAM, manyHeaders, manyParts, message, nested, nestedMessages, withAttachment } from '../helpers/eml.js';

const OPTIONS = { attachmentLimit: 5_000_000, nonce: 'n0nce' };
/**
 * Each case takes 5 to 250 ms on an idle core; the bound is there to catch work that grows with
 * the square of the input (minutes at these sizes) or a hang, on a 2-core machine that other work
 * shares (a load of 15 stretched the slowest case to 1.9 s).
 */
const BUDGET_MS = 5000;

async function parse(raw: string | Buffer, options = OPTIONS): Promise<{ m: ParsedMessage; ms: number; out: number }> {
  const buf = typeof raw === 'string' ? Buffer.from(raw, 'latin1') : raw;
  const started = performance.now();
  const m = await parseMessage(buf, options);
  const ms = performance.now() - started;
  const out = JSON.stringify({ ...m, attachments: m.attachments.map((a) => ({ ...a, bytes: a.bytes?.byteLength ?? null })) }).length
    + m.attachments.reduce((n, a) => n + Math.ceil((a.bytes?.byteLength ?? 0) * 4 / 3), 0);
  assert.ok(ms < BUDGET_MS, `took ${ms} ms`);
  // What the response would carry: never more than a few times the input.
  assert.ok(out <= buf.length * 6 + 10_000, `output ${out} bytes for ${buf.length} in`);
  return { m, ms, out };
}

describe('bad input: bounded, never thrown', () => {
  test('an ordinary message is not touched by the pre-scan', async () => {
    const raw = Buffer.from(HAM);
    const scan = prescanMessage(raw, OPTIONS);
    assert.equal(scan.message, raw);
    assert.equal(scan.limit, null);
    const { m } = await parse(HAM);
    assert.equal(m.subject, 'Table for Friday');
    assert.equal(m.from?.address, 'anna@bakery-weber.de');
    assert.equal(m.limit, null);
  });

  test('truncated MIME (cut inside a part, inside a header, inside base64): parsed as far as it goes', async () => {
    const full = withAttachment('a.pdf', Buffer.alloc(3000, 1), 'application/pdf');
    for (const cut of [40, full.indexOf('Content-Type: application/pdf') + 10, full.length - 200, full.length - 5]) {
      const { m } = await parse(full.slice(0, cut));
      assert.equal(m.from?.address, 'a@example.com');
      assert.equal(m.limit, null);
    }
    const { m } = await parse(full.slice(0, full.length - 200));
    assert.equal(m.attachments.length, 1);
    assert.ok(m.attachments[0]!.size < 3000 && m.attachments[0]!.size > 2000, String(m.attachments[0]!.size));
  });

  test('10,000 header fields: read up to the 1,000th, STRUCTURE_LIMIT', async () => {
    const { m } = await parse(manyHeaders(10_000));
    assert.equal(m.limit, 'HEADER_FIELDS');
    assert.equal(m.headers.length, EML_LIMITS.maxHeaderFields);
    assert.equal(m.text, null);
    assert.equal(analyzeMessage(m, null, new Set()).rules.STRUCTURE_LIMIT!.score, 2);
  });

  test('a header line of 1 MB: read up to it', async () => {
    const raw = message({ From: 'a@example.com', 'Message-ID': '<x@example.com>', Subject: 'A'.repeat(1 << 20) }, 'body');
    const { m } = await parse(raw);
    assert.equal(m.limit, 'HEADER_FIELD_SIZE');
    assert.equal(m.subject, null);
    assert.equal(m.messageId, '<x@example.com>');
  });

  test('a header folded over 100,000 lines into 1 MB: read up to it', async () => {
    const raw = message({ From: 'a@example.com', Subject: Array.from({ length: 100_000 }, () => 'word').join('\r\n ') }, 'body');
    const { m } = await parse(raw);
    assert.equal(m.limit, 'HEADER_FIELD_SIZE');
  });

  test('1 MB of headers in 60 KB fields: read up to the megabyte', async () => {
    const fields: [string, string][] = [['From', 'a@example.com']];
    for (let i = 0; i < 20; i++) fields.push([`X-Pad-${i}`, 'p'.repeat(60_000)]);
    const { m } = await parse(message(fields, 'body'));
    assert.equal(m.limit, 'HEADER_BYTES');
  });

  test('multiparts nested 1,000 deep: read to depth 32, the innermost text not reached', async () => {
    const { m } = await parse(nested(1000));
    assert.equal(m.limit, 'DEPTH');
    assert.equal(m.from?.address, 'a@example.com');
    assert.ok(!(m.text ?? '').includes('innermost'));
    const shallow = await parse(nested(20));
    assert.equal(shallow.m.limit, null);
    assert.match(shallow.m.text ?? '', /innermost/);
  });

  test('message/rfc822 nested 1,000 deep: bounded like multiparts', async () => {
    const { m } = await parse(nestedMessages(1000));
    assert.equal(m.limit, 'DEPTH');
  });

  test('50,000 parts: read up to the 250th', async () => {
    const { m } = await parse(manyParts(50_000));
    assert.equal(m.limit, 'PARTS');
    assert.match(m.text ?? '', /part 248\b/);
    assert.doesNotMatch(m.text ?? '', /part 250\b/);
  });

  test('base64 and quoted-printable never decode to more than they take: 1 MB of padding and soft breaks decode to almost nothing', async () => {
    const qp = message({ From: 'a@example.com', 'Content-Transfer-Encoding': 'quoted-printable' }, '=\r\n'.repeat(300_000) + 'end');
    const q = await parse(qp);
    assert.equal(q.m.text?.trim(), 'end');
    const b64 = message({ From: 'a@example.com', 'Content-Type': 'application/octet-stream; name=x.bin', 'Content-Transfer-Encoding': 'base64' },
      `${'A'.repeat(76)}\r\n`.repeat(13_000));
    const b = await parse(b64);
    assert.equal(b.m.attachments.length, 1);
    assert.ok(b.m.attachments[0]!.size <= 13_000 * 57, String(b.m.attachments[0]!.size));
    // Entities in HTML shrink too: &#x10FFFF; is 10 bytes for one character.
    const html = message({ From: 'a@example.com', 'Content-Type': 'text/html' }, '&#x41;'.repeat(200_000));
    const h = await parse(html);
    assert.equal(h.m.htmlText?.length, 200_000);
  });

  test('an attachment over the limit: reported with its estimated size, not decoded, no hash', async () => {
    const bytes = Buffer.alloc(300_000, 7);
    const { m } = await parse(withAttachment('big.pdf', bytes, 'application/pdf'), { attachmentLimit: 100_000, nonce: 'n' });
    assert.equal(m.attachments.length, 1);
    const a = m.attachments[0]!;
    assert.deepEqual([a.filename, a.contentType, a.omitted, a.sha256, a.bytes], ['big.pdf', 'application/pdf', 'SIZE_LIMIT', null, null]);
    assert.ok(Math.abs(a.size - 300_000) <= 3, String(a.size));
    assert.equal(m.text?.trim(), 'see attached');
    // Under the limit: decoded and hashed.
    const kept = (await parse(withAttachment('big.pdf', bytes, 'application/pdf'))).m.attachments[0]!;
    assert.deepEqual([kept.size, kept.omitted, kept.sha256?.length], [300_000, null, 64]);
  });

  test('a forged omission marker in the message is not believed (the nonce is random per request)', async () => {
    const raw = withAttachment('x.txt', Buffer.from('hello'), 'text/plain').replace('Content-Disposition:', 'Content-Description: palisade-omitted-n-0\r\nContent-Disposition:');
    const { m } = await parse(raw, { attachmentLimit: 100, nonce: 'other' });
    assert.equal(m.attachments[0]!.omitted, null);
    assert.equal(m.attachments[0]!.size, 5);
  });

  test('invalid and unknown charsets, in bodies and encoded words: text, never an exception', async () => {
    const raw = message({
      From: '=?x-unknown?B?QW5u?= <a@example.com>', Subject: '=?utf-8?Q?caf=C3?= =?bogus?Q?x?=', 'Content-Type': 'text/plain; charset="no-such-charset"',
    }, 'h\xe9llo w\xf6rld');
    const { m } = await parse(raw);
    assert.equal(m.from?.address, 'a@example.com');
    assert.equal(typeof m.subject, 'string');
    assert.match(m.text ?? '', /llo w/);
  });

  test('NUL bytes in headers and bodies: kept out of the JSON as U+FFFD', async () => {
    const raw = message({ From: 'a@example.com', Subject: 'a\u0000b' }, 'x\u0000y\u0000'.repeat(1000));
    const { m } = await parse(raw);
    assert.ok(!JSON.stringify(m).includes('\\u0000'));
    assert.equal(m.subject, 'a\ufffdb');
  });

  test('no header at all, binary noise, a lone CR, an empty line only: parsed, never thrown', async () => {
    for (const raw of ['just text', '\r', '\r\n', Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 256))]) {
      const { m } = await parse(typeof raw === 'string' ? raw : raw);
      assert.equal(m.from, null);
    }
  });

  test('a 4 MB body line without a line break and 5 MB of base64 in one part: linear', async () => {
    await parse(message({ From: 'a@example.com' }, 'A'.repeat(4 << 20)));
    await parse(message({ From: 'a@example.com', 'Content-Type': 'image/png; name=a.png', 'Content-Transfer-Encoding': 'base64' },
      base64Lines(Buffer.alloc(3_700_000, 3))));
  });

  test('HTML built to make a parser backtrack: unclosed tags, unclosed style blocks, 100,000 anchors', async () => {
    for (const body of ['<a '.repeat(300_000), '<style>x'.repeat(100_000), '<style>x</style>'.repeat(100_000), '<a href="http://x.example/">'.repeat(100_000), '<div style="display:none">'.repeat(100_000)]) {
      await parse(message({ From: 'a@example.com', 'Content-Type': 'text/html' }, body));
    }
  });
});
