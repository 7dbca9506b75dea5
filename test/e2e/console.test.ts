// The console (docs/admin.md) in headless Chromium against the running clustered service: root's
// first login and the forced password change; a key created in the keys page, its secret shown once;
// a widget on another origin solves a challenge of that key and the verification shows on the
// dashboard; the key revoked with confirmation (and refused by /v1/challenge); a read-only user,
// logging in by keyboard alone, finds no write button. Every page without a console error (a CSP
// violation is one), at 360 px wide and in the dark theme too. With UPDATE_SCREENSHOTS=1 the
// screenshots go to docs/screenshots/ (shown in docs/admin.md), else to a temporary directory.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startService, type Service } from '../helpers/service.js';
import { CHROMIUM, closeSite, launchChromium, listenSite } from '../helpers/browser.js';

const available = existsSync(CHROMIUM);
if (!available) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing (CI=true: the console e2e test must run; apt-get install -y chromium)`);
  console.error(`\n*** SKIPPING the console e2e test: ${CHROMIUM} not found (apt-get install -y chromium) ***\n`);
}
const BUILT = fileURLToPath(new URL('../../console/index.html', import.meta.url));
if (available && !existsSync(BUILT)) throw new Error('the console is not built: npm run build:console');

const ROOT_FIRST = 'first-root-password';
const ROOT_NEW = 'a-better-root-password';
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1'
  ? fileURLToPath(new URL('../../../docs/screenshots/', import.meta.url))
  : mkdtempSync(join(tmpdir(), 'palisade-console-shots-'));
mkdirSync(SHOTS, { recursive: true });

let svc: Service;
let site: Server;
let siteUrl = '';
let browser: Browser;
let challengeUrl = '';
const consoleErrors: string[] = [];

before(async () => {
  if (!available) return;
  svc = await startService({ env: { WORKERS: '2', DEFAULT_ROOT_PASSWORD: ROOT_FIRST, CACHE_DURATION_API_KEYS: '1s', LOG_LEVEL: 'info' } });
  const bundle = readFileSync(createRequire(import.meta.url).resolve('altcha').replace(/altcha\.umd\.cjs$/, 'altcha.js'));
  site = createServer((req, res) => {
    if (req.url === '/favicon.ico') { res.writeHead(204).end(); return; }
    if (req.url === '/altcha.js') { res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle); return; }
    if (req.url === '/form.html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><script type="module" src="/altcha.js"></script></head><body>
<form id="form" action="/submit" method="post"><altcha-widget challenge="${challengeUrl}"></altcha-widget></form></body></html>`);
      return;
    }
    res.writeHead(404).end();
  });
  siteUrl = await listenSite(site);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await closeSite(site);
  await svc?.stop();
  if (process.env.UPDATE_SCREENSHOTS !== '1') rmSync(SHOTS, { recursive: true, force: true });
});

async function newContext(options: { width?: number; dark?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 900 }, colorScheme: options.dark ? 'dark' : 'light',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${page.url()}: ${m.text()}`); });
  page.on('pageerror', (e) => consoleErrors.push(`${page.url()}: ${String(e)}`));
  return { context, page };
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const consoleUrl = () => `${svc.url}/app/`;

async function login(page: Page, username: string, password: string): Promise<void> {
  await page.goto(consoleUrl());
  await page.getByLabel('Username', { exact: true }).fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

async function changePassword(page: Page, current: string, next: string): Promise<void> {
  await page.getByLabel('Current password', { exact: true }).fill(current);
  await page.getByLabel('New password', { exact: true }).fill(next);
  await page.getByLabel('New password again', { exact: true }).fill(next);
  await page.getByRole('button', { name: 'Change password' }).click();
}

let rootPage: Page;
let rootContext: BrowserContext;
let keyId = '';
let secret = '';

test('first login: root must change its password before anything else', { skip: !available }, async () => {
  ({ context: rootContext, page: rootPage } = await newContext());
  const page = rootPage;
  const res = await page.goto(consoleUrl());
  const headers = res!.headers();
  assert.match(headers['content-security-policy']!, /script-src 'self'/);
  assert.doesNotMatch(headers['content-security-policy']!, /unsafe-inline/);
  assert.match(headers['content-security-policy']!, /frame-ancestors 'none'/);
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.equal(headers['referrer-policy'], 'no-referrer');
  await page.getByRole('heading', { name: 'Palisade console' }).waitFor();
  await shot(page, 'login');
  await login(page, 'root', 'wrong-password');
  await page.getByRole('alert').filter({ hasText: 'Wrong username or password' }).waitFor();
  await login(page, 'root', ROOT_FIRST);
  await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
  await shot(page, 'first-login');
  await changePassword(page, ROOT_FIRST, 'short');
  await page.getByRole('alert').filter({ hasText: 'at least 8 characters' }).waitFor();
  // The two refusals above (401 and 400) are the only failed requests the browser may report.
  assert.equal(consoleErrors.length, 2, consoleErrors.join('\n'));
  assert.match(consoleErrors[0]!, /status of 401/);
  assert.match(consoleErrors[1]!, /status of 400/);
  consoleErrors.length = 0;
  await changePassword(page, ROOT_FIRST, ROOT_NEW);
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  // The session cookie is HttpOnly: the page's script cannot read it.
  assert.equal(await page.evaluate('document.cookie'), '');
});

test('keys page: a new key shows its secret once, with a copy button and a widget snippet', { skip: !available }, async () => {
  const page = rootPage;
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('heading', { name: 'New key' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('Shop');
  await page.getByLabel('Hostnames', { exact: true }).fill('localhost');
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.getByRole('dialog', { name: 'Key created' });
  await dialog.waitFor();
  secret = await dialog.locator('[data-field="secret"]').inputValue();
  keyId = await dialog.locator('[data-field="key-id"]').inputValue();
  assert.match(secret, /^sec_[0-9A-Za-z]{32}$/);
  assert.match(keyId, /^key_[0-9A-Za-z]{24}$/);
  const snippet = await dialog.locator('[data-field="snippet"]').inputValue();
  assert.ok(snippet.includes(`<altcha-widget challenge="${svc.url}/v1/challenge?apiKey=${keyId}">`), snippet);
  await dialog.getByRole('button', { name: 'Copy secret' }).click();
  await dialog.getByRole('button', { name: 'Copied' }).waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
  await shot(page, 'key-created');
  await dialog.getByRole('button', { name: 'Done' }).click();
  await page.locator(`tr[data-key="${keyId}"]`).waitFor();
  await shot(page, 'keys');
  // Shown once: neither the page nor a reload nor the API holds it again.
  assert.equal((await page.content()).includes(secret), false);
  await page.reload();
  await page.locator(`tr[data-key="${keyId}"]`).waitFor();
  assert.equal((await page.content()).includes(secret), false);
});

test('a widget solves a challenge of the new key; the verification shows on the dashboard', { skip: !available }, async () => {
  challengeUrl = `${svc.url}/v1/challenge?apiKey=${keyId}`;
  const { context, page: site } = await newContext();
  await site.goto(`${siteUrl}/form.html`);
  await site.waitForFunction("customElements.get('altcha-widget') !== undefined", undefined, { timeout: 10_000 });
  await site.locator('altcha-widget label[for^="altcha-checkbox"]').click({ timeout: 10_000 });
  await site.waitForFunction(`(() => {
    const w = document.querySelector('altcha-widget');
    if (w.getState() === 'error') throw new Error('widget error: ' + w.textContent);
    return w.getState() === 'verified';
  })()`, undefined, { timeout: 60_000, polling: 100 });
  await context.close();

  const page = rootPage;
  await page.getByRole('link', { name: 'Dashboard' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  // Request logs are written within a second or so; the dashboard is refreshed until they show.
  const deadline = Date.now() + 20_000;
  let verifications = '0';
  while (Date.now() < deadline) {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForTimeout(500);
    verifications = await page.locator('[data-stat="verifications"]').innerText();
    if (verifications !== '0') break;
  }
  assert.equal(verifications, '1');
  assert.ok(Number(await page.locator('[data-stat="requests"]').innerText()) >= 2, 'the challenge and the verification');
  await page.getByRole('img', { name: /Traffic: Requests \d+, Verifications 1, Failures 0/ }).waitFor();
  await page.getByRole('combobox', { name: /^API key/ }).selectOption(keyId);
  await page.getByRole('img', { name: /Traffic: .*Verifications 1/ }).waitFor();
  assert.equal(await page.locator('.chart canvas').count(), 2, 'two uPlot charts');
  await shot(page, 'dashboard');

  await page.getByRole('link', { name: 'Logs' }).click();
  await page.getByRole('cell', { name: 'POST /v1/verify' }).first().waitFor();
  await page.getByRole('button', { name: 'Live log' }).click();
  await page.getByText('(live)').waitFor();
  await fetch(challengeUrl, { headers: { origin: siteUrl } });
  await page.getByRole('cell', { name: 'GET /v1/challenge' }).first().waitFor({ timeout: 10_000 });
  await shot(page, 'logs');
});

test('revoking asks for confirmation; the key then stops working', { skip: !available }, async () => {
  const page = rootPage;
  await page.getByRole('link', { name: 'API keys' }).click();
  const row = page.locator(`tr[data-key="${keyId}"]`);
  await row.getByRole('button', { name: 'Revoke' }).click();
  const dialog = page.getByRole('dialog', { name: /Revoke Shop\?/ });
  await dialog.waitFor();
  await shot(page, 'revoke-confirm');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await row.locator('td').nth(5).innerText(), 'active', 'cancel keeps the key');
  await row.getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
  await row.waitFor({ state: 'detached' });
  await page.getByLabel('Show revoked keys', { exact: true }).check();
  assert.equal(await page.locator(`tr[data-key="${keyId}"] td`).nth(5).innerText(), 'revoked');
  let status = 200;
  const deadline = Date.now() + 5000;
  while (status === 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    status = (await fetch(challengeUrl, { headers: { origin: siteUrl } })).status;
  }
  assert.equal(status, 401);
});

test('a read-only user, by keyboard alone, finds no write button; every page renders at 360 px and in the dark theme', { skip: !available }, async () => {
  const page = rootPage;
  await page.getByRole('link', { name: 'Users' }).click();
  await page.getByLabel('Username', { exact: true }).fill('viewer');
  await page.getByLabel('Temporary password', { exact: true }).fill('viewer-temporary-1');
  await page.getByRole('combobox', { name: /^Role/ }).selectOption('read-only');
  await page.getByRole('button', { name: 'Create user' }).click();
  await page.getByRole('cell', { name: /viewer/ }).waitFor();
  await shot(page, 'users');
  for (const [link, name] of [['Accounts', 'accounts'], ['Plans', 'plans'], ['Audit', 'audit'], ['Settings', 'settings']] as const) {
    await page.getByRole('link', { name: link }).click();
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.waitForTimeout(300);
    await shot(page, name);
  }
  await page.getByRole('cell', { name: 'DEFAULT_ROOT_PASSWORD' }).waitFor();
  assert.equal(await page.getByRole('row', { name: /DEFAULT_ROOT_PASSWORD/ }).getByText('<set>').count(), 1, 'secrets are redacted');
  await page.getByRole('link', { name: 'Audit' }).click();
  await page.getByRole('cell', { name: 'key.revoke' }).waitFor();

  // Keyboard only, on a phone-sized screen in the dark theme.
  const { context, page: ro } = await newContext({ width: 360, dark: true });
  await ro.goto(consoleUrl());
  await ro.getByLabel('Username', { exact: true }).waitFor();
  // A keyboard user starts typing at once: the first field has the focus when the form shows.
  await ro.waitForFunction("document.activeElement?.getAttribute('name') === 'username'", undefined, { timeout: 5000 });
  await ro.keyboard.type('viewer');
  await ro.keyboard.press('Tab');
  await ro.keyboard.type('viewer-temporary-1');
  await ro.keyboard.press('Enter');
  await ro.getByRole('heading', { name: 'Choose a new password' }).waitFor();
  await ro.waitForFunction("document.activeElement?.getAttribute('name') === 'currentPassword'", undefined, { timeout: 5000 });
  await ro.keyboard.type('viewer-temporary-1');
  await ro.keyboard.press('Tab');
  await ro.keyboard.type('viewer-password-22');
  await ro.keyboard.press('Tab');
  await ro.keyboard.type('viewer-password-22');
  await ro.keyboard.press('Enter');
  await ro.getByRole('heading', { name: 'Dashboard' }).waitFor();
  await ro.waitForTimeout(300);
  await shot(ro, 'dashboard-360-dark');
  const writeButtons = /^(Create key|Edit|Rotate|Revoke|Create user|Create account|Rename|Deactivate|Activate|Delete|Disable|Enable|Reset password|Save plan|Live log)$/;
  for (const link of ['API keys', 'Logs', 'Accounts', 'Users', 'Plans', 'Audit', 'Settings']) {
    await ro.getByRole('link', { name: link }).focus();
    await ro.keyboard.press('Enter');
    await ro.getByRole('heading', { level: 1 }).first().waitFor();
    await ro.waitForTimeout(300);
    const buttons = await ro.getByRole('button').allInnerTexts();
    assert.deepEqual(buttons.filter((b) => writeButtons.test(b.trim())), [], `${link}: ${buttons.join(', ')}`);
    // Nothing wider than the screen but tables, which scroll inside their frame.
    const wide = await ro.evaluate<string[]>(`[...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > 361 && !e.closest('.table-wrap'))
      .map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`);
    assert.deepEqual(wide, [], `${link} fits 360 px`);
    assert.ok(await ro.evaluate('document.documentElement.scrollWidth <= 360 + 1'), `${link} fits 360 px`);
  }
  await ro.getByRole('link', { name: 'API keys' }).click();
  await ro.locator(`tr[data-key="${keyId}"]`).count();
  await shot(ro, 'keys-360-dark-read-only');
  assert.deepEqual(consoleErrors, [], 'no console errors (CSP violations included)');
  // The API refuses what the page does not offer.
  const refused = await ro.evaluate(`fetch('${svc.url}/api/admin/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"hostnames":["x.example"]}' }).then((r) => r.status)`);
  assert.equal(refused, 403);
  await context.close();
  await rootContext.close();
});
