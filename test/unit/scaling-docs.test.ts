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

/** `docker compose` (the plugin) or `docker-compose` (Debian's package, which .ci/run installs). */
function findCompose(): { cmd: string; pre: string[]; problem: string } {
  const plugin = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  if (plugin.status === 0) return { cmd: 'docker', pre: ['compose'], problem: '' };
  const v1 = spawnSync('docker-compose', ['version'], { encoding: 'utf8' });
  if (v1.status === 0) return { cmd: 'docker-compose', pre: [], problem: '' };
  return { cmd: '', pre: [], problem: (plugin.stderr || plugin.error?.message || 'docker compose not found').trim() };
}
const compose = findCompose();
if (compose.problem !== '' && process.env['CI'] !== 'true') {
  console.error(`\n*** SKIPPING docker compose config: neither docker compose nor docker-compose is installed (${compose.problem}) ***\n`);
}

test('docker compose config accepts the file, and refuses it without the two secrets', { skip: compose.problem !== '' && process.env['CI'] !== 'true' ? 'docker compose is not installed here' : false }, () => {
  assert.equal(compose.problem, '', 'under CI=true docker compose or docker-compose must be installed (.ci/run installs docker-compose)');
  const run = (env: NodeJS.ProcessEnv) => spawnSync(compose.cmd, [...compose.pre, '-f', FILE, 'config', '--quiet'], { encoding: 'utf8', env });
  const r = run({ ...process.env, SECRET_SEED: 'x'.repeat(32), POSTGRES_PASSWORD: 'p' });
  assert.equal(r.status, 0, r.stderr);
  const missing = run({ PATH: process.env['PATH'] ?? '' });
  assert.notEqual(missing.status, 0, 'without SECRET_SEED and POSTGRES_PASSWORD the file is refused');
  assert.match(missing.stderr, /set POSTGRES_PASSWORD|set SECRET_SEED/);
});
