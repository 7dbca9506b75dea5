// The SpamAssassin corpus as the evaluation reads it: every group holds the number of messages the
// package documents, the tune/test split is fixed by the message id, and the body extraction (MIME
// walk, quoted-printable, base64, charsets, HTML to text) gives exactly the text a form would carry.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractMessage } from '../../eval/lib/mime.js';
import { DOCUMENTED_COUNTS, loadSpamAssassin, SPAM_ASSASSIN_GROUPS, splitOf } from '../../eval/lib/spam-assassin.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64').replace(/.{1,60}/g, '$&\n');

test('eval corpus: each SpamAssassin group holds the documented number of messages, labelled by group', () => {
  const messages = loadSpamAssassin();
  assert.equal(messages.length, 6046);
  const counts = new Map<string, number>();
  const testHalf = new Map<string, number>();
  for (const m of messages) {
    counts.set(m.group, (counts.get(m.group) ?? 0) + 1);
    if (m.split === 'test') testHalf.set(m.group, (testHalf.get(m.group) ?? 0) + 1);
    assert.equal(m.label, m.group.startsWith('spam') ? 'spam' : 'ham', m.id);
    assert.equal(m.split, splitOf(m.id));
    assert.ok(m.text.length <= 10_000, m.id);
  }
  assert.deepEqual(Object.fromEntries(counts), DOCUMENTED_COUNTS);
  assert.deepEqual(
    Object.fromEntries(SPAM_ASSASSIN_GROUPS.map((g) => [g, testHalf.get(g)])),
    { 'easy-ham-1': 1259, 'easy-ham-2': 705, 'hard-ham-1': 132, 'spam-1': 242, 'spam-2': 718 },
  );
  const first = messages[0]!;
  assert.equal(first.id, 'easy-ham-1/00001.7c53336b37003a9286aba55d2945844c');
  assert.equal(first.email, 'kre@munnari.OZ.AU');
  assert.ok(first.text.startsWith('Date: Wed, 21 Aug 2002 10:54:46 -0500\nFrom: Chris Garrigues'), first.text.slice(0, 80));
  // All but seven have text (those are an image or an iframe only, or a boundary that does not match).
  assert.equal(messages.filter((m) => m.text === '').length, 7);
  // The charsets are decoded: no replacement characters left from a wrong guess in more than a few.
  assert.ok(messages.filter((m) => m.text.includes('\ufffd')).length <= 10);
});

test('eval corpus: the split is a fixed function of the id', () => {
  assert.equal(splitOf('easy-ham-1/00001.7c53336b37003a9286aba55d2945844c'), 'tune');
  assert.equal(splitOf('spam-2/00100.f18596df33992ee2af3e79f71f092e69'), 'test');
  assert.equal(splitOf('a'), 'test');
});

test('eval corpus: a multipart message with quoted-printable, base64, charsets and HTML gives its exact text', () => {
  const html = '<html><head><title>t</title><style>p{color:red}</style></head><body><p>Preis: 10&nbsp;&euro; &amp; mehr</p>' +
    '<script>alert(1)</script><!-- hidden --><a href="https://shop.example/x">Shop</a><br>Tsch&#xFC;ss &#8211; bis bald</body></html>';
  const raw = [
    'From ana@example.org  Mon Jan  1 00:00:00 2024',
    'From: "Ana M" <ana@example.org>',
    'Subject: not part of the body',
    'Content-Type: multipart/mixed;',
    '\tboundary="outer"',
    '',
    'preamble, ignored',
    '--outer',
    'Content-Type: multipart/alternative; boundary="inner"',
    '',
    '--inner',
    'Content-Type: text/plain; charset="iso-8859-1"',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Gr=FC=DFe aus K=F6ln, caf=E9 =3D 5 =80 f=',
    'or two',
    '--inner',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>the HTML twin of the plain part, not taken</p>',
    '--inner--',
    '--outer',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    b64(html),
    '--outer',
    'Content-Type: application/pdf; name="a.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    'JVBERi0xLjQK',
    '--outer',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Disposition: attachment; filename="notes.txt"',
    '',
    'attached notes, not the body',
    '--outer--',
    'epilogue, ignored',
  ].join('\r\n');
  const latin1 = Buffer.from(raw, 'latin1');
  assert.deepEqual(extractMessage(latin1), {
    from: 'ana@example.org',
    body: 'Grüße aus Köln, café = 5 € for two\n\nPreis: 10 € & mehr\nShop (https://shop.example/x)\nTschüss – bis bald',
  });
  assert.equal(extractMessage(latin1, { maxChars: 10 }).body, 'Grüße aus ');
});

test('eval corpus: loose real-world forms still give their text', () => {
  // No ';' before the charset (seen in spam-2), an undeclared windows-1252 byte, an undeclared UTF-8 body.
  assert.equal(extractMessage('From: x@example.org\nContent-Type: TEXT/PLAIN charset=US-ASCII\n\nhello there').body, 'hello there');
  assert.equal(extractMessage(Buffer.from('From: x@example.org\n\ncaf\xe9  au   lait \n\n\n\nfin', 'latin1')).body, 'café au lait\n\nfin');
  assert.equal(extractMessage(Buffer.from('From: x@example.org\n\ncafé ☕', 'utf8')).body, 'café ☕');
  // An empty text/plain beside the HTML that carries the message: the HTML is taken.
  const alternative = 'From: Spam <s@example.org>\nContent-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n\n\n' +
    '--b\nContent-Type: text/html\n\n<b>BUY</b> <a href=\'http://x.example/\'>now</a>\n--b--\n';
  assert.deepEqual(extractMessage(alternative), { from: 's@example.org', body: 'BUY now (http://x.example/)' });
  // A multipart without its boundary, and nesting deeper than any real message, give no text rather than throwing.
  assert.equal(extractMessage('From: x@example.org\nContent-Type: multipart/mixed\n\n--a\n\ntext\n--a--').body, '');
  let nested = 'Content-Type: text/plain\n\ndeep text';
  for (let i = 0; i < 10; i++) nested = `Content-Type: multipart/mixed; boundary="b${i}"\n\n--b${i}\n${nested}\n--b${i}--`;
  assert.equal(extractMessage(`From: x@example.org\n${nested}`).body, '');
  assert.equal(extractMessage('Subject: no sender\n\nbody').from, null);
  assert.equal(extractMessage('From: bare.address@example.org (Bare)\n\nbody').from, 'bare.address@example.org');
});
