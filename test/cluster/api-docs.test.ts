// /v1/docs on the running service: the OpenAPI document is a valid OpenAPI 3.1 document describing
// every route registered, and real answers of a sample of routes (successes and errors) match it:
// each status is one the document lists for the operation, with its content type and a body its
// schema accepts (ajv). The page and its assets are served with their types and a strict policy;
// API_DOCS_ENABLED=0 leaves all of it 404.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { API_ROUTES } from '../../src/api-schema/index.js';
import { createTestKey, startService, type Service, type TestKey } from '../helpers/service.js';
import { RawClient } from '../helpers/http-client.js';
import { solveV2 } from '../helpers/pow-test-server.js';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> };

/** JSON Pointer escaping, then what a URI fragment needs. */
const pointer = (...parts: string[]) => parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

describe('/v1/docs on the clustered service', () => {
  let svc: Service;
  let key: TestKey;
  let doc: Doc;
  let ajv: Ajv2020;
  const checked: string[] = [];

  /** Calls the route and checks the answer against the document; returns it. */
  async function call(method: string, path: string, init: { query?: string; headers?: Record<string, string>; body?: unknown } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${svc.url}${path}${init.query ?? ''}`, {
      method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    const operation = doc.paths[path]?.[method.toLowerCase()];
    assert.ok(operation, `${method} ${path} is in the document`);
    const response = operation.responses[String(res.status)];
    assert.ok(response, `${method} ${path} answered ${res.status}, which the document does not list: ${text.slice(0, 200)}`);
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const declared = Object.keys(response.content ?? {});
    assert.ok(declared.some((d) => d.split(';')[0] === type), `${method} ${path} ${res.status}: content type ${type}, document: ${declared.join(', ')}`);
    const contentKey = declared.find((d) => d.split(';')[0] === type)!;
    const json = type === 'application/json' ? JSON.parse(text) as Record<string, unknown> : null;
    const validate = ajv.getSchema(`openapi.json#/${pointer('paths', path, method.toLowerCase(), 'responses', String(res.status), 'content', contentKey, 'schema')}`);
    assert.ok(validate, 'the response schema resolves');
    const valid = validate(json ?? text);
    assert.ok(valid, `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors?.slice(0, 3))}\n${text.slice(0, 400)}`);
    checked.push(`${method} ${path} ${res.status}`);
    return { status: res.status, json, text, headers: res.headers };
  }

  before(async () => {
    svc = await startService({ env: { WORKERS: '2' } });
    key = await createTestKey(svc, { challengePolicy: { algorithm: 'SHA-256', counterMin: 10, counterMax: 100 } });
    const res = await fetch(`${svc.url}/v1/docs/openapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    doc = await res.json() as Doc;
    ajv = new Ajv2020({ strict: false, allowUnionTypes: true, unicode: false });
    (addFormatsPlugin as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema(doc as object, "openapi.json");
  });
  after(async () => { await svc.stop(); });

  test('the document is valid OpenAPI 3.1 and describes every route of this instance', async () => {
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    assert.deepEqual(result, { valid: true });
    const described = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)).sort();
    assert.deepEqual(described, API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    assert.ok(!svc.output.some((l) => l.includes('routes without a description')), svc.output.join('\n'));
  });

  test('the widget\'s routes: challenge, verify and inspect answer as documented', async () => {
    const bad = { headers: { origin: 'https://example.com' } };
    await call('GET', '/v1/challenge', bad);
    assert.equal((await call('GET', '/v1/challenge', { query: '?apiKey=key_nope' })).json!.error, 'API_KEY_INVALID');
    assert.equal((await call('GET', '/v1/challenge', { query: `?apiKey=${key.id}&params.bad%20name=1` })).json!.error, 'INVALID_PARAMETER');
    const issued = await call('GET', '/v1/challenge', { query: `?apiKey=${key.id}&params.form=signup` });
    assert.equal(issued.status, 200);
    const { payload } = await solveV2(issued.text);
    const verified = await call('POST', '/v1/verify', { query: `?apiKey=${key.id}`, body: { payload } });
    assert.equal(verified.json!.verified, true);
    const again = await call('POST', '/v1/verify', { query: `?apiKey=${key.id}`, body: { payload } });
    assert.deepEqual(again.json, { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
    assert.equal((await call('POST', '/v1/verify', { query: `?apiKey=${key.id}`, body: { nope: 1 } })).json!.error, 'INVALID_PAYLOAD');
    assert.equal((await call('POST', '/v1/verify', { query: `?apiKey=${key.id}`, body: { payload, timeZone: 'no zone' } })).json!.error, 'INVALID_PARAMETER');
    const inspected = await call('GET', '/v1/inspect', { query: `?apiKey=${key.id}` });
    assert.equal(inspected.status, 200);

    // The server payload, checked by the backend: once online, once with the secret.
    const server = verified.json!.payload as string;
    const online = await call('POST', '/v1/verify/signature', { body: { payload: server } });
    assert.equal(online.json!.verified, true);
    assert.equal((await call('POST', '/v1/verify/signature', { body: { payload: 42 } })).json!.error, 'INVALID_PAYLOAD');
    const issued2 = await call('GET', '/v1/challenge', { query: `?apiKey=${key.id}` });
    const second = await call('POST', '/v1/verify', { query: `?apiKey=${key.id}`, body: { payload: (await solveV2(issued2.text)).payload } });
    const bearer = { authorization: `Bearer ${key.secret}` };
    assert.deepEqual((await call('POST', '/challenge/verify', { headers: bearer, body: { payload: second.json!.payload } })).json, { verified: true });
    assert.deepEqual((await call('POST', '/challenge/verify', { headers: bearer, body: { payload: second.json!.payload } })).json,
      { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
    assert.equal((await call('POST', '/challenge/verify', { body: { payload: 'x' } })).json!.error, 'AUTHORIZATION_REQUIRED');
    assert.equal((await call('POST', '/challenge/verify', { headers: bearer, body: { payload: 'x', apiKey: 7 } })).json!.error, 'INVALID_PARAMETER');
  });

  test('server routes: usage, classifier, training and free keys answer as documented', async () => {
    const bearer = { authorization: `Bearer ${key.secret}` };
    assert.equal((await call('GET', '/usage', { headers: bearer })).status, 200);
    assert.equal((await call('GET', '/usage', { headers: bearer, query: '?month=2026-13' })).json!.error, 'INVALID_MONTH');
    assert.equal((await call('GET', '/usage', { headers: { authorization: 'Bearer sec_nope' } })).json!.error, 'API_KEY_INVALID');
    const classified = await call('POST', '/v1/classifier', {
      headers: bearer, body: { text: 'Buy cheap followers now!!! http://bit.ly/x', email: 'a@example.com', ipAddress: '192.0.2.7', userAgent: 'curl/8.0' },
    });
    assert.equal(classified.status, 200);
    assert.equal((await call('POST', '/v1/classifier', { headers: bearer, body: { text: 5 } })).json!.error, 'INVALID_PARAMETER');
    const added = await call('POST', '/v1/training', { headers: bearer, body: { text: 'cheap followers for your account', group: 'spam' } });
    assert.equal(added.status, 201);
    assert.equal((await call('GET', '/v1/training', { headers: bearer, query: '?group=spam' })).status, 200);
    assert.equal((await call('POST', '/v1/training', { headers: bearer, body: { text: 'x', weight: 11 } })).json!.message, 'weight must be a number from 0 to 10');
    assert.equal((await call('DELETE', '/v1/training', { headers: bearer, query: `?id=${added.json!.id as string}` })).status, 200);
    assert.equal((await call('DELETE', '/v1/training', { headers: bearer, query: `?id=${added.json!.id as string}` })).json!.error, 'NOT_FOUND');
    assert.equal((await call('DELETE', '/v1/training', { headers: bearer })).json!.error, 'INVALID_PARAMETER');
    assert.equal((await call('POST', '/api_key/generate', { body: { hostname: 7 } })).json!.error, 'INVALID_HOSTNAME');
    const m2m = await call('POST', '/api_key/generate', { body: { hostname: 'docs-test.example.com' } });
    assert.equal(m2m.json!.error, 'ALTCHA_REQUIRED');
    assert.match(m2m.headers.get('www-authenticate') ?? '', /^Altcha /);
  });

  test('operational routes and the documentation answer as documented', async () => {
    assert.equal((await call('GET', '/.live')).status, 200);
    assert.equal((await call('GET', '/.ready')).status, 200);
    assert.equal((await call('GET', '/.health')).status, 200);
    assert.equal((await call('GET', '/.metrics')).status, 200);
    assert.equal((await call('GET', '/.well-known/security.txt')).status, 200);
    assert.equal((await call('GET', '/v1/docs')).status, 200);
    assert.equal((await call('GET', '/v1/docs/openapi.json')).status, 200);
  });

  test('the page and its assets: types, caching and a policy without inline script; /v1/docs/ redirects', async () => {
    const page = await fetch(`${svc.url}/v1/docs`);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self';/);
    assert.doesNotMatch(csp, /unsafe-eval|script-src[^;]*unsafe-inline/);
    const html = await page.text();
    assert.doesNotMatch(html, /<script>|https?:\/\//);
    const assets: [string, string][] = [
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'], ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['init.js', 'text/javascript; charset=utf-8'], ['favicon-32x32.png', 'image/png'], ['favicon-16x16.png', 'image/png'],
    ];
    for (const [file, type] of assets) {
      assert.ok(html.includes(`docs/${file}`), file);
      const res = await fetch(`${svc.url}/v1/docs/${file}`);
      assert.equal(res.status, 200, file);
      assert.equal(res.headers.get('content-type'), type, file);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', file);
      assert.ok((await res.arrayBuffer()).byteLength > 100, file);
    }
    const slash = await fetch(`${svc.url}/v1/docs/`, { redirect: 'manual' });
    assert.equal(slash.status, 301);
    assert.equal(new URL(slash.headers.get('location')!, `${svc.url}/v1/docs/`).pathname, '/v1/docs');
    const missing = await fetch(`${svc.url}/v1/docs/swagger-ui.js.map`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: 'NOT_FOUND', statusCode: 404 });
  });

  test('hostile requests to /v1/docs: other methods, traversal, encoded and long paths, HEAD', async () => {
    const post = await fetch(`${svc.url}/v1/docs/openapi.json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    assert.deepEqual(await post.json(), { error: 'METHOD_NOT_ALLOWED', statusCode: 405 });
    // Sent as they are (fetch would normalise dot segments): only the listed files exist.
    const raw = new RawClient(svc.port, 1);
    try {
      for (const path of ['/v1/docs/../../package.json', '/v1/docs/%2e%2e/%2e%2e/package.json', '/v1/docs/..%2f..%2fpackage.json',
        '/v1/docs/swagger-ui-bundle.js%00', '/v1/docs//openapi.json', '/v1/docs/index.html', '/v1/docs/swagger-initializer.js',
        '/v1/docs/oauth2-redirect.html', '/v1/docs/swagger-ui-bundle.js.map', '/v1/DOCS']) {
        const res = await raw.request('GET', path);
        assert.equal(res.status, 404, path);
        assert.deepEqual(JSON.parse(res.body), { error: 'NOT_FOUND', statusCode: 404 }, path);
      }
    } finally {
      raw.close();
    }
    const long = await fetch(`${svc.url}/v1/docs?${'a'.repeat(20_000)}`);
    assert.equal(long.status, 414);
    // A query changes nothing: the same page.
    const queried = await fetch(`${svc.url}/v1/docs?url=https://evil.example/openapi.json&configUrl=x`);
    assert.equal(queried.status, 200);
    assert.doesNotMatch(await queried.text(), /evil/);
    const head = await fetch(`${svc.url}/v1/docs/openapi.json`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.ok(Number(head.headers.get('content-length')) > 10_000);
    assert.equal((await head.arrayBuffer()).byteLength, 0);
  });

  test('every answer checked matched the document', () => {
    assert.ok(checked.length >= 35, checked.join('\n'));
    assert.ok(new Set(checked.map((c) => c.split(' ').slice(0, 2).join(' '))).size >= 17, checked.join('\n'));
  });
});

describe('API_DOCS_ENABLED=0', () => {
  let svc: Service;
  before(async () => { svc = await startService({ env: { WORKERS: '0', API_DOCS_ENABLED: '0' } }); });
  after(async () => { await svc.stop(); });

  test('/v1/docs, its document and its assets are 404 NOT_FOUND; the API still answers', async () => {
    for (const path of ['/v1/docs', '/v1/docs/openapi.json', '/v1/docs/swagger-ui-bundle.js', '/v1/docs/init.js']) {
      const res = await fetch(`${svc.url}${path}`);
      assert.equal(res.status, 404, path);
      assert.deepEqual(await res.json(), { error: 'NOT_FOUND', statusCode: 404 }, path);
    }
    assert.equal((await fetch(`${svc.url}/v1/challenge`)).status, 401);
  });
});
