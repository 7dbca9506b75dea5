// GET /v1/docs (API_DOCS_ENABLED): the API documentation. /v1/docs/openapi.json is the OpenAPI 3.1
// document of the routes registered in this instance, built from their schemas (src/api-schema/);
// /v1/docs is Swagger UI, served from the installed swagger-ui-dist package with a start-up script
// of our own: nothing is fetched from elsewhere, and the page's Content-Security-Policy allows only
// this origin (no inline script).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { API_ROUTES } from '../api-schema/index.js';
import { buildOpenApi } from '../api-schema/openapi.js';
import type { Router } from '../http/router.js';
import type { Reply } from '../http/types.js';

export interface DocsOptions {
  readonly version: string;
  /** APP_BASE_PATH. */
  readonly basePath: string;
}

export const DOCS_PATH = '/v1/docs';

/** The page's policy: scripts and styles from this origin only (Swagger UI sets style attributes). */
export const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The files of swagger-ui-dist served under /v1/docs/, with their types. */
const DIST_FILES: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/** Starts Swagger UI on the document next to this script: a file, as the policy allows no inline script. */
const INIT_SCRIPT = `// Palisade: starts Swagger UI on the OpenAPI document served next to this script.
(function () {
  var documentUrl = new URL('openapi.json', document.currentScript.src).href;
  window.addEventListener('load', function () {
    window.ui = SwaggerUIBundle({
      url: documentUrl,
      dom_id: '#swagger-ui',
      deepLinking: true,
      layout: 'BaseLayout',
      validatorUrl: null,
      tryItOutEnabled: false,
      presets: [SwaggerUIBundle.presets.apis],
    });
  });
})();
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Palisade API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="docs/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`;

/** The paths registered besides the documented page and document (assets, the trailing-slash redirect). */
export const DOCS_ASSET_PATHS: readonly string[] = [
  `${DOCS_PATH}/`, `${DOCS_PATH}/init.js`, ...Object.keys(DIST_FILES).map((f) => `${DOCS_PATH}/${f}`),
];

/** swagger-ui-dist's directory. */
export function swaggerUiDir(): string {
  const require = createRequire(import.meta.url);
  try {
    return (require('swagger-ui-dist') as { getAbsoluteFSPath(): string }).getAbsoluteFSPath();
  } catch (err) {
    throw new Error('API_DOCS_ENABLED=1 serves the swagger-ui-dist package, which is not installed (npm ci), or set API_DOCS_ENABLED=0', { cause: err });
  }
}

/**
 * Registers the documentation; call it after every other route: the document describes the routes
 * registered by then (and these). Returns the routes registered without a description.
 */
export function registerDocsRoutes(router: Router, options: DocsOptions): { undocumented: string[] } {
  const dir = swaggerUiDir();
  const asset = (type: string, body: string | Buffer, cache = 'public, max-age=3600'): Reply => ({
    status: 200, body, headers: { 'content-type': type, 'cache-control': cache, 'x-content-type-options': 'nosniff' },
  });
  // Read on a worker's first request for them (2 MB, that most workers never serve), then kept; a
  // failed read is answered 500 INTERNAL and tried again on the next request.
  for (const [file, type] of Object.entries(DIST_FILES)) {
    let reply: Promise<Reply> | null = null;
    router.add('GET', `${DOCS_PATH}/${file}`, () => {
      if (reply === null) {
        const reading = readFile(join(dir, file)).then((body) => asset(type, body));
        reading.catch(() => { if (reply === reading) reply = null; });
        reply = reading;
      }
      return reply;
    });
  }
  const init = asset('text/javascript; charset=utf-8', INIT_SCRIPT);
  router.add('GET', `${DOCS_PATH}/init.js`, () => init);
  const page: Reply = {
    status: 200, body: PAGE,
    headers: {
      'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff',
      'content-security-policy': DOCS_CSP, 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY',
    },
  };
  router.add('GET', DOCS_PATH, () => page);
  const slash: Reply = { status: 301, body: '', headers: { location: '../docs', 'content-type': 'text/plain; charset=utf-8' } };
  router.add('GET', `${DOCS_PATH}/`, () => slash);

  // Registered before the document is built, so that it describes itself.
  let document: Reply | null = null;
  router.add('GET', `${DOCS_PATH}/openapi.json`, () => document!);
  const registered = router.list();
  const specs = API_ROUTES.filter((spec) => registered.some((r) => r.method === spec.method && r.path === spec.path));
  document = asset('application/json; charset=utf-8', JSON.stringify(buildOpenApi(specs, options)), 'no-cache');
  const undocumented = registered
    .filter((r) => !DOCS_ASSET_PATHS.includes(r.path) && !API_ROUTES.some((s) => s.method === r.method && s.path === r.path))
    .map((r) => `${r.method} ${r.path}`);
  return { undocumented };
}
