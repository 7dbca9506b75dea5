// The real widget (altcha 3.x browser bundle) in headless Chromium against the running clustered
// service: the page is served from another origin (as a customer's site would be), the widget fetches
// the challenge from Palisade across origins, solves it in its workers, posts the solution to the
// verifyUrl, reaches the verified state, and its form field then holds our server payload, which
// altcha-lib accepts with the key's secret.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { verifyFieldsHash, verifyServerSignature } from 'altcha-lib';
import type { Browser, Page } from 'playwright-core';
import { createTestKey, startService, type Service, type TestKey } from '../helpers/service.js';
import { CHROMIUM, closeSite, launchChromium, listenSite, pagesSite, type SitePage } from '../helpers/browser.js';

const available = existsSync(CHROMIUM);
if (!available) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing (CI=true: the widget e2e test must run; apt-get install -y chromium)`);
  console.error(`\n*** SKIPPING the widget e2e test: ${CHROMIUM} not found (apt-get install -y chromium) ***\n`);
}

let svc: Service;
let site: Server;
let siteUrl: string;
let browser: Browser;
// The default policy (deterministic SHA-256, counters 10,000–70,000) for v2, a light one for v1; both
// keys accept only the site's hostname.
let keyV2: TestKey;
let keyV1: TestKey;
// Classification inside verification, switched on by the key's policy alone (x-altcha-config).
let keyClassified: TestKey;
const SPAM_MESSAGE = 'BUY CHEAP VIAGRA AND CIALIS NOW!!! Best online pharmacy, no prescription: http://pills.example/buy http://bit.ly/x2';

async function verifiedCount(): Promise<number> {
  const text = await (await fetch(`${svc.url}/.metrics`)).text();
  return Number(/^palisade_api_verifications_success_total (\d+)/m.exec(text)?.[1] ?? NaN);
}

before(async () => {
  if (!available) return;
  svc = await startService({ env: { WORKERS: '2' } });
  keyV2 = await createTestKey(svc, { hostnames: ['localhost'] });
  keyV1 = await createTestKey(svc, { hostnames: ['localhost'], challengePolicy: { version: 1, counterMin: 1_000, maxnumber: 5_000 } });
  keyClassified = await createTestKey(svc, { hostnames: ['localhost'], challengePolicy: { counterMin: 100, counterMax: 1_000, classification: { fields: true } } });
  const bundle = readFileSync(createRequire(import.meta.url).resolve('altcha').replace(/altcha\.umd\.cjs$/, 'altcha.js'));
  const challengeBase = `${svc.url}/v1/challenge`;
  const pages: Record<string, SitePage> = {
    '/altcha.js': { type: 'text/javascript', body: bundle },
    '/v2.html': { type: 'text/html', body: page(`${challengeBase}?apiKey=${keyV2.id}&params.plan=pro`) },
    '/v1.html': { type: 'text/html', body: page(`${challengeBase}?apiKey=${keyV1.id}`) },
    '/spam.html': { type: 'text/html', body: plainPage(`${challengeBase}?apiKey=${keyClassified.id}`, SPAM_MESSAGE) },
    '/ham.html': { type: 'text/html', body: plainPage(`${challengeBase}?apiKey=${keyClassified.id}`, 'Could you tell me when my order will arrive? Thank you.') },
  };
  site = pagesSite(pages);
  siteUrl = await listenSite(site);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await closeSite(site);
  await svc?.stop();
});

function page(challengeUrl: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><script type="module" src="/altcha.js"></script></head><body>
<form id="form" action="/submit" method="post">
  <input type="text" name="name" value="Ann">
  <textarea name="message">hello
world</textarea>
  <altcha-widget challenge="${challengeUrl}"
    configuration='{"serverVerificationFields":true,"serverVerificationTimeZone":true}'></altcha-widget>
  <button type="submit">Send</button>
</form></body></html>`;
}

/** A form whose widget is configured by nothing but the challenge's x-altcha-config header. */
function plainPage(challengeUrl: string, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><script type="module" src="/altcha.js"></script></head><body>
<form id="form" action="/submit" method="post">
  <input type="text" name="name" value="Ann">
  <textarea name="message">${message}</textarea>
  <altcha-widget challenge="${challengeUrl}"></altcha-widget>
</form></body></html>`;
}

// Page-side code is passed as text: this project compiles without the DOM library.
const WIDGET_DEFINED = "customElements.get('altcha-widget') !== undefined";
const WIDGET_VERIFIED = `(() => {
  const widget = document.querySelector('altcha-widget');
  const state = widget.getState();
  if (state === 'error') throw new Error('widget error: ' + widget.textContent);
  return state === 'verified';
})()`;
const FORM_FIELD = "String(new FormData(document.getElementById('form')).get('altcha'))";

/** Clicks the widget's label like a user and waits for `verified` (failing fast on `error`). */
async function verifyInPage(p: Page): Promise<{ value: string; ms: number }> {
  await p.waitForFunction(WIDGET_DEFINED, undefined, { timeout: 10_000 });
  const started = Date.now();
  await p.locator('altcha-widget label[for^="altcha-checkbox"]').click({ timeout: 10_000 });
  await p.waitForFunction(WIDGET_VERIFIED, undefined, { timeout: 60_000, polling: 100 });
  const ms = Date.now() - started;
  return { value: await p.evaluate<string>(FORM_FIELD), ms };
}

test('v2: the widget solves our challenge, /v1/verify answers, the form holds a server payload altcha-lib accepts', { skip: !available }, async () => {
  const p = await browser.newPage();
  const errors: string[] = [];
  p.on('pageerror', (e) => errors.push(String(e)));
  const before = await verifiedCount();
  await p.goto(`${siteUrl}/v2.html`);
  const { value, ms } = await verifyInPage(p);
  console.log(`widget verified a default-policy SHA-256 challenge in ${ms} ms (2 cores, shared)`);
  assert.deepEqual(errors, []);
  assert.equal(await verifiedCount(), before + 1);

  const payload = JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(payload).sort(), ['algorithm', 'apiKey', 'id', 'signature', 'verificationData', 'verified']);
  assert.equal(payload.apiKey, keyV2.id);
  const result = await verifyServerSignature({ payload: payload as never, hmacSecret: keyV2.secret });
  assert.deepEqual([result.verified, result.invalidSignature, result.expired], [true, false, false]);
  const vd = result.verificationData!;
  assert.deepEqual([vd.classification, vd['params.plan'], vd.challengeAlgorithm, vd.ipAddress], ['GOOD', 'pro', 'SHA-256', '127.0.0.0']);
  assert.deepEqual(vd.fields, ['name', 'message']);
  assert.equal(typeof vd.timeZone, 'string');
  // The widget sends textarea newlines as \r\n; the integrator hashes what the form posts.
  assert.equal(await verifyFieldsHash({ formData: { name: 'Ann', message: 'hello\r\nworld' }, fields: vd.fields!, fieldsHash: vd.fieldsHash! }), true);
  assert.equal((await verifyServerSignature({ payload: payload as never, hmacSecret: keyV1.secret })).verified, false);
  await p.close();
});

test('v1 (legacy key): the widget solves a v1 challenge, reads verifyUrl from X-Altcha-Config, and is verified', { skip: !available }, async () => {
  const p = await browser.newPage();
  const before = await verifiedCount();
  await p.goto(`${siteUrl}/v1.html`);
  const { value } = await verifyInPage(p);
  assert.equal(await verifiedCount(), before + 1);
  const payload = JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as Record<string, unknown>;
  assert.equal(payload.apiKey, keyV1.id);
  const result = await verifyServerSignature({ payload: payload as never, hmacSecret: keyV1.secret });
  assert.equal(result.verified, true);
  assert.equal(result.verificationData!.challengeAlgorithm, 'SHA-256');
  await p.close();
});

test('a page on a hostname the key does not list gets ORIGIN_NOT_ALLOWED, never a verified widget', { skip: !available }, async () => {
  const res = await fetch(`${svc.url}/v1/challenge?apiKey=${keyV2.id}`, { headers: { origin: 'https://evil.example' } });
  assert.equal(res.status, 403);
  assert.deepEqual(await res.json(), { error: 'ORIGIN_NOT_ALLOWED', statusCode: 403 });
});

test("a key asking for classification: the widget sends the fields because x-altcha-config says so, and the signed verdict classifies them", { skip: !available }, async () => {
  for (const [path, expected] of [['/spam.html', 'BAD'], ['/ham.html', 'GOOD']] as const) {
    const p = await browser.newPage();
    const errors: string[] = [];
    p.on('pageerror', (e) => errors.push(String(e)));
    await p.goto(`${siteUrl}${path}`);
    const { value } = await verifyInPage(p);
    assert.deepEqual(errors, []);
    const payload = JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as Record<string, unknown>;
    const result = await verifyServerSignature({ payload: payload as never, hmacSecret: keyClassified.secret });
    assert.equal(result.verified, true);
    const vd = result.verificationData!;
    assert.equal(vd.classification, expected, JSON.stringify(vd));
    assert.deepEqual(vd.fields, ['name', 'message']);
    assert.equal(vd['text.language'], 'en');
    if (expected === 'BAD') {
      assert.ok((vd.reasons as string[]).includes('PHARMACY'), String(vd.reasons));
      assert.ok((vd.score as number) >= 2);
    }
    const message = path === '/spam.html' ? SPAM_MESSAGE : 'Could you tell me when my order will arrive? Thank you.';
    assert.equal(await verifyFieldsHash({ formData: { name: 'Ann', message }, fields: vd.fields!, fieldsHash: vd.fieldsHash! }), true);
    await p.close();
  }
});
