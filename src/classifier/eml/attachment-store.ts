// Where X-Attachments-Upload puts attachments: STORAGE_PROVIDER=local writes each one once, named
// by its SHA-256, under STORAGE_LOCAL_DIR/eml (mode 0600), and answers a file: URI. The same bytes
// sent twice are one file.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface AttachmentStore {
  /** Stores the bytes (hex SHA-256 `sha256`) and answers their URI. */
  save(bytes: Uint8Array, sha256: string): Promise<string>;
}

export function createLocalAttachmentStore(dir: string): AttachmentStore {
  const root = join(dir, 'eml');
  let ready: Promise<unknown> | null = null;
  return {
    async save(bytes, sha256) {
      if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error('attachment store: not a SHA-256');
      ready ??= mkdir(root, { recursive: true, mode: 0o700 });
      await ready;
      const path = join(root, sha256);
      try {
        await writeFile(path, bytes, { flag: 'wx', mode: 0o600 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      return pathToFileURL(path).href;
    },
  };
}
