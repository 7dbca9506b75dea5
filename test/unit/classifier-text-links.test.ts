// Links: counted with a scanner (schemes, www., bare domains with a common TLD), shorteners from
// the data list, each link handed to the phishing list. E-mail addresses, file names and
// "ASP.NET" are no links.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeText } from '../../src/classifier/text/index.js';
import { fakePhishing, only, ruleScore } from '../helpers/classifier-text.js';

test('LINKS: 0.1 for any, 0.2 per link beyond one plus one per 100 words, 0.75 more when there is little else, at most 1.5', () => {
  assert.equal(ruleScore('LINKS', 'no links here, write to support@example.com'), 0);
  assert.equal(ruleScore('LINKS', 'The bug is on https://example.com/account/settings?tab=2 when I save my profile.'), 0.1);
  assert.equal(ruleScore('LINKS', 'See https://example.com/a and http://example.org/b for the two pages I mean, thanks.'), 0.3);
  assert.equal(ruleScore('LINKS', 'https://spam.example/landing'), 0.85); // the whole message is a link
  assert.equal(ruleScore('LINKS', 'check this: https://spam.example/landing'), 0.85); // 10 characters besides
  const six = Array.from({ length: 6 }, (_, i) => `visit http://site${i}.example/page now`).join(' ');
  assert.equal(ruleScore('LINKS', six), 1.1);
  const many = Array.from({ length: 10 }, (_, i) => `visit http://site${i}.example/page now`).join(' ');
  assert.equal(ruleScore('LINKS', many), 1.5);
  // A long text is allowed one more link per 100 words: a newsletter's footer links weigh little.
  const words = Array.from({ length: 200 }, (_, i) => `word${i % 7 === 0 ? 'x' : ''}`).join(' ');
  const long = `${words} https://a.example/1 https://a.example/2 https://a.example/3 https://a.example/4`;
  assert.equal(ruleScore('LINKS', long), 0.3);
});

test('LINKS: www. hosts and bare domains with a common TLD count; e-mail, files, versions, ASP.NET do not', () => {
  assert.equal(ruleScore('LINKS', 'I think you can buy it at www.cheap-pills.example today'), 0.1);
  assert.equal(ruleScore('LINKS', 'I think you can buy it at cheap-pills.com today'), 0.1);
  assert.equal(ruleScore('LINKS', 'I think you can go to my-shop.store/sale?x=1, or shop.example.co.uk for the collection'), 0.3);
  assert.equal(ruleScore('LINKS', 'mail me at john.smith@mail.example.com or jane@example.org'), 0);
  assert.equal(ruleScore('LINKS', 'see readme.md, setup.py, main.rs, config.yml, index.html and node.js 18.2.1'), 0);
  assert.equal(ruleScore('LINKS', 'We use ASP.NET and VB.NET. It failed.No luck, e.g. i.e. U.S.A. version 3.14.'), 0);
  assert.equal(ruleScore('LINKS', 'git config user.name and user.email, db.host'), 0);
  assert.equal(ruleScore('LINKS', '[url=http://spam.example]cheap[/url]'), 0.85); // BBCode: the URL stops at ']'
});

test('LINK_SHORTENER: hosts from shorteners.txt (with www., any subdomain of a dotted entry): 0.8, +0.35 each, at most 1.5', () => {
  assert.equal(ruleScore('LINK_SHORTENER', 'see https://example.com/x and https://youtu.be/abc'), 0);
  assert.equal(ruleScore('LINK_SHORTENER', 'click https://bit.ly/3xYz now'), 0.8);
  assert.equal(ruleScore('LINK_SHORTENER', 'click bit.ly/3xYz or https://www.TinyURL.com/abc'), 1.15);
  assert.equal(ruleScore('LINK_SHORTENER', 'http://user@t.co:80/a https://is.gd/b https://myapp.page.link/c'), 1.5);
  assert.equal(ruleScore('LINK_SHORTENER', 'https://notbit.ly/x https://bit.ly.example.com/y'), 0);
});

test('URL_PHISHING: 6 when the phishing list knows a link; every link is asked, bare ones with http://', () => {
  const phishing = fakePhishing(['login-bank.example']);
  assert.equal(ruleScore('URL_PHISHING', 'verify at https://login-bank.example/verify?id=1 and www.fine.example', {}, { phishing }), 6);
  assert.deepEqual(phishing.asked, ['https://login-bank.example/verify?id=1', 'http://www.fine.example']);
  assert.equal(ruleScore('URL_PHISHING', 'nothing bad at https://example.com', {}, { phishing }), 0);
  assert.equal(ruleScore('URL_PHISHING', 'https://login-bank.example/x'), 0); // no list loaded
  const block = analyzeText({ texts: ['https://login-bank.example/x'] }, { disabled: only('LINKS'), phishing });
  assert.deepEqual(block.rules, { LINKS: { score: 0.85 } }); // disabled: the list is not asked
  assert.equal(phishing.asked.length, 3);
});

test('links: trailing punctuation and brackets stay out of the link; at most 100 links are looked up', () => {
  const phishing = fakePhishing([]);
  ruleScore('URL_PHISHING', 'See (https://example.com/a_(b)). Or "https://example.com/q?x=1", <https://example.com/t>!', {}, { phishing });
  assert.deepEqual(phishing.asked, ['https://example.com/a_(b', 'https://example.com/q?x=1', 'https://example.com/t']);
  const lots = Array.from({ length: 150 }, (_, i) => `https://h${i}.example/`).join(' ');
  const counting = fakePhishing([]);
  assert.equal(ruleScore('URL_PHISHING', lots, {}, { phishing: counting }), 0);
  assert.equal(counting.asked.length, 100);
  assert.equal(ruleScore('LINKS', lots), 1.5);
});

test('URL_PHISHING: a matcher that throws on a malformed link counts it as no match', () => {
  const throwing = { match(url: string): null { throw new TypeError(`Invalid URL: ${url}`); } };
  assert.equal(ruleScore('URL_PHISHING', 'see http://\udc00 and https://example.com', {}, { phishing: throwing }), 0);
});
