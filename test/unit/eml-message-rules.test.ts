// The message rules, the sender IP from the Received chain, the text of HTML bodies and the option
// headers of /v1/eml, on parsed messages without a server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Authentication } from '../../src/classifier/eml/authenticate.js';
import { htmlToText } from '../../src/classifier/eml/html-text.js';
import { analyzeMessage, MESSAGE_RULES } from '../../src/classifier/eml/message-rules.js';
import { parseEmlOptions } from '../../src/classifier/eml/options.js';
import { parseMessage } from '../../src/classifier/eml/parse-message.js';
import { connectingAddress, senderFromReceived } from '../../src/classifier/eml/received.js';
import { parseCidrList } from '../../src/parse.js';
import { classify } from '../../src/classifier/classify.js';
import { classifyMessage, messageTexts } from '../../src/classifier/eml/classify-message.js';
import { DomainList } from '../../src/classifier/email-domains.js';
import { PhishingList } from '../../src/classifier/phishing-list.js';
import { RULE_WEIGHTS, SOURCE_BANDS } from '../../src/classifier/sources.js';
import { HAM, message, withAttachment } from '../helpers/eml.js';

const NONE = new Set<string>();
const EMPTY_LIST = DomainList.EMPTY;
const parse = (raw: string) => parseMessage(Buffer.from(raw, 'latin1'), { attachmentLimit: 5_000_000, nonce: 'n' });
const BASE = { From: 'Ann <ann@shop.example.com>', Date: 'Tue, 1 Jul 2025 10:00:00 +0000', 'Message-ID': '<m@shop.example.com>', Subject: 's' };
async function fired(raw: string, auth: Authentication | null = null): Promise<string[]> {
  const block = analyzeMessage(await parse(raw), auth, NONE);
  return Object.entries(block.rules).filter(([, r]) => r.score > 0).map(([n]) => n);
}

describe('message rules', () => {
  test('an ordinary message fires none; the block lists every rule with 0', async () => {
    const block = analyzeMessage(await parse(HAM), null, NONE);
    assert.deepEqual(Object.keys(block.rules), MESSAGE_RULES.map((r) => r.name));
    assert.equal(block.score, 0);
  });

  test('REPLY_TO_MISMATCH: another registrable domain; not a subdomain of the same; not a mailing list', async () => {
    assert.deepEqual(await fired(message({ ...BASE, 'Reply-To': 'x@elsewhere.example.org' }, 'hi')), ['REPLY_TO_MISMATCH']);
    assert.deepEqual(await fired(message({ ...BASE, 'Reply-To': 'support@help.example.com' }, 'hi')), []);
    assert.deepEqual(await fired(message({ ...BASE, 'Reply-To': 'list@lists.example.org', 'List-Post': '<mailto:list@lists.example.org>' }, 'hi')), []);
  });

  test('DISPLAY_NAME_SPOOF: an address or domain in the display name that is not the sender\'s', async () => {
    assert.deepEqual(await fired(message({ ...BASE, From: '"security@paypal.com" <x@shop.example.com>' }, 'hi')), ['DISPLAY_NAME_SPOOF']);
    assert.deepEqual(await fired(message({ ...BASE, From: 'PayPal.com Support <x@shop.example.com>' }, 'hi')), ['DISPLAY_NAME_SPOOF']);
    assert.deepEqual(await fired(message({ ...BASE, From: '"Ann (example.com)" <ann@mail.example.com>' }, 'hi')), []);
    assert.deepEqual(await fired(message({ ...BASE, From: 'Ann Smith <ann@shop.example.com>' }, 'hi')), []);
  });

  test('LINK_TEXT_MISMATCH: a URL shown as text that points to another site; a plain label or the same site does not', async () => {
    const html = (a: string) => message({ ...BASE, 'Content-Type': 'multipart/alternative; boundary=A' },
      `--A\r\nContent-Type: text/plain\r\n\r\nsee the link\r\n--A\r\nContent-Type: text/html\r\n\r\n<p>${a}</p>\r\n--A--\r\n`);
    assert.deepEqual(await fired(html('<a href="https://bank.attacker.example/">www.mybank.com</a>')), ['LINK_TEXT_MISMATCH']);
    assert.deepEqual(await fired(html('<a href="https://www.mybank.com/login">https://mybank.com</a>')), []);
    assert.deepEqual(await fired(html('<a href="https://tracker.example/c?u=1">Read more</a>')), []);
    assert.deepEqual(await fired(html('<a href="mailto:x@y.example">www.mybank.com</a>')), []);
  });

  test('EXECUTABLE_ATTACHMENT and DOUBLE_EXTENSION', async () => {
    const MZ = Buffer.from('MZ');
    assert.deepEqual(await fired(withAttachment('setup.exe', MZ)), ['EXECUTABLE_ATTACHMENT']);
    assert.deepEqual(await fired(withAttachment('Invoice.PDF.scr', MZ)), ['EXECUTABLE_ATTACHMENT', 'DOUBLE_EXTENSION']);
    assert.deepEqual(await fired(withAttachment('scan.pdf          .zip', MZ)), ['DOUBLE_EXTENSION']);
    assert.deepEqual(await fired(withAttachment('report.2025.pdf', MZ, 'application/pdf')), []);
  });

  test('MISSING_MESSAGE_ID and MISSING_DATE', async () => {
    assert.deepEqual(await fired(message({ From: 'ann@shop.example.com', Subject: 's' }, 'hi')), ['MISSING_MESSAGE_ID', 'MISSING_DATE']);
  });

  test('HTML_ONLY, and HTML_ONLY_HIDDEN_TEXT from 20 hidden characters; hidden text beside a text part does not count', async () => {
    const only = (html: string) => message({ ...BASE, 'Content-Type': 'text/html' }, html);
    assert.deepEqual(await fired(only('<p>Hello</p>')), ['HTML_ONLY']);
    assert.deepEqual(await fired(only('<p>Hello</p><span style="font-size:0px">cheap meds cheap meds cheap</span>')), ['HTML_ONLY', 'HTML_ONLY_HIDDEN_TEXT']);
    assert.deepEqual(await fired(only('<p>Hello</p><span style="display: none">short</span>')), ['HTML_ONLY']);
    const both = message({ ...BASE, 'Content-Type': 'multipart/alternative; boundary=A' },
      '--A\r\nContent-Type: text/plain\r\n\r\nHello\r\n--A\r\nContent-Type: text/html\r\n\r\n<p>Hello</p><div hidden>preheader text of a newsletter here</div>\r\n--A--\r\n');
    assert.deepEqual(await fired(both), []);
  });

  test('SPF_FAIL, DKIM_FAIL and DMARC_FAIL from the authentication results', async () => {
    const auth = (spf: string, dkim: [string, string][], dmarc: string, policy: string | null): Authentication => ({
      SPF: { result: spf, comment: '', domain: null, clientIp: null },
      DKIM: dkim.map(([result, comment]) => ({ result, comment, signingDomain: null, selector: null, aligned: false })),
      DMARC: { result: dmarc, comment: '', domain: null, policy }, ARC: { result: 'none', comment: '', i: null },
    });
    const m = await parse(HAM);
    const scores = (a: Authentication) => {
      const r = analyzeMessage(m, a, NONE).rules;
      return [r.SPF_FAIL!.score, r.DKIM_FAIL!.score, r.DMARC_FAIL!.score];
    };
    assert.deepEqual(scores(auth('pass', [['pass', '']], 'pass', 'reject')), [0, 0, 0]);
    assert.deepEqual(scores(auth('fail', [['neutral', 'body hash did not verify']], 'fail', 'reject')), [1, 1, 2]);
    assert.deepEqual(scores(auth('softfail', [['fail', 'signature error']], 'fail', 'none')), [0.5, 1, 1]);
    assert.deepEqual(scores(auth('temperror', [['neutral', 'no key'], ['none', 'message not signed']], 'temperror', null)), [0, 0, 0]);
  });

  test('disabled rules are left out', async () => {
    const block = analyzeMessage(await parse(message({ From: 'a@b.example.com' }, 'x')), null, new Set(['MISSING_DATE']));
    assert.equal(block.rules.MISSING_DATE, undefined);
    assert.equal(block.score, 0.5);
  });
});

describe('the classification of a message', () => {
  test('LINKS counts half, REPETITION and PROFANITY nothing; the total and the reasons follow', async () => {
    const deps = { detector: null, mx: null, lists: { disposable: () => EMPTY_LIST, freeProviders: () => EMPTY_LIST, phishing: () => PhishingList.EMPTY } };
    const links = Array.from({ length: 8 }, (_, i) => `https://site${i}.example.org/page`).join(' ');
    const m = await parse(message(BASE, `Hello, the pages: ${links}\r\nsame line again and again\r\n`.repeat(1)));
    const form = await classify({ texts: messageTexts(m), email: m.from!.address }, deps);
    const mail = await classifyMessage(m, null, {}, deps);
    assert.equal(form.text!.rules.LINKS!.score, 1.5);
    assert.equal(mail.text!.rules.LINKS!.score, 0.75);
    assert.equal(mail.text!.score, Math.round((form.text!.score - 0.75) * 100) / 100);
    assert.equal(mail.score, Math.round((form.score - 0.75) * 100) / 100);
    assert.deepEqual(RULE_WEIGHTS.mail, { LINKS: 0.5, REPETITION: 0, PROFANITY: 0 });
    const rude = await parse(message(BASE, 'This damn shit fucking thing broke again, what the hell.'));
    const rudeMail = await classifyMessage(rude, null, {}, deps);
    assert.equal(rudeMail.text!.rules.PROFANITY!.score, 0);
    assert.ok(!rudeMail.reasons.includes('PROFANITY'));
  });

  test("without the key's bands a message gets mail's (BAD from 2), not the form's (BAD from 3)", async () => {
    const deps = { detector: null, mx: null, lists: { disposable: () => EMPTY_LIST, freeProviders: () => EMPTY_LIST, phishing: () => PhishingList.EMPTY } };
    const spoof = await parse(message({ From: '"service@paypal.com" <ann@shop.example.com>', 'Message-ID': '<m@shop.example.com>', Subject: 'Your order' },
      'Hello, your order was shipped today.'));
    const mail = await classifyMessage(spoof, null, {}, deps);
    assert.equal(mail.score, 2.5);
    assert.deepEqual(mail.reasons, ['DISPLAY_NAME_SPOOF', 'MISSING_DATE']);
    assert.equal(mail.classification, 'BAD');
    assert.equal((await classifyMessage(spoof, null, { bands: SOURCE_BANDS.form }, deps)).classification, 'NEUTRAL');
    assert.equal((await classifyMessage(spoof, null, { bands: { neutralScore: 3, badScore: 4 } }, deps)).classification, 'GOOD');
  });
});

describe('the sender IP from the Received chain', () => {
  const none = parseCidrList('');
  test('the TCP-info address, not the HELO literal; IPv6 literals', () => {
    assert.deepEqual(connectingAddress('from [1.2.3.4] (unknown [192.0.2.9]) by mx; date'), { ip: '192.0.2.9', helo: null });
    assert.deepEqual(connectingAddress('from mail.example.com (mail.example.com [IPv6:2001:db8::7]) by mx'), { ip: '2001:db8::7', helo: 'mail.example.com' });
    assert.deepEqual(connectingAddress('from mail.example.com (HELO x) (192.0.2.33) by mx'), { ip: '192.0.2.33', helo: 'mail.example.com' });
    assert.equal(connectingAddress('by mx.example.com with LMTP; date'), null);
    assert.equal(connectingAddress('from localhost by mx'), null);
  });

  test('internal and trusted hops are stepped over; the first outside one is the sender; nothing below is read', () => {
    const chain = [
      'by mx.local (Postfix, from userid 0); date',
      'from a (a [127.0.0.1]) by mx',
      'from b (b [10.0.0.8]) by a',
      'from c (c [198.18.0.3]) by b',
      'from d (d [203.0.113.44]) by c',
      'from forged (forged [192.0.2.1]) by d',
    ];
    assert.deepEqual(senderFromReceived(chain, parseCidrList('198.18.0.0/15')), { ip: '203.0.113.44', helo: 'd', hops: 5 });
    assert.deepEqual(senderFromReceived(chain, none), { ip: '198.18.0.3', helo: 'c', hops: 4 });
    assert.deepEqual(senderFromReceived(['from a (a [10.0.0.1]) by b'], none), { ip: null, helo: null, hops: 1 });
  });

  test('a chain of 10,000 fields reads 50', () => {
    const chain = Array.from({ length: 10_000 }, () => 'from x (x [10.0.0.1]) by y');
    assert.deepEqual(senderFromReceived(chain, none), { ip: null, helo: null, hops: 50 });
  });
});

describe('the text of an HTML body', () => {
  test('tags, scripts, styles, comments, entities, blocks, link targets and hidden text', () => {
    const r = htmlToText('<html><head><title>T</title><style>p{}</style></head><body><!-- c --><p>Caf&eacute; &amp; tea&#33;</p>'
      + '<script>alert(1)</script><div>Visit <a href="https://shop.example/x">our shop</a> or <a href="https://a.example/">https://a.example/</a></div>'
      + '<div style="visibility: hidden">invisible words</div></body></html>');
    assert.equal(r.text, 'Café & tea!\nVisit our shop <https://shop.example/x> or https://a.example/');
    assert.deepEqual(r.links, [{ href: 'https://shop.example/x', label: 'our shop' }, { href: 'https://a.example/', label: 'https://a.example/' }]);
    assert.equal(r.hiddenChars, 'invisiblewords'.length);
  });
});

describe('option headers', () => {
  const names = new Set(['MISSING_DATE', 'PHARMACY']);
  test('defaults, accepted values, and each wrong one is INVALID_PARAMETER', () => {
    assert.deepEqual(parseEmlOptions({}, names), { authenticate: false, attachmentsSizeLimit: 5_000_000, attachmentsUpload: false, disableRules: new Set() });
    assert.deepEqual(parseEmlOptions({ 'x-authenticate': 'TRUE', 'x-attachments-upload': '1', 'x-attachments-size-limit': '0', 'x-disable-rules': ' MISSING_DATE ,PHARMACY,' }, names),
      { authenticate: true, attachmentsSizeLimit: 0, attachmentsUpload: true, disableRules: new Set(['MISSING_DATE', 'PHARMACY']) });
    for (const h of <Record<string, string>[]>[{ 'x-authenticate': 'on' }, { 'x-attachments-size-limit': '12kb' }, { 'x-attachments-size-limit': '1000000001' }, { 'x-disable-rules': 'NOPE' }]) {
      assert.throws(() => parseEmlOptions(h, names), { code: 'INVALID_PARAMETER' }, JSON.stringify(h));
    }
  });
});
