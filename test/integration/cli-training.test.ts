// `npm run cli -- training …` and `submissions …` against the embedded database of a stopped service.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { openDatabase } from '../../src/db/client.js';
import { insertSpamSubmissions } from '../../src/db/spam-submissions.js';
import { startEmbeddedDatabase } from '../../src/primary/embedded-db.js';
import { runCli as cli, type CliRun } from '../helpers/cli.js';
import { freshPgliteDataDir } from '../helpers/db.js';

const SECRETS = {
  PALISADE_HMAC_SECRET: 'cli-test-palisade-hmac-secret-0123456789',
  CODE_CHALLENGE_SECRET: 'cli-test-code-challenge-secret-0123456789',
  JWT_SECRET: 'cli-test-jwt-secret-0123456789-0123456789',
  HASHING_SALT: 'cli-test-hashing-salt-0123456789',
  NODE_ID: '0123456789abcdef',
};
const json = <T>(r: CliRun): T => {
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as T;
};

let dir = '';
let at: string[] = [];
before(async () => {
  dir = await freshPgliteDataDir();
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify(SECRETS), { mode: 0o600 });
  at = ['--data-dir', dir, '--json'];
});

test('training add, list (per group) and remove; bad values are usage errors', async () => {
  const a = json<{ id: string; group: string; threshold: number; weight: number; source: string }>(
    await cli(['training', 'add', 'cheap', 'replica', 'watches', ...at]));
  assert.match(a.id, /^trn_/);
  assert.deepEqual([a.group, a.threshold, a.weight], ['default', 0.7, 1]);
  assert.match(a.source, /^cli:/);
  const b = json<{ id: string }>(await cli(['training', 'add', 'guest post offer', '--group', 'seo', '--threshold', '0.5', '--weight', '2', ...at]));
  const all = json<{ id: string; text: string }[]>(await cli(['training', 'list', ...at]));
  assert.deepEqual(all.map((e) => e.text), ['cheap replica watches', 'guest post offer']);
  assert.deepEqual(json<{ id: string }[]>(await cli(['training', 'list', '--group', 'seo', ...at])).map((e) => e.id), [b.id]);
  const bad = await cli(['training', 'add', 'x', '--threshold', '2', ...at]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /threshold must be a number in \(0, 1\]/);
  assert.equal((await cli(['training', 'add', 'x', '--weight', 'heavy', ...at])).code, 2);
  assert.equal((await cli(['training', 'add', ...at])).code, 2);
  assert.deepEqual(json(await cli(['training', 'remove', a.id, ...at])), { id: a.id, removed: true });
  const again = await cli(['training', 'remove', a.id, ...at]);
  assert.equal(again.code, 1);
  assert.match(again.err, /no training example/);
});

test('submissions list and promote: a kept text becomes training data; a hash-only one cannot', async () => {
  // The service is stopped: write two submissions straight into its database.
  const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
  const db = openDatabase({ socketPath: embedded.socketPath, maxConnections: 1 });
  try {
    const [account] = await db.sql<{ id: string }[]>`select id from accounts where is_default`;
    const base = { accountId: account!.id, apiKeyId: 'key_x', source: 'classifier', score: 9, reasons: ['PHARMACY'], fields: [], emailDomain: null, ip: null, country: null };
    await insertSpamSubmissions(db.sql, [
      { ...base, text: 'buy pills online now', textHash: 'a'.repeat(64), time: new Date(Date.now() - 1000) },
      { ...base, text: null, textHash: 'b'.repeat(64) },
    ]);
  } finally {
    await db.close();
    await embedded.close();
  }
  const rows = json<{ id: string; text: string | null; reasons: string[] }[]>(await cli(['submissions', 'list', ...at]));
  assert.deepEqual(rows.map((r) => r.text), [null, 'buy pills online now']);
  assert.deepEqual(rows[1]!.reasons, ['PHARMACY']);
  const promoted = json<{ text: string; source: string; group: string }>(await cli(['submissions', 'promote', rows[1]!.id, '--group', 'pharmacy', ...at]));
  assert.deepEqual([promoted.text, promoted.source, promoted.group], ['buy pills online now', `submission:${rows[1]!.id}`, 'pharmacy']);
  const hashOnly = await cli(['submissions', 'promote', rows[0]!.id, ...at]);
  assert.equal(hashOnly.code, 1);
  assert.match(hashOnly.err, /hash only/);
  assert.equal((await cli(['submissions', 'promote', 'sub_missing', ...at])).code, 1);
});
