// Code challenges end to end: the real widget (altcha 3.x) in headless Chromium against the running
// clustered service, with a key whose policy says codeChallenge "always". The widget solves the
// proof of work, shows our image and input, fetches the spoken code when its audio button is
// pressed, and posts {code, payload} to /v1/verify; the resulting server payload verifies with
// altcha-lib. The test reads the code the documented test-only way (test/helpers/code-challenge.ts:
// it started the service with CODE_CHALLENGE_SECRET and opens the audio token of the challenge the
// page fetched). Then the adaptive rule over real HTTP, and the audio route's refusals.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { verifyServerSignature } from 'altcha-lib';
import type { Browser, Page } from 'playwright-core';
import { wavSeconds } from '../../src/code-challenge/wav.js';
import { readCode } from '../helpers/code-challenge.js';
import { createTestKey, startService, type Service, type TestKey } from '../helpers/service.js';
import { CHROMIUM, closeSite, launchChromium, listenSite, pagesSite, type SitePage } from '../helpers/browser.js';

const available = existsSync(CHROMIUM);
if (!available) {
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing (CI=true: the code-challenge e2e test must run; apt-get install -y chromium)`);
  console.error(`\n*** SKIPPING the code-challenge e2e test: ${CHROMIUM} not found (apt-get install -y chromium) ***\n`);
}

const SECRET = 'e2e-code-challenge-secret-0123456789abcdef';
const AUDIO_LIMIT = 10;
let svc: Service;
let site: Server;
let siteUrl: string;
let browser: Browser;
let keyAlways: TestKey;
let keyAuto: TestKey;
let keyNever: TestKey;
const light = { counterMin: 100, counterMax: 1_000 };

before(async () => {
  if (!available) return;
  svc = await startService({
    env: {
      WORKERS: '2', CODE_CHALLENGE_SECRET: SECRET, AUDIO_CHALLENGE_DELAY: '300ms',
      AUDIO_CHALLENGE_RATE_LIMIT: `${AUDIO_LIMIT}/1m(key=ip&block=1m)`,
    },
  });
  keyAlways = await createTestKey(svc, { hostnames: ['localhost'], challengePolicy: { ...light, codeChallenge: 'always' } });
  keyAuto = await createTestKey(svc, { hostnames: ['localhost'], challengePolicy: { ...light, codeChallenge: 'auto' } });
  keyNever = await createTestKey(svc, { hostnames: ['localhost'], challengePolicy: light });
  const bundle = readFileSync(createRequire(import.meta.url).resolve('altcha').replace(/altcha\.umd\.cjs$/, 'altcha.js'));
  const challenge = `${svc.url}/v1/challenge?apiKey=${keyAlways.id}`;
  const pages: Record<string, SitePage> = {
    '/altcha.js': { type: 'text/javascript', body: bundle },
    '/code.html': { type: 'text/html', body: page(challenge, '{}') },
    '/code-de.html': { type: 'text/html', body: page(challenge, '{"audioChallengeLanguage":"de"}') },
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

function page(challengeUrl: string, configuration: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><script type="module" src="/altcha.js"></script></head><body>
<form id="form" action="/submit" method="post">
  <input type="text" name="name" value="Ann">
  <altcha-widget challenge="${challengeUrl}" configuration='${configuration}'></altcha-widget>
</form></body></html>`;
}

// Page-side code is passed as text: this project compiles without the DOM library.
const WIDGET_DEFINED = "customElements.get('altcha-widget') !== undefined";
const widgetIn = (state: string) => `(() => {
  const widget = document.querySelector('altcha-widget');
  const s = widget.getState();
  if (s === 'error' && '${state}' !== 'error') throw new Error('widget error: ' + widget.textContent);
  return s === '${state}';
})()`;
const FORM_FIELD = "String(new FormData(document.getElementById('form')).get('altcha'))";
const CHALLENGE_PATH = '/v1/challenge?';

/** Opens `path`, clicks the widget, and waits for the code state; returns the page and the code the challenge carries. */
async function toCodeState(path: string): Promise<{ p: Page; code: string; errors: string[] }> {
  const p = await browser.newPage();
  const errors: string[] = [];
  p.on('pageerror', (e) => errors.push(String(e)));
  const challengeBody = p.waitForResponse((r) => r.url().includes(CHALLENGE_PATH)).then((r) => r.text());
  await p.goto(`${siteUrl}${path}`);
  await p.waitForFunction(WIDGET_DEFINED, undefined, { timeout: 10_000 });
  await p.locator('altcha-widget label[for^="altcha-checkbox"]').click({ timeout: 10_000 });
  await p.waitForFunction(widgetIn('code'), undefined, { timeout: 60_000, polling: 100 });
  return { p, code: readCode(SECRET, keyAlways.id, await challengeBody), errors };
}

test('a clean client: a "never" key and an "auto" key issue no code challenge; an "always" key does', { skip: !available }, async () => {
  const headers = { origin: siteUrl };
  for (const [key, expected] of [[keyNever, false], [keyAuto, false], [keyAlways, true]] as const) {
    const res = await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`, { headers });
    assert.equal(res.status, 200);
    const json = await res.json() as { codeChallenge?: unknown; parameters: { data: Record<string, string> } };
    assert.equal(json.codeChallenge !== undefined, expected, key.id);
    assert.equal('codeHash' in json.parameters.data, expected);
  }
});

test('the widget shows the image, plays the audio (audio/wav of a plausible length), takes the typed code and is verified', { skip: !available }, async () => {
  const { p, code, errors } = await toCodeState('/code.html');
  const image = p.locator('altcha-widget img.altcha-code-challenge-image');
  await image.waitFor({ state: 'visible', timeout: 10_000 });
  assert.match(String(await image.getAttribute('src')), /^data:image\/svg\+xml;base64,/);
  const size = await p.evaluate<[number, number]>("(() => { const img = document.querySelector('altcha-widget').querySelector('img.altcha-code-challenge-image') ?? document.querySelector('altcha-widget').shadowRoot?.querySelector('img.altcha-code-challenge-image'); return [img.naturalWidth, img.naturalHeight]; })()");
  assert.deepEqual(size, [180, 50]);
  const input = p.locator('altcha-widget input.altcha-input');
  assert.equal(await input.getAttribute('maxlength'), '5');

  const audioResponse = p.waitForResponse((r) => r.url().includes('/v1/challenge/audio'), { timeout: 30_000 });
  const pressed = Date.now();
  await p.locator('altcha-widget button[title="Get an audio challenge"]').click();
  const audio = await audioResponse;
  const url = new URL(audio.url());
  assert.equal(`${url.origin}${url.pathname}`, `${svc.url}/v1/challenge/audio`);
  assert.equal(url.searchParams.get('apiKey'), keyAlways.id);
  assert.equal(url.searchParams.get('language'), 'en');
  assert.equal(audio.status(), 200);
  assert.equal(audio.headers()['content-type'], 'audio/wav');
  assert.equal(audio.headers()['content-language'], 'en');
  const seconds = wavSeconds(await audio.body());
  console.log(`widget audio: ${seconds.toFixed(1)} s of WAV, answered ${Date.now() - pressed} ms after the press (AUDIO_CHALLENGE_DELAY 300ms)`);
  assert.ok(seconds > 4 && seconds < 16, `${seconds} s`);
  assert.ok(Date.now() - pressed >= 300, 'delayed by AUDIO_CHALLENGE_DELAY');

  const verifyResponse = p.waitForResponse((r) => r.url().includes('/v1/verify'));
  await input.fill(code.toLowerCase());
  await p.locator('altcha-widget form[data-code-challenge] button[type="submit"]').click();
  const posted = JSON.parse((await verifyResponse).request().postData() ?? '{}') as Record<string, unknown>;
  assert.equal(posted.code, code.toLowerCase());
  assert.equal(typeof posted.payload, 'string');
  await p.waitForFunction(widgetIn('verified'), undefined, { timeout: 30_000, polling: 100 });
  assert.deepEqual(errors, []);

  const value = await p.evaluate<string>(FORM_FIELD);
  const payload = JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as Record<string, unknown>;
  assert.equal(payload.apiKey, keyAlways.id);
  const result = await verifyServerSignature({ payload: payload as never, hmacSecret: keyAlways.secret });
  assert.deepEqual([result.verified, result.invalidSignature, result.expired], [true, false, false]);
  assert.equal(result.verificationData!.challengeAlgorithm, 'SHA-256');
  await p.close();
});

test('audioChallengeLanguage "de": the widget asks ?language=de and gets German', { skip: !available }, async () => {
  const { p } = await toCodeState('/code-de.html');
  const audioResponse = p.waitForResponse((r) => r.url().includes('/v1/challenge/audio'), { timeout: 30_000 });
  await p.locator('altcha-widget button[title="Get an audio challenge"]').click();
  const audio = await audioResponse;
  assert.equal(new URL(audio.url()).searchParams.get('language'), 'de');
  assert.equal(audio.headers()['content-language'], 'de');
  await p.close();
});

test('a wrong code: /v1/verify answers INCORRECT_CODE, the widget shows a failure, and the challenge is spent', { skip: !available }, async () => {
  const { p, code } = await toCodeState('/code.html');
  const wrong = `${code[0] === 'A' ? 'C' : 'A'}${code.slice(1)}`;
  const verifyResponse = p.waitForResponse((r) => r.url().includes('/v1/verify'));
  await p.locator('altcha-widget input.altcha-input').fill(wrong);
  await p.locator('altcha-widget form[data-code-challenge] button[type="submit"]').click();
  const response = await verifyResponse;
  assert.deepEqual(await response.json(), { verified: false, reason: 'INCORRECT_CODE' });
  await p.waitForFunction(widgetIn('error'), undefined, { timeout: 30_000, polling: 100 });
  // The widget words a failed code check in its own language (its reason string is for developers).
  assert.match(await p.locator('altcha-widget').innerText(), /Verification failed/);
  // The same payload with the right code: already spent.
  const body = JSON.parse(response.request().postData() ?? '{}') as { payload: string };
  const again = await fetch(`${svc.url}/v1/verify?apiKey=${keyAlways.id}`, {
    method: 'POST', headers: { 'content-type': 'application/json', origin: siteUrl }, body: JSON.stringify({ payload: body.payload, code }),
  });
  assert.deepEqual(await again.json(), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
  await p.close();
});

test('"auto": once this client has failed verifications its risk passes 1 and it gets a code challenge', { skip: !available }, async () => {
  const headers = { origin: siteUrl, 'content-type': 'application/json' };
  // The wrong code above counted one failure and one point; two malformed payloads more.
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${svc.url}/v1/verify?apiKey=${keyAuto.id}`, { method: 'POST', headers, body: JSON.stringify({ payload: 'AAAA' }) });
    assert.deepEqual(await res.json(), { verified: false, reason: 'INVALID_PAYLOAD' });
  }
  // Failures are counted after the reply: give the store a moment.
  let json: { codeChallenge?: { length: number } } = {};
  for (let tries = 0; tries < 20 && json.codeChallenge === undefined; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    json = await (await fetch(`${svc.url}/v1/challenge?apiKey=${keyAuto.id}`, { headers: { origin: siteUrl } })).json() as typeof json;
  }
  assert.equal(json.codeChallenge?.length, 5);
  const never = await (await fetch(`${svc.url}/v1/challenge?apiKey=${keyNever.id}`, { headers: { origin: siteUrl } })).json() as { codeChallenge?: unknown };
  assert.equal(never.codeChallenge, undefined, 'a "never" key asks no code whatever the risk');
});

test('POST /v1/verify over HTTP: a code that is not a string, too long or has control characters is 400 INVALID_PARAMETER', { skip: !available }, async () => {
  const challenge = await (await fetch(`${svc.url}/v1/challenge?apiKey=${keyAlways.id}`, { headers: { origin: siteUrl } })).text();
  const { solveV2 } = await import('../helpers/pow-test-server.js');
  const { payload } = await solveV2(challenge);
  const code = readCode(SECRET, keyAlways.id, challenge);
  for (const [bad, message] of [
    [12345, 'code must be a string'], [{ code }, 'code must be a string'], ['A'.repeat(33), 'code must be at most 32 characters'],
    [`${code}\u0000`, 'code must not contain control characters'], [`\r\n${code}`, 'code must not contain control characters'],
  ] as const) {
    const res = await fetch(`${svc.url}/v1/verify?apiKey=${keyAlways.id}`, {
      method: 'POST', headers: { origin: siteUrl, 'content-type': 'application/json' }, body: JSON.stringify({ payload, code: bad }),
    });
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), { error: 'INVALID_PARAMETER', statusCode: 400, message });
  }
  // Nothing was spent: the right code still verifies.
  const res = await fetch(`${svc.url}/v1/verify?apiKey=${keyAlways.id}`, {
    method: 'POST', headers: { origin: siteUrl, 'content-type': 'application/json' }, body: JSON.stringify({ payload, code }),
  });
  assert.equal(((await res.json()) as { verified: boolean }).verified, true);
});

test('audio route over HTTP: 400 without a token, 404 forged or another key\'s, 410 once submitted, 429 with Retry-After past the limit', { skip: !available }, async () => {
  const headers = { origin: siteUrl };
  const errorOf = async (res: Response) => [res.status, await res.json()] as const;
  const challenge = await (await fetch(`${svc.url}/v1/challenge?apiKey=${keyAlways.id}`, { headers })).text();
  const audioUrl = new URL((JSON.parse(challenge) as { codeChallenge: { audio: string } }).codeChallenge.audio, svc.url);
  const token = audioUrl.searchParams.get('token')!;
  let used = 2; // the two clips the widget fetched above
  const get = async (query: string) => { used++; return fetch(`${svc.url}/v1/challenge/audio?${query}`, { headers }); };

  assert.deepEqual(await errorOf(await get(`apiKey=${keyAlways.id}`)), [400, { error: 'INVALID_PARAMETER', statusCode: 400, message: 'token is required' }]);
  assert.deepEqual(await errorOf(await get(`apiKey=${keyAlways.id}&token=${'A'.repeat(80)}`)), [404, { error: 'CODE_CHALLENGE_NOT_FOUND', statusCode: 404 }]);
  assert.deepEqual(await errorOf(await get(`apiKey=${keyNever.id}&token=${token}`)), [404, { error: 'CODE_CHALLENGE_NOT_FOUND', statusCode: 404 }]);
  assert.equal((await fetch(`${svc.url}/v1/challenge/audio?apiKey=${keyAlways.id}&token=${token}`, { method: 'POST', headers })).status, 405);

  const { solveV2 } = await import('../helpers/pow-test-server.js');
  const { payload } = await solveV2(challenge);
  const verified = await fetch(`${svc.url}/v1/verify?apiKey=${keyAlways.id}`, {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ payload, code: readCode(SECRET, keyAlways.id, challenge) }),
  });
  assert.equal(((await verified.json()) as { verified: boolean }).verified, true);
  assert.deepEqual(await errorOf(await get(audioUrl.search.slice(1))), [410, { error: 'CODE_CHALLENGE_SOLVED', statusCode: 410 }]);

  // The limit counts every request of this IP (the widget's included); the next ones past it are 429.
  let res: Response;
  do res = await get(`apiKey=${keyAlways.id}&token=x`); while (res.status === 404 && used <= AUDIO_LIMIT + 2);
  assert.equal(res.status, 429);
  assert.deepEqual(await res.json(), { error: 'RATE_LIMITED', statusCode: 429 });
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
});
