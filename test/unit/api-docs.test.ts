// The OpenAPI document of /v1/docs (src/api-schema/): valid OpenAPI 3.1 by a real validator, every
// route registered in src/ described, every error code of the catalogue reachable, and the docs
// routes describing only what an instance registered.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { VERIFY_REASONS } from '../../src/api-schema/common.js';
import { API_ROUTES } from '../../src/api-schema/index.js';
import { buildOpenApi, routeErrors } from '../../src/api-schema/openapi.js';
import { ERRORS } from '../../src/errors.js';
import { Router } from '../../src/http/router.js';
import { json, type Reply, type RequestContext } from '../../src/http/types.js';
import { DOCS_ASSET_PATHS, registerDocsRoutes } from '../../src/routes/docs.js';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { oneOf?: unknown[]; properties?: { error?: { enum?: string[] } } } }> }> }>> };
const validate = (doc: unknown) => new Validator().validate(doc as Parameters<Validator['validate']>[0]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []);
}

test('the document is valid OpenAPI 3.1, with and without APP_BASE_PATH', async () => {
  for (const basePath of ['', '/captcha']) {
    const doc = buildOpenApi(API_ROUTES, { version: '1.2.3', basePath });
    assert.deepEqual(await validate(doc), { valid: true });
    assert.deepEqual(doc.servers, [{ url: basePath === '' ? '/' : basePath }]);
  }
  // The validator does refuse a broken document.
  const broken = buildOpenApi(API_ROUTES, { version: '1', basePath: '' }) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  broken.paths['/v1/verify']!.post!.responses = 'none';
  assert.equal((await validate(broken)).valid, false);
});

test('every route registered in src/ has a description in src/api-schema/', () => {
  const registered = new Set<string>();
  for (const file of sources(SRC)) {
    for (const m of readFileSync(file, 'utf8').matchAll(/router\.add(?:Stream)?\(\s*'([A-Z]+)',\s*'([^']+)'/g)) registered.add(`${m[1]} ${m[2]}`);
  }
  assert.ok(registered.size >= 17, [...registered].join(', '));
  const described = new Set(API_ROUTES.map((r) => `${r.method} ${r.path}`));
  assert.deepEqual([...registered].filter((r) => !described.has(r)), []);
});

test('each operation answers its error codes under their catalogue statuses; every code is documented somewhere', () => {
  const doc = buildOpenApi(API_ROUTES, { version: '1', basePath: '' }) as unknown as Doc;
  const seen = new Set<string>();
  for (const route of API_ROUTES) {
    const responses = doc.paths[route.path]![route.method.toLowerCase()]!.responses;
    for (const code of routeErrors(route)) {
      const status = String(ERRORS[code].status);
      const schema = responses[status]?.content?.['application/json']?.schema;
      assert.ok(schema, `${route.method} ${route.path}: ${status} for ${code}`);
      const errorSchema = (schema.oneOf?.at(-1) ?? schema) as { properties: { error: { enum: string[] } } };
      assert.ok(errorSchema.properties.error.enum.includes(code), `${route.method} ${route.path}: ${code}`);
      seen.add(code);
    }
  }
  // The verification outcomes are the `reason` of a 200 {"verified": false}.
  for (const reason of VERIFY_REASONS) seen.add(reason);
  // Codes no public route answers: the readiness body carries NOT_READY itself; 405 is the answer of
  // no operation; the admin API's codes (FORBIDDEN among them) are documented in docs/admin.md, as
  // the admin API is, outside /v1/docs.
  const admin = ['ADMIN_IP_FORBIDDEN', 'CONFLICT', 'CSRF_INVALID', 'FORBIDDEN', 'LOGIN_DISABLED', 'LOGIN_FAILED', 'PASSWORD_CHANGE_REQUIRED', 'SESSION_REQUIRED', 'TOTP_REQUIRED'];
  assert.deepEqual(Object.keys(ERRORS).filter((c) => !seen.has(c)).sort(), ['METHOD_NOT_ALLOWED', 'NOT_READY', ...admin].sort());
  const adminDoc = readFileSync(fileURLToPath(new URL('../../../docs/admin.md', import.meta.url)), 'utf8');
  for (const code of admin) assert.ok(adminDoc.includes(code), `docs/admin.md names ${code}`);
});

test('registerDocsRoutes describes the routes registered, reports those without a description, serves its files', async () => {
  const router = new Router();
  const ok = (): Reply => json({});
  router.add('GET', '/v1/challenge', ok);
  router.add('POST', '/v1/made-up', ok);
  const { undocumented } = registerDocsRoutes(router, { version: '9.9.9', basePath: '' });
  assert.deepEqual(undocumented, ['POST /v1/made-up']);
  const req = {} as RequestContext;
  const reply = await router.find('GET', '/v1/docs/openapi.json')!.handler!(req);
  const doc = JSON.parse(String(reply.body)) as { info: { version: string }; paths: Record<string, unknown> };
  assert.equal(doc.info.version, '9.9.9');
  assert.deepEqual(Object.keys(doc.paths).sort(), ['/v1/challenge', '/v1/docs', '/v1/docs/openapi.json']);
  assert.deepEqual(await validate(doc), { valid: true });
  for (const path of DOCS_ASSET_PATHS) assert.ok(router.find('GET', path), path);
  // The package's files are read on the first request, then the same reply is served.
  const bundle = router.find('GET', '/v1/docs/swagger-ui-bundle.js')!.handler!;
  const first = await bundle(req);
  assert.equal(first.headers!['content-type'], 'text/javascript; charset=utf-8');
  assert.ok(first.body.length > 1_000_000);
  assert.equal(await bundle(req), first);
  const page = await router.find('GET', '/v1/docs')!.handler!(req);
  assert.equal(page.headers!['content-type'], 'text/html; charset=utf-8');
  assert.doesNotMatch(String(page.body), /<script>|<style>|https?:/);
});
