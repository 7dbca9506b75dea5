// docs/scaling.md and its Compose file: every variable the file sets exists, the three nodes share
// Redis, the database and the seed and have names of their own, the docs page is linked from the
// README, and `docker compose config` accepts the file where the Compose plugin is installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { VARIABLES } from '../../src/config/index.js';

const FILE = 'docs/examples/compose.several-nodes.yml';
const text = readFileSync(FILE, 'utf8');

test('the Compose file sets only known variables; nodes share the stores and the seed, with names of their own', () => {
  const env = text.slice(text.indexOf('environment: &node-env'), text.indexOf('\nservices:'));
  const names = [...env.matchAll(/^ {4}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
  assert.deepEqual(names, ['REDIS_URL', 'POSTGRES_URL', 'SECRET_SEED', 'CACHE_DURATION_API_KEYS', 'X_FORWARDED_FOR_TRUSTED', 'SNAPSHOTS_MAIN_SCHEDULE']);
  for (const name of [...names, 'NODE_NAME']) assert.ok(name in VARIABLES, `${name} is a configuration variable`);
  const nodes = [...text.matchAll(/^ {2}(node-\d):\n {4}<<: \*node\n {4}environment: \{ <<: \*node-env, NODE_NAME: (node-\d) \}\n {4}volumes: \[(node-\d)-data:\/data\]/gm)];
  assert.deepEqual(nodes.map((m) => [m[1], m[2], m[3]]), [['node-1', 'node-1', 'node-1'], ['node-2', 'node-2', 'node-2'], ['node-3', 'node-3', 'node-3']]);
  assert.match(text, /--maxmemory-policy", "noeviction"/);
  assert.match(text, /--appendonly", "yes"/);
  assert.match(readFileSync('README.md', 'utf8'), /\[running several nodes\]\(docs\/scaling\.md\)/);
});

const compose = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
const composeMissing = compose.status !== 0;
if (composeMissing) console.error(`\n*** SKIPPING docker compose config: the Compose plugin is not installed (${(compose.stderr || compose.error?.message || '').trim()}) ***\n`);

test('docker compose config accepts the file', { skip: composeMissing ? 'docker compose is not installed here' : false }, () => {
  const r = spawnSync('docker', ['compose', '-f', FILE, 'config', '--quiet'], {
    encoding: 'utf8', env: { ...process.env, SECRET_SEED: 'x'.repeat(32), POSTGRES_PASSWORD: 'p' },
  });
  assert.equal(r.status, 0, r.stderr);
  const missing = spawnSync('docker', ['compose', '-f', FILE, 'config', '--quiet'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
  assert.notEqual(missing.status, 0, 'without SECRET_SEED and POSTGRES_PASSWORD the file is refused');
});
