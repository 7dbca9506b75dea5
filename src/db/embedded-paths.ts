// Where the embedded database lives under DATA_DIR. Kept apart from src/primary/embedded-db.ts so
// that workers and the CLI, which only connect, never load PGlite (tens of MB per process).
import { join, resolve } from 'node:path';

/** Where the embedded database's socket lives for `dataDir` (workers and the CLI use this). */
export function embeddedSocketPath(dataDir: string): string {
  return join(resolve(dataDir), 'run', 'db.sock');
}

/** Where the PGlite directory is for `location` under `dataDir`. */
export function embeddedLocation(dataDir: string, location: string): string {
  return location.startsWith('memory://') ? location : resolve(dataDir, location);
}
