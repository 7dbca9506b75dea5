// The only loader of the native addon (build/Release/palisade.node): the one `require` of the
// binary in the code base. The typed wrappers of src/native/ take the raw bindings from here; nothing
// else may use them.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// From dist/src/native/ to the package root.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function load(): Record<string, unknown> {
  const path = join(root, 'build', 'Release', 'palisade.node');
  if (!existsSync(path)) {
    throw new Error(
      `The native addon is missing (${path}). Build it with "npm install" (or "npm run build"); ` +
        'it needs python3, make and a C++ compiler with Node.js headers.',
    );
  }
  return createRequire(import.meta.url)(path) as Record<string, unknown>;
}

/** The raw addon; the typed wrappers of src/native/ only, never used directly elsewhere. */
export const addon = load();
