// `keys hostname release|reassign`: an operator frees a hostname squatted through
// POST /api_key/generate, or gives it to a key of their choosing. Before, nothing could free it: the
// free key holds it even when revoked, so every later request for it is 409 HOSTNAME_TAKEN.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { findApiKey, freeKeyExists } from '../../src/db/api-keys.js';
import { isUniqueViolation, openDatabase } from '../../src/db/client.js';
import { listKeyAudit } from '../../src/db/key-audit.js';
import { migrate } from '../../src/db/migrate.js';
import { createApiKey, revokeApiKey } from '../../src/keys/api-keys.js';
import { createKeySecrets, deriveApiKeySecretKey } from '../../src/keys/secrets.js';
import { startEmbeddedDatabase } from '../../src/primary/embedded-db.js';
import { runCli as cli, type CliRun } from '../helpers/cli.js';
import { freshPgliteDataDir } from '../helpers/db.js';

const SECRETS = {
  PALISADE_HMAC_SECRET: 'cli-hostnames-palisade-hmac-secret-0123456789',
  CODE_CHALLENGE_SECRET: 'cli-hostnames-code-challenge-secret-0123456789',
  JWT_SECRET: 'cli-hostnames-jwt-secret-0123456789-0123456789',
  HASHING_SALT: 'cli-hostnames-hashing-salt-0123456789',
  NODE_ID: '0123456789abcdef',
};
const secrets = createKeySecrets(deriveApiKeySecretKey(SECRETS.PALISADE_HMAC_SECRET), SECRETS.HASHING_SALT);

const json = <T>(r: CliRun): T => {
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as T;
};

test('keys hostname release and reassign free a squatted hostname (running service, through its socket)', async () => {
  const dir = await freshPgliteDataDir();
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify(SECRETS), { mode: 0o600 });
  const at = ['--data-dir', dir, '--json'];
  const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
  const db = openDatabase({ socketPath: embedded.socketPath });
  const sql = db.sql;
  try {
    await migrate(sql);
    const account = (await ensureDefaultAccount(sql, 'Default Account')).id;
    // Free keys come each with an account of their own, as POST /api_key/generate makes them.
    const free = (hostname: string) => createApiKey(sql, secrets, { hostnames: [hostname], kind: 'free' }, 'test');
    const squat = (await free('squat.example')).key.id;

    // The squat: a second request is refused, and revoking the squatter's key does not help.
    await assert.rejects(free('squat.example'), (err: unknown) => isUniqueViolation(err));
    const other = (await free('other.example')).key.id;
    assert.equal(await revokeApiKey(sql, other, 'test'), true);
    assert.equal(await freeKeyExists(sql, 'other.example'), true);

    // release: the squatter's key is revoked and the name can be generated again.
    const released = json<{ hostname: string; revoked: string[]; cleared: string[] }>(
      await cli(['keys', 'hostname', 'release', 'SQUAT.example', ...at]));
    assert.deepEqual(released, { hostname: 'squat.example', revoked: [squat], cleared: [] });
    const gone = await findApiKey(sql, squat);
    assert.deepEqual([gone?.enabled, gone?.freeHostname, gone?.revokedAt instanceof Date], [false, null, true]);
    assert.equal(await freeKeyExists(sql, 'squat.example'), false);
    assert.deepEqual((await listKeyAudit(sql, squat)).map((a) => [a.action, a.detail.releasedHostname ?? null]),
      [['create', null], ['revoke', 'squat.example']]);
    const second = (await free('squat.example')).key.id;

    // reassign: a standard key holds the name; the free key holding it is revoked; no free key can take it.
    const shop = (await createApiKey(sql, secrets, { accountId: account, hostnames: ['shop.example'] }, 'test')).key.id;
    const moved = json<{ apiKey: string; hostnames: string[]; revoked: string[]; cleared: string[] }>(
      await cli(['keys', 'hostname', 'reassign', 'squat.example', shop, ...at]));
    assert.deepEqual(moved, { hostname: 'squat.example', revoked: [second], cleared: [], apiKey: shop, hostnames: ['shop.example', 'squat.example'] });
    assert.equal((await findApiKey(sql, second))?.enabled, false);
    const holder = await findApiKey(sql, shop);
    assert.deepEqual([holder?.enabled, holder?.freeHostname, holder?.hostnames], [true, 'squat.example', ['shop.example', 'squat.example']]);
    await assert.rejects(free('squat.example'), (err: unknown) => isUniqueViolation(err));

    // Releasing it from a standard key only drops the hold: the key stays enabled with its hostnames.
    assert.deepEqual(json(await cli(['keys', 'hostname', 'release', 'squat.example', ...at])),
      { hostname: 'squat.example', revoked: [], cleared: [shop] });
    const kept = await findApiKey(sql, shop);
    assert.deepEqual([kept?.enabled, kept?.freeHostname, kept?.hostnames], [true, null, ['shop.example', 'squat.example']]);
    await free('squat.example');

    // Refusals: exit 1 with a reason, or 2 for a malformed command.
    const fails = async (args: string[], code: number, message: RegExp) => {
      const r = await cli(['keys', 'hostname', ...args, '--data-dir', dir]);
      assert.equal(r.code, code, r.out + r.err);
      assert.match(r.err, message);
    };
    await fails(['release', 'nobody.example'], 1, /no key holds the hostname nobody\.example/);
    await fails(['release', '*.example.com'], 1, /is not a hostname a free key can hold/);
    await fails(['reassign', 'squat.example', second], 1, /is revoked/);
    const freeKey = (await free('mine.example')).key.id;
    await fails(['reassign', 'squat.example', freeKey], 1, /is a free key/);
    await fails(['reassign', 'squat.example', 'key_000000000000000000000000'], 1, /no key key_0{24}/);
    await fails(['release'], 2, /keys hostname release HOSTNAME/);
    await fails(['rename', 'squat.example'], 2, /keys hostname release HOSTNAME/);
  } finally {
    await db.close(1);
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
