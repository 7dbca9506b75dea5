// Where the service keeps its files: DATA_DIR, and paths from configuration resolved against it.
import { accessSync, constants, existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/** DATA_DIR rule: explicit value; else /data inside a container when writable; else ./data. */
export function resolveDataDir(given: string, cwd = process.cwd()): string {
  if (given !== '') return isAbsolute(given) ? given : resolve(cwd, given);
  const inContainer = existsSync('/.dockerenv') || existsSync('/run/.containerenv');
  if (inContainer) {
    try {
      accessSync('/data', constants.W_OK);
      return '/data';
    } catch { /* not writable or absent: fall through */ }
  }
  return resolve(cwd, 'data');
}

/** A path from configuration, resolved against DATA_DIR when relative. */
export function dataPath(config: { readonly dataDir: string }, path: string): string {
  return isAbsolute(path) ? path : resolve(config.dataDir, path);
}
