// `npm test`: runs every compiled test file under dist/test with node:test. Integration suites read
// REDIS_URL / POSTGRES_URL (defaults: the local servers); with CI=true they fail when unreachable.
//   node dist/test/run.js [--soak] [filter...]
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const soak = args.includes('--soak');
const filters = args.filter((a) => !a.startsWith('--'));

function collect(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (soak ? name.endsWith('.soak.js') : name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const files = collect(here, []).filter(
  (f) => filters.length === 0 || filters.some((flt) => relative(here, f).includes(flt)),
);
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const child = spawn(
  process.execPath,
  ['--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, PALISADE_TEST: '1' } },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
