// A ready-made empty PGlite data directory, created once at build time (`npm install` runs
// scripts/pglite-template.ts), so that a first start copies it (~0.2 s) instead of running initdb
// (~7 s on the 2-core machine). Keyed by the PGlite version; without a matching template the
// database is simply initialised at start-up as before.
import { PGlite } from '@electric-sql/pglite';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const TEMPLATE_DIR = join(ROOT, 'build', 'pglite-template');

function pgliteVersion(): string {
  const main = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  return (JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')) as { version: string }).version;
}

/** Copies the template to `location` when `location` does not exist yet; true when it did. */
export function seedFromTemplate(location: string, template = TEMPLATE_DIR): boolean {
  if (existsSync(location)) return false;
  try {
    if (readFileSync(join(template, 'READY'), 'utf8') !== pgliteVersion()) return false;
  } catch {
    return false;
  }
  mkdirSync(dirname(location), { recursive: true, mode: 0o700 });
  const tmp = `${location}.seeding-${process.pid}`;
  cpSync(join(template, 'pgdata'), tmp, { recursive: true });
  renameSync(tmp, location);
  return true;
}

/** Builds the template (idempotent). */
export async function createTemplate(template = TEMPLATE_DIR): Promise<void> {
  const version = pgliteVersion();
  try {
    if (readFileSync(join(template, 'READY'), 'utf8') === version) return;
  } catch { /* build it */ }
  rmSync(template, { recursive: true, force: true });
  mkdirSync(template, { recursive: true });
  const db = await PGlite.create({ dataDir: join(template, 'pgdata') });
  await db.close();
  writeFileSync(join(template, 'READY'), version);
}
