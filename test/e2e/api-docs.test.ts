// The interactive API documentation in headless Chromium: /v1/docs loads Swagger UI from this
// service alone (every other request is refused and counted), under its Content-Security-Policy,
// without a console error, a page error or a failed request, and shows every operation of the
// document; opening one shows its parameters and error codes; "Try it out" calls the instance.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { pollUntilReady } from '../helpers/child-process.js';
import { startService, type Service } from '../helpers/service.js';
import { CHROMIUM, launchChromium } from '../helpers/browser.js';

const available = existsSync(CHROMIUM);
if (!available) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing (CI=true: the docs e2e test must run; apt-get install -y chromium)`);
  console.error(`\n*** SKIPPING the API docs e2e test: ${CHROMIUM} not found (apt-get install -y chromium) ***\n`);
}

let svc: Service;
let browser: Browser;

before(async () => {
  if (!available) return;
  svc = await startService({ env: { WORKERS: '0', APP_BASE_PATH: '/captcha' }, waitReady: false });
  const state = await pollUntilReady(`${svc.url}/captcha/.live`, svc.proc, Date.now() + 45_000, 50);
  assert.equal(state, 'ready', svc.output.join('\n'));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await svc?.stop();
});

test('/v1/docs renders every operation offline, with no console error, under APP_BASE_PATH', { skip: !available }, async () => {
  const base = `${svc.url}/captcha`;
  const document = await (await fetch(`${base}/v1/docs/openapi.json`)).json() as { paths: Record<string, object>; servers: { url: string }[] };
  assert.deepEqual(document.servers, [{ url: '/captcha' }]);
  const operations = Object.values(document.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);

  const page = await browser.newPage();
  const problems: string[] = [];
  const elsewhere: string[] = [];
  const loaded: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${String(e)}`));
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()}: ${r.url()}`); });
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith(`${svc.url}/`)) {
      loaded.push(new URL(url).pathname);
      await route.continue();
    } else {
      elsewhere.push(url);
      await route.abort();
    }
  });

  const res = await page.goto(`${base}/v1/docs`);
  assert.equal(res?.status(), 200);
  await page.waitForSelector('.opblock', { timeout: 30_000 });
  assert.equal(await page.locator('.opblock').count(), operations);
  assert.match(await page.locator('.info .title').innerText(), /Palisade API/);

  // Opening GET /v1/challenge shows its query family and its error codes from the catalogue.
  await page.locator('#operations-Widget-getChallenge .opblock-summary').click();
  await page.waitForSelector('#operations-Widget-getChallenge .responses-table', { timeout: 10_000 });
  const opened = await page.locator('#operations-Widget-getChallenge').innerText();
  assert.match(opened, /params/);
  assert.match(opened, /API_KEY_REQUIRED/);
  assert.match(opened, /PARAMS_TOO_LONG/);
  // The security schemes are there to authorise with.
  await page.locator('.auth-wrapper .authorize').click();
  const dialog = await page.locator('.dialog-ux').innerText();
  for (const scheme of ['browserKey', 'bearerSecret', 'hmacSignature', 'monitoringBasic']) assert.match(dialog, new RegExp(scheme));
  await page.locator('.dialog-ux .close-modal').click();

  // "Try it out" reaches this instance, under APP_BASE_PATH, within the page's policy.
  const live = page.locator('#operations-Operations-live');
  await live.locator('.opblock-summary').click();
  await live.locator('.try-out__btn').click();
  await live.locator('.execute').click();
  await live.locator('.live-responses-table tbody .response-col_status').first().waitFor({ timeout: 10_000 });
  assert.match(await live.locator('.live-responses-table tbody .response-col_status').first().innerText(), /^200/);
  assert.match(await live.locator('.live-responses-table .microlight').first().innerText(), /"status": "ok"/);
  assert.ok(loaded.includes('/captcha/.live'), loaded.join(', '));

  assert.deepEqual(elsewhere, []);
  assert.deepEqual(problems, []);
  for (const path of ['/captcha/v1/docs', '/captcha/v1/docs/swagger-ui.css', '/captcha/v1/docs/swagger-ui-bundle.js', '/captcha/v1/docs/init.js', '/captcha/v1/docs/openapi.json']) {
    assert.ok(loaded.includes(path), `${path} in ${loaded.join(', ')}`);
  }
  await page.close();
});
