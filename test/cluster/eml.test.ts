// POST /v1/eml on the running service: authorisation, the parse, SPF/DKIM/DMARC/ARC against a
// loopback DNS server, the sender IP from the Received chain, the message rules, the option headers,
// usage and spam submissions, and every bad-input case of docs/eml.md over HTTP.
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { base64Lines, HAM, manyHeaders, manyParts, message, nested, nestedMessages, withAttachment } from '../helpers/eml.js';
import { createTestKey, startService, withServiceDb, type Service, type TestKey } from '../helpers/service.js';

const { dkimSign } = createRequire(import.meta.url)('mailauth/lib/dkim/sign') as {
  dkimSign(input: Buffer, opts: { signatureData: { signingDomain: string; selector: string; privateKey: string }[] }): Promise<{ signatures: string }>;
};

let svc: Service;
let dns: DnsServer;
let key: TestKey;
let privateKey: string;

async function post(body: string | Buffer, headers: Record<string, string> = {}, k: TestKey = key): Promise<{ status: number; json: Record<string, any>; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${svc.url}/v1/eml`, {
    method: 'POST', headers: { authorization: `Bearer ${k.secret}`, 'content-type': 'application/octet-stream', ...headers },
    body: typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, any>, ms: performance.now() - started };
}

const SIGNED_BODY = 'Hello Bob,\r\nthe invoice for June is attached to our portal as usual.\r\nRegards, Anna\r\n';
function unsigned(receivedFrom: string): string {
  return message([
    ['Received', `from mail.bakery-weber.de (mail.bakery-weber.de [${receivedFrom}]) by mx.palisade.test (Postfix) with ESMTPS id 7; Tue, 1 Jul 2025 10:00:01 +0000`],
    ['Return-Path', '<anna@bakery-weber.de>'],
    ['From', 'Anna Weber <anna@bakery-weber.de>'], ['To', 'bob@example.org'], ['Subject', 'June invoice'],
    ['Date', 'Tue, 1 Jul 2025 10:00:00 +0000'], ['Message-ID', '<inv-6@bakery-weber.de>'],
  ], SIGNED_BODY);
}
async function signed(receivedFrom: string): Promise<string> {
  const raw = unsigned(receivedFrom);
  const { signatures } = await dkimSign(Buffer.from(raw), { signatureData: [{ signingDomain: 'bakery-weber.de', selector: 'mail', privateKey }] });
  return signatures + raw;
}

before(async () => {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  privateKey = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicKey = pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  dns = await startDnsServer();
  dns.zones.set('bakery-weber.de', {
    kind: 'records', mx: [{ preference: 10, exchange: 'mx.bakery-weber.de' }], txt: ['v=spf1 ip4:203.0.113.5 -all'],
  });
  dns.zones.set('mail._domainkey.bakery-weber.de', { kind: 'records', txt: [`v=DKIM1; k=rsa; p=${publicKey}`] });
  dns.zones.set('_dmarc.bakery-weber.de', { kind: 'records', txt: ['v=DMARC1; p=reject'] });
  dns.zones.set('example.org', { kind: 'records', mx: [{ preference: 10, exchange: 'mx.example.org' }] });
  svc = await startService({
    env: { WORKERS: '1', DNS_SERVERS: dns.server, DNS_TIMEOUT: '500ms', EML_BODY_LIMIT: '6MB', EML_TRUSTED_RELAYS: '198.18.0.0/15' },
  });
  key = await createTestKey(svc, {});
});
after(async () => {
  await svc?.stop();
  await dns?.close();
});

describe('authorisation and the request', () => {
  test('no credentials: 401 AUTHORIZATION_REQUIRED; a wrong secret: 401 API_KEY_INVALID', async () => {
    const none = await fetch(`${svc.url}/v1/eml`, { method: 'POST', body: HAM });
    assert.equal(none.status, 401);
    assert.equal(((await none.json()) as { error: string }).error, 'AUTHORIZATION_REQUIRED');
    const wrong = await post(HAM, {}, { ...key, secret: `sec_${'A'.repeat(32)}` });
    assert.deepEqual([wrong.status, wrong.json.error], [401, 'API_KEY_INVALID']);
  });

  test('curl\'s default type (x-www-form-urlencoded) and message/rfc822 are accepted; JSON and form uploads: 415', async () => {
    assert.equal((await post(HAM, { 'content-type': 'application/x-www-form-urlencoded' })).status, 200);
    assert.equal((await post(HAM, { 'content-type': 'message/rfc822' })).status, 200);
    const j = await post(HAM, { 'content-type': 'application/json' });
    assert.deepEqual([j.status, j.json.error], [415, 'UNSUPPORTED_MEDIA_TYPE']);
    const f = await post(HAM, { 'content-type': 'multipart/form-data; boundary=x' });
    assert.deepEqual([f.status, f.json.error], [415, 'UNSUPPORTED_MEDIA_TYPE']);
  });

  test('an empty body: 400 INVALID_PARAMETER; over EML_BODY_LIMIT: 413 BODY_TOO_LARGE', async () => {
    const empty = await post('');
    assert.deepEqual([empty.status, empty.json.error], [400, 'INVALID_PARAMETER']);
    const big = await post(message({ From: 'a@example.com' }, 'x'.repeat(6 * 1024 * 1024 + 10)));
    assert.deepEqual([big.status, big.json.error, big.json.statusCode], [413, 'BODY_TOO_LARGE', 413]);
  });

  test('option headers with wrong values: 400 INVALID_PARAMETER naming the header', async () => {
    for (const [name, value] of [['x-authenticate', 'yes'], ['x-attachments-upload', '2'], ['x-attachments-size-limit', '-1'],
      ['x-attachments-size-limit', '1e6'], ['x-attachments-size-limit', '99999999999'], ['x-disable-rules', 'NO_SUCH_RULE']]) {
      const r = await post(HAM, { [name!]: value! });
      assert.deepEqual([r.status, r.json.error], [400, 'INVALID_PARAMETER'], `${name}: ${value}`);
    }
  });
});

describe('the parse', () => {
  test('an ordinary message: addresses, subject, date, ids, headers, text; GOOD with every block', async () => {
    const { status, json } = await post(HAM);
    assert.equal(status, 200);
    assert.deepEqual(json.from, { name: 'Anna Weber', address: 'anna@bakery-weber.de' });
    assert.deepEqual(json.to, [{ name: '', address: 'orders@example.org' }]);
    assert.deepEqual([json.cc, json.replyTo], [[], []]);
    assert.equal(json.subject, 'Table for Friday');
    assert.equal(json.date, '2025-07-01T10:00:00.000Z');
    assert.equal(json.messageId, '<a1b2c3@bakery-weber.de>');
    assert.match(json.text, /book a table for four/);
    assert.deepEqual([json.html, json.htmlText, json.limit, json.authentication], [null, null, null, null]);
    assert.deepEqual(json.headers[1], { key: 'from', value: 'Anna Weber <anna@bakery-weber.de>' });
    assert.equal(json.senderIp, '203.0.113.5');
    const c = json.classification;
    assert.equal(c.classification, 'GOOD');
    assert.deepEqual(Object.keys(c).sort(), ['classification', 'device', 'email', 'ip', 'location', 'message', 'rateLimit', 'reasons', 'score', 'similarity', 'text', 'time']);
    assert.equal(c.email.domain, 'bakery-weber.de');
    assert.equal(c.email.rules.MX.score, 0);
    assert.ok(c.ip !== null && typeof c.ip.rules === 'object');
    assert.equal(c.message.score, 0);
    assert.deepEqual(Object.keys(c.message.rules), ['REPLY_TO_MISMATCH', 'DISPLAY_NAME_SPOOF', 'LINK_TEXT_MISMATCH', 'EXECUTABLE_ATTACHMENT',
      'DOUBLE_EXTENSION', 'MISSING_MESSAGE_ID', 'MISSING_DATE', 'HTML_ONLY', 'HTML_ONLY_HIDDEN_TEXT', 'SPF_FAIL', 'DKIM_FAIL', 'DMARC_FAIL', 'STRUCTURE_LIMIT']);
  });

  test('attachments: filename, type, size, SHA-256 and base64 content', async () => {
    const bytes = Buffer.from('%PDF-1.4 not really a pdf');
    const { json } = await post(withAttachment('report.pdf', bytes, 'application/pdf'));
    assert.equal(json.attachments.length, 1);
    const a = json.attachments[0];
    assert.deepEqual([a.filename, a.contentType, a.disposition, a.size, a.omitted, a.contentUri], ['report.pdf', 'application/pdf', 'attachment', bytes.length, null, null]);
    assert.equal(a.sha256, createHash('sha256').update(bytes).digest('hex'));
    assert.equal(Buffer.from(a.content, 'base64').toString(), bytes.toString());
  });

  test('X-Attachments-Size-Limit: a larger attachment is reported (estimated size), not decoded, no content', async () => {
    const { json } = await post(withAttachment('big.bin', Buffer.alloc(50_000, 1)), { 'x-attachments-size-limit': '10000' });
    const a = json.attachments[0];
    assert.deepEqual([a.omitted, a.content, a.sha256, a.contentUri], ['SIZE_LIMIT', null, null, null]);
    assert.ok(Math.abs(a.size - 50_000) <= 3, String(a.size));
  });

  test('X-Attachments-Upload: stored under STORAGE_LOCAL_DIR by SHA-256, contentUri instead of content', async () => {
    const bytes = Buffer.from('attachment bytes to keep');
    const { json } = await post(withAttachment('keep.txt', bytes, 'text/plain'), { 'x-attachments-upload': 'true' });
    const a = json.attachments[0];
    assert.equal(a.content, null);
    assert.match(a.contentUri, /^file:\/\//);
    const path = fileURLToPath(a.contentUri);
    assert.ok(path.startsWith(svc.dataDir), path);
    assert.ok(path.endsWith(`/uploads/eml/${a.sha256}`), path);
    assert.equal(readFileSync(path, 'utf8'), bytes.toString());
    assert.ok(existsSync(path));
  });
});

describe('authentication (X-Authenticate) against the loopback DNS fixtures', () => {
  test('signed, sent from the SPF-permitted IP: SPF, DKIM and DMARC pass; not asked: null', async () => {
    const raw = await signed('203.0.113.5');
    const { status, json } = await post(raw, { 'x-authenticate': 'true' });
    assert.equal(status, 200);
    const auth = json.authentication;
    assert.equal(auth.SPF.result, 'pass', auth.SPF.comment);
    assert.equal(auth.SPF.domain, 'bakery-weber.de');
    assert.equal(auth.DKIM.length, 1);
    assert.deepEqual([auth.DKIM[0].result, auth.DKIM[0].signingDomain, auth.DKIM[0].selector], ['pass', 'bakery-weber.de', 'mail']);
    assert.equal(auth.DMARC.result, 'pass', auth.DMARC.comment);
    assert.equal(auth.DMARC.policy, 'reject');
    assert.equal(auth.ARC.result, 'none');
    for (const rule of ['SPF_FAIL', 'DKIM_FAIL', 'DMARC_FAIL']) assert.equal(json.classification.message.rules[rule].score, 0, rule);
    assert.equal((await post(raw)).json.authentication, null);
  });

  test('from an IP SPF does not permit, body altered after signing: SPF fail, DKIM fail, DMARC fail; the message is BAD', async () => {
    const raw = (await signed('192.0.2.77')).replace('the invoice for June', 'the invoice for JULY');
    const { json } = await post(raw, { 'x-authenticate': 'true' });
    const auth = json.authentication;
    assert.equal(json.senderIp, '192.0.2.77');
    assert.equal(auth.SPF.result, 'fail');
    assert.deepEqual([auth.DKIM[0].result, auth.DKIM[0].comment], ['neutral', 'body hash did not verify']);
    assert.equal(auth.DMARC.result, 'fail');
    const rules = json.classification.message.rules;
    assert.deepEqual([rules.SPF_FAIL.score, rules.DKIM_FAIL.score, rules.DMARC_FAIL.score], [1, 1, 2]);
    assert.equal(json.classification.classification, 'BAD');
    assert.ok(json.classification.reasons.includes('DMARC_FAIL'));
  });

  test('a DNS server that never answers: temperror within the deadline, not a hang', async () => {
    dns.zones.set('slow-sender.example', { kind: 'hang' });
    dns.zones.set('_dmarc.slow-sender.example', { kind: 'hang' });
    const raw = message({
      Received: 'from x (x [203.0.113.9]) by mx.palisade.test; Tue, 1 Jul 2025 10:00:01 +0000',
      From: 'a@slow-sender.example', To: 'b@example.org', Subject: 'hi', Date: 'Tue, 1 Jul 2025 10:00:00 +0000', 'Message-ID': '<s@slow-sender.example>',
    }, 'hello\r\n');
    const { status, json, ms } = await post(raw, { 'x-authenticate': 'true' });
    assert.equal(status, 200);
    assert.equal(json.authentication.SPF.result, 'temperror');
    assert.ok(ms < 4000, `${ms} ms`);
  });
});

describe('the sender IP from the trusted Received chain', () => {
  test('internal and EML_TRUSTED_RELAYS hops are stepped over; fields below the first untrusted hop are not believed', async () => {
    const raw = message([
      ['Received', 'from relay.internal (relay.internal [10.1.2.3]) by mx.palisade.test; Tue, 1 Jul 2025 10:00:03 +0000'],
      ['Received', 'from gateway.example (gateway.example [198.18.4.4]) by relay.internal; Tue, 1 Jul 2025 10:00:02 +0000'],
      ['Received', 'from sender.example (unknown [192.0.2.44]) by gateway.example; Tue, 1 Jul 2025 10:00:01 +0000'],
      ['Received', 'from forged.example (forged [8.8.8.8]) by sender.example; Tue, 1 Jul 2025 10:00:00 +0000'],
      ['From', 'a@example.org'], ['Subject', 'chain'], ['Date', 'Tue, 1 Jul 2025 10:00:00 +0000'], ['Message-ID', '<c@example.org>'],
    ], 'hello\r\n');
    const { json } = await post(raw);
    assert.equal(json.senderIp, '192.0.2.44');
    assert.notEqual(json.classification.ip, null);
    const none = await post(message({ From: 'a@example.org', Subject: 'no chain' }, 'hello'));
    assert.deepEqual([none.json.senderIp, none.json.classification.ip], [null, null]);
  });
});

describe('message rules', () => {
  test('a phishing message fires its rules and is BAD', async () => {
    const raw = message({
      From: '"service@paypal.com" <alerts@secure-update.com>', 'Reply-To': 'claims@another-domain.example', To: 'bob@example.org',
      Subject: 'Your account is locked', 'Content-Type': 'multipart/mixed; boundary="M"',
    }, '--M\r\nContent-Type: text/html\r\n\r\n<p>Verify at <a href="http://login.evil.example/x">https://www.paypal.com/signin</a>.</p>'
      + '<div style="display:none">lorem ipsum dolor sit amet consectetur adipiscing</div>\r\n'
      + `--M\r\nContent-Type: application/octet-stream; name="invoice.pdf.exe"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(Buffer.from('MZ fake'))}\r\n--M--\r\n`);
    const { json } = await post(raw);
    const r = json.classification.message.rules;
    assert.deepEqual(
      ['REPLY_TO_MISMATCH', 'DISPLAY_NAME_SPOOF', 'LINK_TEXT_MISMATCH', 'EXECUTABLE_ATTACHMENT', 'DOUBLE_EXTENSION', 'MISSING_MESSAGE_ID', 'MISSING_DATE', 'HTML_ONLY', 'HTML_ONLY_HIDDEN_TEXT'].map((n) => r[n].score),
      [1, 2, 2, 3, 3, 0.5, 0.5, 0.3, 1.5],
    );
    assert.equal(json.classification.classification, 'BAD');
    // secure-update.com has no zone on the loopback DNS server: NXDOMAIN, MX 3 beside the attachment rules.
    assert.deepEqual(json.classification.reasons.slice(0, 3).sort(), ['DOUBLE_EXTENSION', 'EXECUTABLE_ATTACHMENT', 'MX']);
    assert.match(json.htmlText, /https:\/\/www\.paypal\.com\/signin <http:\/\/login\.evil\.example\/x>/);
    assert.doesNotMatch(json.htmlText, /lorem/);
  });

  test('a mailing list may set Reply-To elsewhere; X-Disable-Rules leaves rules out of the block and the score', async () => {
    const list = message({
      From: 'ann@example.org', 'Reply-To': 'list@lists.example.net', 'List-Id': '<list.example.net>', Subject: 's',
      Date: 'Tue, 1 Jul 2025 10:00:00 +0000', 'Message-ID': '<l@example.org>',
    }, 'hello list');
    assert.equal((await post(list)).json.classification.message.rules.REPLY_TO_MISMATCH.score, 0);
    const bare = message({ From: 'ann@example.org', Subject: 's' }, 'hello');
    const all = await post(bare);
    assert.equal(all.json.classification.message.score, 1);
    const off = await post(bare, { 'x-disable-rules': 'MISSING_DATE, MISSING_MESSAGE_ID' });
    assert.equal(off.json.classification.message.rules.MISSING_DATE, undefined);
    assert.equal(off.json.classification.message.score, 0);
    assert.ok(Math.abs(all.json.classification.score - off.json.classification.score - 1) < 0.011);
  });
});

describe("the key's bands", () => {
  // DISPLAY_NAME_SPOOF 2 and MISSING_DATE 0.5: a score of 2.5, BAD for mail (from 2), NEUTRAL for forms (from 3).
  const spoof = message({ From: '"service@paypal.com" <ann@example.org>', To: 'bob@example.org', 'Message-ID': '<o@example.org>', Subject: 'Your order' },
    'Hello, your order was shipped today.');
  const classified = async (classification?: Record<string, unknown>) => {
    const k = classification === undefined ? key : await createTestKey(svc, { challengePolicy: { classification } });
    const { status, json } = await post(spoof, {}, k);
    assert.equal(status, 200);
    return [json.classification.score, json.classification.classification];
  };

  test("a key without bands gets mail's: BAD from 2 (the form's would say NEUTRAL)", async () => {
    assert.deepEqual(await classified(), [2.5, 'BAD']);
    assert.deepEqual(await classified({ disableRules: ['FREE_PROVIDER'] }), [2.5, 'BAD']);
  });

  test('bands the key sets win; a band it leaves unset is mail\'s', async () => {
    assert.deepEqual(await classified({ neutralScore: 1, badScore: 3 }), [2.5, 'NEUTRAL']);
    assert.deepEqual(await classified({ badScore: 3 }), [2.5, 'NEUTRAL']);
    assert.deepEqual(await classified({ neutralScore: 2.6 }), [2.5, 'GOOD']);
    assert.deepEqual(await classified({ neutralScore: 2 }), [2.5, 'BAD']);
  });
});

describe('usage and spam submissions', () => {
  test('each message counts in usage with its classification; a BAD one is kept with source eml', async () => {
    const k = await createTestKey(svc, {});
    await post(HAM, {}, k);
    await post(withAttachment('x.pdf.exe', Buffer.from('MZ'), 'application/octet-stream'), {}, k);
    let usage: Record<string, any> = {};
    let rows: Record<string, any>[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${svc.url}/usage`, { headers: { authorization: `Bearer ${k.secret}` } });
      usage = (await res.json()) as Record<string, any>;
      rows = await withServiceDb(svc, (sql) => sql`select * from spam_submissions where api_key_id = ${k.id} order by time`);
      if (usage.classifications?.BAD === '1' && rows.length === 1) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(usage.classifications, { BAD: '1', GOOD: '1', NEUTRAL: '0' });
    assert.equal(rows[0]!.source, 'eml');
    assert.ok(rows[0]!.reasons.includes('DOUBLE_EXTENSION'));
  });
});

describe('bad input over HTTP: 200 within bounded time, never a 5xx', () => {
  const cases: [string, () => string | Buffer, string | null][] = [
    ['truncated MIME', () => withAttachment('a.pdf', Buffer.alloc(5000, 1), 'application/pdf').slice(0, 3000), null],
    ['10,000 headers', () => manyHeaders(10_000), 'HEADER_FIELDS'],
    ['a header line of 1 MB', () => message({ From: 'a@example.com', Subject: 'S'.repeat(1 << 20) }, 'x'), 'HEADER_FIELD_SIZE'],
    ['multiparts nested 1,000 deep', () => nested(1000), 'DEPTH'],
    ['message/rfc822 nested 1,000 deep', () => nestedMessages(1000), 'DEPTH'],
    ['50,000 parts', () => manyParts(50_000), 'PARTS'],
    ['quoted-printable of 1 MB of soft breaks', () => message({ From: 'a@example.com', 'Content-Transfer-Encoding': 'quoted-printable' }, '=\r\n'.repeat(350_000)), null],
    ['base64 of 4 MB in one attachment', () => withAttachment('a.bin', Buffer.alloc(3_000_000, 9)), null],
    ['an invalid charset', () => message({ From: 'a@example.com', 'Content-Type': 'text/plain; charset=utf-99' }, 'h\xe9llo'), null],
    ['NUL bytes', () => message({ From: 'a@exa\u0000mple.com', Subject: '\u0000' }, '\u0000'.repeat(100_000)), null],
    ['an attachment over the limit', () => withAttachment('big.zip', Buffer.alloc(200_000, 2)), null],
    ['random bytes', () => Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 2654435761) % 251)), null],
  ];
  for (const [name, build, limit] of cases) {
    test(name, async () => {
      const body = build();
      const { status, json, ms } = await post(body, { 'x-attachments-size-limit': '100000', 'x-authenticate': 'true' });
      assert.equal(status, 200, JSON.stringify(json).slice(0, 200));
      assert.equal(json.limit, limit);
      assert.ok(ms < 5000, `${ms} ms`);
      if (limit !== null) assert.equal(json.classification.message.rules.STRUCTURE_LIMIT.score, 2);
      assert.ok(!JSON.stringify(json).includes('\\u0000'));
    });
  }
  test('the service is still up and answering after all of them', async () => {
    assert.equal((await post(HAM)).status, 200);
  });
});
