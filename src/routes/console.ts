// The console's files under /app/ (docs/admin.md): the single-page application built by Vite into
// dist/console (`npm run build:console`, part of `prepare`), read once at start. Every path under
// /app/ that is not a file answers index.html (the application routes itself). Security headers on
// every answer: a strict Content-Security-Policy (scripts and styles from the service only, no inline
// script), frame-ancestors 'none' and X-Frame-Options DENY, Referrer-Policy no-referrer. The admin
// API (src/routes/admin.ts) is what the pages call; APP_IP_WHITELIST guards both.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorBody } from '../errors.js';
import type { Router } from '../http/router.js';
import type { Reply, RequestContext } from '../http/types.js';
import type { Logger } from '../log.js';
import { type CidrList, ipMatches } from '../parse.js';

export const CONSOLE_PREFIX = '/app';
/** Where Vite writes the console (vite.config.ts outDir). */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

export const CONSOLE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': [
    "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "font-src 'self'",
    "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
});

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json', '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8', '.map': 'application/json',
};

export interface ConsoleOptions {
  readonly basePath: string;
  readonly whitelist: CidrList;
  readonly logger: Logger;
  /** Default CONSOLE_DIR. */
  readonly dir?: string;
}

/** Every file under `dir` by its path relative to it ('/index.html'), or an empty map when not built. */
function readFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(`/${relative(dir, path).split(sep).join('/')}`, readFileSync(path));
    }
  };
  try {
    walk(dir);
  } catch {
    files.clear();
  }
  return files;
}

export function registerConsoleRoutes(router: Router, options: ConsoleOptions): void {
  const files = readFiles(options.dir ?? CONSOLE_DIR);
  const index = files.get('/index.html');
  if (index === undefined) {
    options.logger.warn({ dir: options.dir ?? CONSOLE_DIR }, 'the console is not built (npm run build:console): /app answers 404');
  }
  const allowed = (req: RequestContext) => options.whitelist.empty || ipMatches(options.whitelist, req.ip);
  const html = (body: Buffer): Reply => ({
    status: 200, body, headers: { ...CONSOLE_HEADERS, 'content-type': TYPES['.html']!, 'cache-control': 'no-cache' },
  });
  const refuse = (code: 'ADMIN_IP_FORBIDDEN' | 'NOT_FOUND' | 'METHOD_NOT_ALLOWED', status: number): Reply =>
    ({ status, body: errorBody(code), headers: { ...CONSOLE_HEADERS, 'cache-control': 'no-store' } });

  router.addPrefix(`${CONSOLE_PREFIX}/`, (req) => {
    if (!allowed(req)) return refuse('ADMIN_IP_FORBIDDEN', 403);
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse('METHOD_NOT_ALLOWED', 405);
    if (req.path === CONSOLE_PREFIX) {
      return { status: 308, body: '', headers: { ...CONSOLE_HEADERS, location: `${options.basePath}${CONSOLE_PREFIX}/`, 'content-type': 'text/plain' } };
    }
    if (index === undefined) return refuse('NOT_FOUND', 404);
    const rel = req.path.slice(CONSOLE_PREFIX.length);
    const file = rel === '/' ? undefined : files.get(rel);
    if (file !== undefined && rel !== '/index.html') {
      const type = TYPES[extname(rel)] ?? 'application/octet-stream';
      // Vite names built assets by content hash: they never change under one name.
      const cache = rel.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      return { status: 200, body: file, headers: { ...CONSOLE_HEADERS, 'content-type': type, 'cache-control': cache } };
    }
    // A missing asset is a 404; any other path is a page of the application.
    // So is a file name of any kind, dotfiles included (extname('/.env') is ''): scanners' /app/.env,
    // /app/.git/config are no pages.
    if (rel.startsWith('/assets/') || extname(rel) !== '' || rel.includes('/.')) return refuse('NOT_FOUND', 404);
    return html(index);
  });
}
