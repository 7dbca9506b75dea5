// The repository suite, run against the embedded PGlite (through its socket server) and the real
// PostgreSQL (a fresh schema per run, dropped after).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createAccount, ensureDefaultAccount, findAccount, listAccounts } from '../../src/db/accounts.js';
import { findApiKey, freeKeyExists, listApiKeys } from '../../src/db/api-keys.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../src/db/client.js';
import { list } from '../../src/db/dialect.js';
import { listKeyAudit } from '../../src/db/key-audit.js';
import { migrate } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { getPlan, listPlans, setPlan } from '../../src/db/plans.js';
import { deleteOldRequestLogs, insertRequestLogs, listRequestLogs, requestLogHmac, verifyRequestLog } from '../../src/db/request-logs.js';
import { accountRequests, keyUsage, pruneUsageFlushes, writeUsageBatch, type UsageBatch } from '../../src/db/usage.js';
import {
  createApiKey, findKeyIdBySecret, loadApiKey, revokeApiKey, rotateApiKeySecret, updateApiKey,
} from '../../src/keys/api-keys.js';
import { createKeyCache } from '../../src/keys/key-cache.js';
import { openTestDatabase, testKeySecrets, DB_KINDS, dbAvailability, type TestDatabase } from '../helpers/db.js';

const secrets = testKeySecrets();
const available = await dbAvailability();

for (const kind of DB_KINDS) {
  describe(`repositories on ${kind}`, () => {
    let t: TestDatabase | null = null;
    let accountId = '';
    before(async () => {
      if (!available[kind]) return;
      t = await openTestDatabase(kind);
      if (t) accountId = (await ensureDefaultAccount(t.db.sql, 'Default Account')).id;
    });
    after(async () => { await t?.close(); });
    const sql = () => t!.db.sql;
    const it = (name: string, fn: () => Promise<void>) =>
      test(name, { skip: available[kind] ? false : `${kind} unreachable` }, fn);

    it('migrate is idempotent and records each migration once', async () => {
      const again = await migrate(sql());
      assert.deepEqual(again, { applied: [], version: MIGRATIONS.at(-1)!.id });
      const rows = await sql()`select id, name from schema_migrations order by id`;
      assert.deepEqual(rows.map((r) => [r.id, r.name]), MIGRATIONS.map((m) => [m.id, m.name]));
    });

    it('two migrate() at once on a fresh database apply each migration exactly once', async () => {
      const fresh = await openTestDatabase(kind, { migrate: false });
      assert.ok(fresh);
      try {
        const other = fresh.openAnother();
        const [a, b] = await Promise.all([migrate(fresh.db.sql), migrate(other.sql)]);
        assert.deepEqual([...a.applied, ...b.applied].sort(), MIGRATIONS.map((m) => m.id));
        assert.equal(a.version, b.version);
        const [{ n }] = await fresh.db.sql`select count(*) as n from schema_migrations`;
        assert.equal(Number(n), MIGRATIONS.length);
        const plans = await listPlans(fresh.db.sql);
        assert.deepEqual(plans.map((p) => p.name), ['free', 'unlimited']);
      } finally {
        await fresh.close();
      }
    });

    it('the default account is created once, also by concurrent callers, and survives a renamed DEFAULT_ACCOUNT_NAME', async () => {
      const results = await Promise.all([1, 2, 3].map(() => ensureDefaultAccount(sql(), 'Default Account')));
      assert.ok(results.every((a) => a.id === accountId && a.isDefault));
      const renamed = await ensureDefaultAccount(sql(), 'Another Name');
      assert.equal(renamed.id, accountId);
      const defaults = (await listAccounts(sql())).filter((a) => a.isDefault);
      assert.equal(defaults.length, 1);
    });

    it('accounts: unique names, lookup by id or name, empty or oversized names refused', async () => {
      const acme = await createAccount(sql(), 'Acme');
      assert.match(acme.id, /^acc_[0-9A-Za-z]{16}$/);
      await assert.rejects(createAccount(sql(), 'Acme'), (err) => isUniqueViolation(err));
      assert.equal((await findAccount(sql(), 'Acme'))?.id, acme.id);
      assert.equal((await findAccount(sql(), acme.id))?.name, 'Acme');
      assert.equal(await findAccount(sql(), 'nobody'), null);
      await assert.rejects(createAccount(sql(), ''), /1 to 200/);
      await assert.rejects(createAccount(sql(), 'x'.repeat(201)), /1 to 200/);
    });

    it('plans: set creates and updates; limits must be non-negative integers; names are checked', async () => {
      assert.deepEqual(await setPlan(sql(), 'pro', 100_000), { name: 'pro', requestLimit: 100_000 });
      assert.deepEqual(await setPlan(sql(), 'pro', null), { name: 'pro', requestLimit: null });
      assert.deepEqual(await getPlan(sql(), 'free'), { name: 'free', requestLimit: 6000 });
      await assert.rejects(setPlan(sql(), 'Bad Name', 1), /plan name/);
      await assert.rejects(setPlan(sql(), 'neg', -1), /non-negative/);
      await assert.rejects(setPlan(sql(), 'frac', 1.5), /non-negative/);
    });

    it('a created key: secret shown once, derivable again, stored only as a keyed hash', async () => {
      const { key, secret } = await createApiKey(sql(), secrets, {
        accountId, hostnames: ['Example.com', '*.example.org'], plan: 'free', name: 'site',
      }, 'test');
      assert.match(key.id, /^key_[0-9A-Za-z]{24}$/);
      assert.match(secret, /^sec_[0-9A-Za-z]{32}$/);
      assert.equal(key.secret, secret);
      assert.deepEqual(key.hostnames, ['example.com', '*.example.org']);
      assert.equal(key.planId, 'free');
      assert.equal(key.requestLimit, 6000);
      const loaded = await loadApiKey(sql(), secrets, key.id);
      assert.equal(loaded?.secret, secret);
      assert.equal(await findKeyIdBySecret(sql(), secrets, secret), key.id);
      assert.equal(await findKeyIdBySecret(sql(), secrets, `sec_${'A'.repeat(32)}`), null);
      // The plain secret (with or without prefix) appears in no row of any table.
      const tables = await t!.tables();
      assert.ok(tables.length >= 8);
      for (const tablename of tables) {
        const rows = await sql().unsafe(`select * from "${tablename}"`);
        const text = JSON.stringify(rows);
        assert.ok(!text.includes(secret.slice(4)), `secret found in ${tablename}`);
      }
      const [row] = await sql()`select secret_hash from api_keys where id = ${key.id}`;
      assert.equal(row!.secret_hash, secrets.hash(secret));
      assert.deepEqual((await listKeyAudit(sql(), key.id)).map((a) => [a.action, a.actor]), [['create', 'test']]);
    });

    it('invalid hostnames, unknown plans and unknown accounts are refused', async () => {
      await assert.rejects(createApiKey(sql(), secrets, { accountId, hostnames: ['exa mple.com'] }, 't'), /invalid hostname/);
      await assert.rejects(createApiKey(sql(), secrets, { accountId, hostnames: ['*.com'] }, 't'), /invalid hostname/);
      await assert.rejects(createApiKey(sql(), secrets, { accountId, hostnames: [`${'a'.repeat(64)}.com`] }, 't'), /invalid hostname/);
      await assert.rejects(createApiKey(sql(), secrets, { accountId, plan: 'nope' }, 't'), (err) => isForeignKeyViolation(err));
      await assert.rejects(createApiKey(sql(), secrets, { accountId: 'acc_missing' }, 't'), (err) => isForeignKeyViolation(err));
    });

    it('free keys: ckey_/csec_, each in a generated account of its own, one per hostname across the service', async () => {
      const { key, secret } = await createApiKey(sql(), secrets, { hostnames: ['free.example'], kind: 'free' }, 'api');
      assert.match(key.id, /^ckey_[0-9A-Za-z]{24}$/);
      assert.match(secret, /^csec_[0-9A-Za-z]{32}$/);
      assert.equal(key.planId, 'free');
      const own = await findAccount(sql(), key.accountId);
      assert.deepEqual([own?.name, own?.generated, own?.isDefault], [`Free key ${key.id}`, true, false]);
      const second = await createApiKey(sql(), secrets, { hostnames: ['free-two.example'], kind: 'free' }, 'api');
      assert.notEqual(second.key.accountId, key.accountId);
      assert.notEqual(second.key.accountId, accountId);
      assert.equal(await freeKeyExists(sql(), 'free.example'), true);
      assert.equal(await freeKeyExists(sql(), 'other.example'), false);
      await assert.rejects(
        createApiKey(sql(), secrets, { hostnames: ['free.example'], kind: 'free' }, 'api'), (err) => isUniqueViolation(err));
      await assert.rejects(createApiKey(sql(), secrets, { accountId, hostnames: ['x.example'], kind: 'free' }, 'api'), /own/);
      // No operator key joins a generated account; a standard key for the same hostname is fine elsewhere.
      await assert.rejects(createApiKey(sql(), secrets, { accountId: key.accountId }, 'cli'), /generated key/);
      assert.deepEqual((await listApiKeys(sql(), key.accountId)).map((k) => k.id), [key.id]);
      await createApiKey(sql(), secrets, { accountId, hostnames: ['free.example'] }, 'cli');
    });

    it('migration 002 moves each generated key out of the default account, with its usage', async () => {
      const old = await openTestDatabase(kind, { migrate: false });
      assert.ok(old);
      try {
        const q = old.db.sql;
        await migrate(q, MIGRATIONS.filter((m) => m.id === 1));
        const dflt = 'acc_default00000000';
        await q`insert into accounts (id, name, is_default) values (${dflt}, 'Default Account', ${true})`;
        const insertKey = (id: string, free: string | null) => q`
          insert into api_keys (id, account_id, hostnames, plan, free_hostname, secret_nonce, secret_hash)
          values (${id}, ${dflt}, ${list(free === null ? [] : [free])}, ${free === null ? 'unlimited' : 'free'}, ${free}, 'n', ${`h-${id}`})`;
        // An operator key holding a hostname (given to it by `keys hostname reassign`) is no generated key.
        await insertKey('key_operator0000000000000000', 'c.example');
        await insertKey('ckey_stranger000000000000000', 'a.example');
        await insertKey('ckey_victim00000000000000000', 'b.example');
        await q`insert into usage_monthly (api_key_id, month, account_id, requests) values
          ('key_operator0000000000000000', '2024-05', ${dflt}, 5), ('ckey_stranger000000000000000', '2024-05', ${dflt}, 7),
          ('ckey_victim00000000000000000', '2024-05', ${dflt}, 11)`;
        assert.equal(await accountRequests(q, dflt, '2024-05'), 23);

        assert.deepEqual((await migrate(q)).applied, MIGRATIONS.filter((m) => m.id > 1).map((m) => m.id));
        const keys = await listApiKeys(q);
        const accountOf = (id: string) => keys.find((k) => k.id === id)!.accountId;
        assert.equal(accountOf('key_operator0000000000000000'), dflt);
        const moved = ['ckey_stranger000000000000000', 'ckey_victim00000000000000000'].map(accountOf);
        assert.equal(new Set([dflt, ...moved]).size, 3);
        for (const [i, id] of moved.entries()) {
          const a = await findAccount(q, id);
          assert.match(a!.id, /^acc_[0-9A-Za-z]{16}$/);
          assert.deepEqual([a!.generated, a!.isDefault, a!.name], [true, false, `Free key ${['ckey_stranger000000000000000', 'ckey_victim00000000000000000'][i]}`]);
        }
        assert.deepEqual([await accountRequests(q, dflt, '2024-05'), await accountRequests(q, moved[0]!, '2024-05'),
          await accountRequests(q, moved[1]!, '2024-05')], [5, 7, 11]);
        const audit = await listKeyAudit(q, 'ckey_victim00000000000000000');
        assert.deepEqual(audit.map((a) => [a.action, a.actor, a.detail]), [['update', 'migration:002', { accountId: moved[1], previousAccountId: dflt }]]);
        // Afterwards the hostname stays unique across the service.
        await assert.rejects(q`insert into accounts (id, name) values ('acc_other', 'Other')`.then(() => q`
          insert into api_keys (id, account_id, free_hostname, secret_nonce, secret_hash)
          values ('ckey_again000000000000000000', 'acc_other', 'a.example', 'n', 'h-again')`), (err) => isUniqueViolation(err));
      } finally {
        await old.close();
      }
    });

    it('revoke, update and rotate are audited; revocation is final; rotation retires the old secret', async () => {
      const { key, secret } = await createApiKey(sql(), secrets, { accountId, hostnames: ['rot.example'] }, 'cli:a');
      assert.equal(await updateApiKey(sql(), key.id, { name: 'renamed', hostnames: ['b.example'], rateLimit: '10/1m' }, 'cli:b'), true);
      let rec = await findApiKey(sql(), key.id);
      assert.deepEqual([rec?.name, rec?.hostnames, rec?.rateLimit], ['renamed', ['b.example'], '10/1m']);
      const fresh = await rotateApiKeySecret(sql(), secrets, key.id, 'cli:c');
      assert.ok(fresh !== null && fresh !== secret);
      assert.equal(await findKeyIdBySecret(sql(), secrets, secret), null);
      assert.equal(await findKeyIdBySecret(sql(), secrets, fresh), key.id);
      assert.equal((await loadApiKey(sql(), secrets, key.id))?.secret, fresh);
      assert.equal(await revokeApiKey(sql(), key.id, 'cli:d'), true);
      assert.equal(await revokeApiKey(sql(), key.id, 'cli:d'), false);
      assert.equal(await updateApiKey(sql(), key.id, { enabled: true }, 'cli:e'), false);
      assert.equal(await rotateApiKeySecret(sql(), secrets, key.id, 'cli:f'), null);
      rec = await findApiKey(sql(), key.id);
      assert.equal(rec?.enabled, false);
      assert.ok(rec?.revokedAt instanceof Date);
      assert.deepEqual((await listKeyAudit(sql(), key.id)).map((a) => `${a.action}:${a.actor}`),
        ['create:cli:a', 'update:cli:b', 'rotate:cli:c', 'revoke:cli:d']);
      assert.equal(await revokeApiKey(sql(), 'key_doesnotexist0000000000', 'x'), false);
      assert.ok((await listApiKeys(sql(), accountId)).some((k) => k.id === key.id));
    });

    it('a revoked key stops working through the cache within its TTL', async () => {
      const { key } = await createApiKey(sql(), secrets, { accountId }, 'cli');
      let clock = 1_000_000;
      const cache = createKeyCache({
        byId: (id) => loadApiKey(sql(), secrets, id),
        idBySecretHash: (h) => sql()<{ id: string }[]>`select id from api_keys where secret_hash = ${h}`.then((r) => r[0]?.id ?? null),
      }, secrets, { ttlMs: 200, now: () => clock });
      assert.equal((await cache.getKey(key.id))?.enabled, true);
      await revokeApiKey(sql(), key.id, 'cli');
      assert.equal((await cache.getKey(key.id))?.enabled, true, 'still cached');
      clock += 200;
      assert.equal((await cache.getKey(key.id))?.enabled, false);
      assert.equal((await cache.getKeyBySecret(key.secret))?.enabled, false);
    });

    it('usage batches add up, and a batch written twice counts once', async () => {
      const { key } = await createApiKey(sql(), secrets, { accountId }, 'cli');
      const { key: other } = await createApiKey(sql(), secrets, { accountId }, 'cli');
      const batch = (id: string, n: number): UsageBatch => ({
        id,
        counters: [
          { apiKeyId: key.id, accountId, month: '2024-02', requests: n, good: n - 1, neutral: 1, bad: 0 },
          { apiKeyId: other.id, accountId, month: '2024-02', requests: 5, good: 0, neutral: 0, bad: 5 },
        ],
        referrers: [{ apiKeyId: key.id, month: '2024-02', origin: 'https://a.example', requests: n }],
        logs: [],
        lastUsed: [{ apiKeyId: key.id, at: new Date('2024-02-10T10:00:00Z') }],
      });
      assert.equal(await writeUsageBatch(sql(), batch('b1', 10)), true);
      assert.equal(await writeUsageBatch(sql(), batch('b1', 10)), false);
      assert.equal(await writeUsageBatch(sql(), batch('b2', 7)), true);
      const usage = await keyUsage(sql(), key.id, '2024-02');
      assert.deepEqual(usage, {
        requests: 17, classifications: { BAD: '0', GOOD: '15', NEUTRAL: '2' }, referrers: { 'https://a.example': 17 },
      });
      assert.equal(await accountRequests(sql(), accountId, '2024-02'), 27);
      assert.deepEqual(await keyUsage(sql(), key.id, '2024-03'), {
        requests: 0, classifications: { BAD: '0', GOOD: '0', NEUTRAL: '0' }, referrers: {},
      });
      assert.equal((await findApiKey(sql(), key.id))?.lastUsedAt?.toISOString(), '2024-02-10T10:00:00.000Z');
      assert.equal(await pruneUsageFlushes(sql(), 0, Date.now() + 1000), 2);
    });

    it('request logs carry an HMAC that detects tampering; retention deletes old rows', async () => {
      const secret = 'embedded-db-hmac-secret-0123456789';
      const now = Date.now();
      await insertRequestLogs(sql(), [
        { time: now - 10 * 3_600_000, apiKeyId: 'key_x', accountId, ip: '203.0.113.0', method: 'GET', path: '/old', status: 200, durationMs: 1.25 },
        { time: now, apiKeyId: 'key_x', accountId, ip: '2001:db8:1::', method: 'POST', path: '/v1/verify', status: 400, durationMs: 0.5 },
      ], secret);
      await insertRequestLogs(sql(), [
        { time: now, apiKeyId: 'key_y', accountId: null, ip: null, method: 'GET', path: '/plain', status: 404, durationMs: 3 },
      ], null);
      const rows = await listRequestLogs(sql(), { apiKeyId: 'key_x' });
      assert.equal(rows.length, 2);
      assert.ok(rows.every((r) => verifyRequestLog(r, secret)));
      assert.ok(rows.every((r) => !verifyRequestLog(r, 'another-secret-0123456789')));
      const [plain] = await listRequestLogs(sql(), { apiKeyId: 'key_y' });
      assert.equal(plain?.hmac, null);
      assert.equal(verifyRequestLog(plain!, secret), false);
      await sql()`update request_logs set status = 200 where path = '/v1/verify'`;
      const tampered = (await listRequestLogs(sql(), { apiKeyId: 'key_x' })).find((r) => r.path === '/v1/verify')!;
      assert.equal(verifyRequestLog(tampered, secret), false);
      assert.equal(await deleteOldRequestLogs(sql(), 72 * 3_600_000, now), 0);
      assert.equal(await deleteOldRequestLogs(sql(), 3_600_000, now), 1);
      assert.deepEqual((await listRequestLogs(sql(), { apiKeyId: 'key_x' })).map((r) => r.path), ['/v1/verify']);
      await assert.rejects(deleteOldRequestLogs(sql(), -1), /non-negative/);
    });

    it('request logs: country and threat kinds are stored and covered by the HMAC; rows without them keep the old HMAC', async () => {
      const secret = 'embedded-db-hmac-secret-0123456789';
      const time = Date.UTC(2024, 5, 2);
      const plain = { time, apiKeyId: 'key_intel', accountId, ip: '203.0.113.0', method: 'GET', path: '/v1/challenge', status: 200, durationMs: 1 };
      // The HMAC of a row written before migration 003 (eight columns).
      const before = createHmac('sha256', secret).update(JSON.stringify([
        new Date(time).toISOString(), 'key_intel', accountId, '203.0.113.0', 'GET', '/v1/challenge', 200, 1,
      ])).digest('hex');
      assert.equal(requestLogHmac(plain, secret), before);
      await insertRequestLogs(sql(), [plain, { ...plain, time: time + 1, path: '/v1/verify', country: 'DE', threats: 'malicious,proxy' }], secret);
      const rows = await listRequestLogs(sql(), { apiKeyId: 'key_intel' });
      assert.deepEqual(rows.map((r) => [r.path, r.country, r.threats]), [['/v1/verify', 'DE', 'malicious,proxy'], ['/v1/challenge', null, null]]);
      assert.equal(rows[1]!.hmac, before);
      assert.ok(rows.every((r) => verifyRequestLog(r, secret)));
      await sql()`update request_logs set threats = 'proxy' where api_key_id = 'key_intel' and path = '/v1/verify'`;
      const tampered = (await listRequestLogs(sql(), { apiKeyId: 'key_intel' })).find((r) => r.path === '/v1/verify')!;
      assert.equal(verifyRequestLog(tampered, secret), false);
    });

    it('request logs: hostile strings and large batches are stored exactly as given', async () => {
      const secret = 'embedded-db-hmac-secret-0123456789';
      const time = Date.UTC(2024, 5, 1, 12, 0, 0, 123);
      const paths = ['/a"b', '/back\\slash', '/{braces},comma', 'NULL', '', "/'quote'; drop table request_logs; --", '/ünï €😀', '/x'.repeat(1000)];
      const hostile = paths.map((path, i) => ({
        time: time + i, apiKeyId: 'key_hostile', accountId: i % 2 === 0 ? null : 'NULL', ip: i % 3 === 0 ? null : '"{,}"',
        method: i % 2 === 0 ? 'GET' : 'POST', path, status: 200 + i, durationMs: i + 0.125,
        country: i % 2 === 0 ? null : 'NULL', threats: i % 3 === 0 ? null : '"{,}"',
        classification: (['GOOD', null, 'NEUTRAL', 'BAD'] as const)[i % 4]!,
      }));
      const many = Array.from({ length: 6000 }, (_, i) => ({
        time: time - 1000 - i, apiKeyId: 'key_many', accountId: null, ip: null, method: 'GET', path: `/p/${i}`, status: 200, durationMs: 1,
        country: null, threats: null, classification: null,
      }));
      await insertRequestLogs(sql(), [...hostile, ...many], secret);
      const stored = await listRequestLogs(sql(), { apiKeyId: 'key_hostile' });
      assert.deepEqual(stored.map((r) => ({ ...r, id: undefined, hmac: undefined })).reverse(),
        hostile.map((e) => ({ ...e, node: null, id: undefined, hmac: undefined })));
      assert.ok(stored.every((r) => verifyRequestLog(r, secret)), 'each row has its own HMAC');
      assert.equal(verifyRequestLog({ ...stored.find((r) => r.classification === 'BAD')!, classification: 'GOOD' }, secret), false, 'the HMAC covers the classification');
      const rows = await listRequestLogs(sql(), { apiKeyId: 'key_many', limit: 10_000 });
      assert.equal(rows.length, 6000);
      assert.deepEqual(new Set(rows.map((r) => r.path)).size, 6000);
    });
  });
}
