// `npm run cli`: against the embedded database of a stopped service (opened by the CLI), of a
// running one (through its socket), and against PostgreSQL.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import postgres from 'postgres';
import { openDatabase } from '../../src/db/client.js';
import { findKeyIdBySecret } from '../../src/keys/api-keys.js';
import { createKeySecrets, deriveApiKeySecretKey } from '../../src/keys/secrets.js';
import { startEmbeddedDatabase } from '../../src/primary/embedded-db.js';
import { runCli as cli, type CliRun as Run } from '../helpers/cli.js';
import { freshPgliteDataDir } from '../helpers/db.js';
import { POSTGRES_URL, requireService } from '../helpers/services.js';

const SECRETS = {
  PALISADE_HMAC_SECRET: 'cli-test-palisade-hmac-secret-0123456789',
  CODE_CHALLENGE_SECRET: 'cli-test-code-challenge-secret-0123456789',
  JWT_SECRET: 'cli-test-jwt-secret-0123456789-0123456789',
  HASHING_SALT: 'cli-test-hashing-salt-0123456789',
  NODE_ID: '0123456789abcdef',
};
const secrets = createKeySecrets(deriveApiKeySecretKey(SECRETS.PALISADE_HMAC_SECRET), SECRETS.HASHING_SALT);

const json = <T>(r: Run): T => {
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as T;
};

test('the embedded database: stopped service, then running service, with the same data', async () => {
  const dir = await freshPgliteDataDir();
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify(SECRETS), { mode: 0o600 });
  const at = ['--data-dir', dir, '--json'];
  try {
    // Stopped: the CLI opens the database itself.
    const created = json<{ apiKey: string; secret: string; plan: string; hostnames: string[] }>(
      await cli(['keys', 'create', '--hostname', 'Example.com', '--hostname', '*.example.org', ...at]));
    assert.match(created.apiKey, /^key_[0-9A-Za-z]{24}$/);
    assert.match(created.secret, /^sec_[0-9A-Za-z]{32}$/);
    assert.deepEqual([created.plan, created.hostnames], ['unlimited', ['example.com', '*.example.org']]);
    assert.equal(json<{ name: string }>(await cli(['accounts', 'create', 'Acme', 'Inc', ...at])).name, 'Acme Inc');

    // Running: a service holds the database; the CLI goes through its socket.
    const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
    const db = openDatabase({ socketPath: embedded.socketPath });
    try {
      assert.equal(await findKeyIdBySecret(db.sql, secrets, created.secret), created.apiKey);
      assert.deepEqual(json(await cli(['plans', 'set', 'pro', '--limit', '100', ...at])), { name: 'pro', requestLimit: 100 });
      const human = await cli(['keys', 'create', '--hostname', 'shop.example', '--account', 'Acme Inc', '--plan', 'pro', '--name', 'shop', '--data-dir', dir]);
      assert.equal(human.code, 0, human.err);
      assert.match(human.out, /^apiKey: +key_\w{24}\nsecret: +sec_\w{32}\naccount: +Acme Inc\nplan: +pro\nhostnames: shop\.example\nThe secret is shown only this once/);
      const shopKey = /apiKey: +(key_\w{24})/.exec(human.out)![1]!;
      assert.deepEqual(json(await cli(['keys', 'revoke', created.apiKey, ...at])), { revoked: created.apiKey });
      const keys = json<{ id: string; enabled: boolean; plan: string; name: string }[]>(await cli(['keys', 'list', ...at]));
      assert.deepEqual(keys.map((k) => [k.id, k.enabled, k.plan, k.name]), [
        [created.apiKey, false, 'unlimited', 'example.com'], [shopKey, true, 'pro', 'shop'],
      ]);
      assert.deepEqual(json<unknown[]>(await cli(['keys', 'list', '--account', 'Acme Inc', ...at])).length, 1);
      const accounts = json<{ name: string; isDefault: boolean }[]>(await cli(['accounts', 'list', ...at]));
      assert.deepEqual(accounts.map((a) => [a.name, a.isDefault]), [['Default Account', true], ['Acme Inc', false]]);
      assert.deepEqual(json(await cli(['usage', '--key', shopKey, '--month', '2024-01', ...at])), {
        month: '2024-01', classifications: { BAD: '0', GOOD: '0', NEUTRAL: '0' }, referrers: {},
        requests: { account: 0, apiKey: 0 }, plan: { name: 'pro', requestLimit: 100 },
      });
      const rotated = json<{ apiKey: string; secret: string }>(await cli(['keys', 'rotate', shopKey, ...at]));
      assert.equal(await findKeyIdBySecret(db.sql, secrets, rotated.secret), shopKey);
      // Deactivating an account disables its keys (the service's key cache drops them within CACHE_DURATION_API_KEYS).
      assert.equal(json<{ active: boolean }>(await cli(['accounts', 'deactivate', 'Acme Inc', ...at])).active, false);
      assert.equal(json<{ id: string; enabled: boolean }[]>(await cli(['keys', 'list', '--account', 'Acme Inc', ...at]))[0]!.enabled, false);
      assert.equal(json<{ active: boolean }>(await cli(['accounts', 'activate', 'Acme Inc', ...at])).active, true);
      assert.equal(json<{ enabled: boolean }[]>(await cli(['keys', 'list', '--account', 'Acme Inc', ...at]))[0]!.enabled, true);
      assert.deepEqual(json(await cli(['users', 'list', ...at])), []);
      // The CLI writes through the admin domain: each write is in the audit log, by cli:<user>, without an IP.
      const audit = await db.sql<{ actor: string; ip: string | null; action: string }[]>`select actor, ip, action from audit_log order by id`;
      assert.deepEqual(audit.map((a) => a.action), [
        'key.create', 'account.create', 'plan.set', 'key.create', 'key.revoke', 'key.rotate', 'account.deactivate', 'account.activate',
      ]);
      assert.ok(audit.every((a) => /^cli:/.test(a.actor) && a.ip === null), JSON.stringify(audit));

      // Errors: usage errors exit 2, failures exit 1, never a stack trace.
      const failures: [string[], number, RegExp][] = [
        [['frobnicate'], 2, /unknown command/],
        [['keys', 'create'], 2, /needs --hostname/],
        [['keys', 'create', '--hostname', 'bad host'], 1, /invalid hostname/],
        [['keys', 'create', '--hostname', 'x.example', '--plan', 'nope'], 1, /no plan named "nope"/],
        [['keys', 'revoke', created.apiKey], 1, /no enabled key/],
        [['plans', 'set', 'pro', '--limit', '-5'], 2, /--limit/],
        [['accounts', 'create', 'Acme', 'Inc'], 1, /exists/],
        [['usage', '--key', shopKey, '--month', '2024-13'], 2, /YYYY-MM/],
        [['accounts', 'deactivate', 'Default Account'], 1, /the default account cannot be deactivated/],
        [['accounts', 'deactivate'], 2, /exactly one ACCOUNT/],
        [['accounts', 'rename', 'Nobody Ltd', 'X'], 1, /no account "Nobody Ltd"/],
        [['users', 'reset-password', 'nobody'], 1, /no user "nobody"/],
        [['users', 'reset-password'], 2, /exactly one USERNAME/],
      ];
      const runs = await Promise.all(failures.map(([args]) => cli([...args, '--data-dir', dir])));
      failures.forEach(([args, code, message], i) => {
        const r = runs[i]!;
        assert.equal(r.code, code, `${args.join(' ')}: ${r.err}`);
        assert.match(r.err, message, args.join(' '));
        assert.doesNotMatch(r.err, /\n\s+at /, 'no stack trace');
      });
    } finally {
      await db.close();
      await embedded.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a data directory without secrets is refused with a clear message', async () => {
  const dir = await freshPgliteDataDir();
  try {
    const r = await cli(['keys', 'list', '--data-dir', dir]);
    assert.equal(r.code, 1);
    assert.match(r.err, /start the service once first/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const pg = await requireService('postgres');
test('POSTGRES_URL / --postgres-url: migrates, then works the same', { skip: pg ? false : 'postgres unreachable' }, async () => {
  const schema = `pal_cli_${process.pid}`;
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create schema ${schema}`);
  const url = `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}search_path=${schema}`;
  try {
    const created = json<{ apiKey: string; secret: string }>(await cli(['keys', 'create', '--hostname', 'pg.example', '--postgres-url', url, '--json'], {
      DATA_DIR: '/nonexistent-palisade-dir', PALISADE_HMAC_SECRET: SECRETS.PALISADE_HMAC_SECRET, HASHING_SALT: SECRETS.HASHING_SALT,
      CODE_CHALLENGE_SECRET: SECRETS.CODE_CHALLENGE_SECRET, JWT_SECRET: SECRETS.JWT_SECRET, NODE_ID: SECRETS.NODE_ID,
    }));
    const db = openDatabase({ postgresUrl: POSTGRES_URL, schema });
    try {
      assert.equal(await findKeyIdBySecret(db.sql, secrets, created.secret), created.apiKey);
    } finally {
      await db.close();
    }
    const listed = json<{ id: string }[]>(await cli(['keys', 'list', '--json'], {
      POSTGRES_URL: url, DATA_DIR: '/nonexistent-palisade-dir', PALISADE_HMAC_SECRET: SECRETS.PALISADE_HMAC_SECRET,
      HASHING_SALT: SECRETS.HASHING_SALT, CODE_CHALLENGE_SECRET: SECRETS.CODE_CHALLENGE_SECRET, JWT_SECRET: SECRETS.JWT_SECRET, NODE_ID: SECRETS.NODE_ID,
    }));
    assert.deepEqual(listed.map((k) => k.id), [created.apiKey]);
  } finally {
    await admin.unsafe(`drop schema ${schema} cascade`);
    await admin.end();
  }
});

test('keys create --policy / --rate-limit: stored on the key, checked before anything is written', async () => {
  const dir = await freshPgliteDataDir();
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify(SECRETS), { mode: 0o600 });
  const at = ['--data-dir', dir, '--json'];
  try {
    const created = json<{ apiKey: string }>(await cli(['keys', 'create', '--hostname', 'example.com',
      '--policy', '{"algorithm":"PBKDF2/SHA-256","cost":5000}', '--rate-limit', '30/1m(block=5m)', ...at]));
    const embedded = await startEmbeddedDatabase({ dataDir: dir, location: 'db/palisade' });
    const db = openDatabase({ socketPath: embedded.socketPath, maxConnections: 1 });
    try {
      const [row] = await db.sql<{ challenge_policy: unknown; rate_limit: string }[]>`select challenge_policy, rate_limit from api_keys where id = ${created.apiKey}`;
      assert.deepEqual(row!.challenge_policy, { algorithm: 'PBKDF2/SHA-256', cost: 5000 });
      assert.equal(row!.rate_limit, '30/1m(block=5m)');
    } finally {
      await db.close(1000);
      await embedded.close();
    }
    for (const [flags, message] of [
      [['--policy', '{"algorithm":"MD5"}'], /--policy: challenge policy: .*algorithm/],
      [['--policy', '{"algorithm":"SCRYPT","cost":1048576,"memoryCost":8}'], /--policy: challenge policy: .*POW_MAX_MEMORY|--policy: challenge policy: .*memory/],
      [['--policy', 'not json'], /--policy must be a JSON object/],
      [['--rate-limit', 'lots'], /--rate-limit: "lots" is not a rate rule/],
    ] as const) {
      const r = await cli(['keys', 'create', '--hostname', 'example.net', ...flags, ...at]);
      assert.notEqual(r.code, 0);
      assert.match(r.err, message);
    }
    assert.equal(json<unknown[]>(await cli(['keys', 'list', ...at])).length, 1, 'refused keys were not written');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
