// Files under DATA_DIR belong to the service's user alone. PGlite's file system chmods most of the
// database's files to 0666 whatever the umask (968 of 1,027 in a new data directory), and the
// build-time template and earlier data directories carry those modes: only the data directory's
// 0700 kept other users out.
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createTestKey, newDataDir, startService } from '../helpers/service.js';

/** Every path under `dir` (itself included) whose mode grants anything to the group or others. */
function openToOthers(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  let seen = 0;
  while (stack.length > 0) {
    const path = stack.pop()!;
    const st = lstatSync(path);
    seen++;
    if (!st.isSymbolicLink() && (st.mode & 0o077) !== 0) out.push(`${(st.mode & 0o777).toString(8)} ${path.slice(dir.length)}`);
    if (st.isDirectory()) for (const name of readdirSync(path)) stack.push(join(path, name));
  }
  assert.ok(seen > 500, `the walk saw the database (${seen} paths)`);
  return out;
}

for (const [name, makeDir] of [
  ['an empty DATA_DIR (seeded from the build-time template)', () => mkdtempSync(join(tmpdir(), 'pal-modes-'))],
  ['a DATA_DIR whose database files are 0666 already (an earlier version\'s)', async () => {
    const dir = await newDataDir();
    // The copy's parent as the service itself makes it (the test helper's mkdir left it 0755).
    chmodSync(join(dir, 'db'), 0o700);
    return dir;
  }],
] as const) {
  test(`${name}: after start-up and some writes, nothing under it is open to the group or others`, async () => {
    const dataDir = await makeDir();
    try {
      const svc = await startService({ dataDir, env: { WORKERS: '1' } });
      try {
        // Writes make new relation and WAL files while the service runs.
        for (let i = 0; i < 3; i++) await createTestKey(svc, { name: `modes ${i}` });
        assert.deepEqual(openToOthers(dataDir), []);
      } finally {
        assert.equal(await svc.stop(), 0);
      }
      assert.deepEqual(openToOthers(dataDir), [], 'after the shutdown checkpoint');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
