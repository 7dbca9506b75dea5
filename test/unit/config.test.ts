import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, describeConfig, loadConfig, resolveDataDir, VARIABLES } from '../../src/config/index.js';
import { deriveSecret } from '../../src/secrets.js';
import { createAbuseProtection, type AbuseConfig } from '../../src/abuse/index.js';
import { parseRateRule } from '../../src/parse.js';
import { captureLogger, MemoryStore } from '../helpers/memory-store.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'palisade-config-'));
  dirs.push(d);
  return d;
};
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const load = (env: Record<string, string>, persistSecrets = true) =>
  loadConfig({ env: { DATA_DIR: tempDir(), ...env }, persistSecrets, detectedCpus: 4 });

function problems(env: Record<string, string>): string[] {
  try {
    load(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return [...err.problems];
  }
  assert.fail('expected a ConfigError');
}

test('defaults follow the spec tables', () => {
  const c = load({});
  assert.equal(c.PORT, 8080);
  assert.equal(c.FLOOD_RATE_LIMIT?.count, 100);
  assert.equal(c.FLOOD_RATE_LIMIT?.windowMs, 60_000);
  assert.equal(c.FLOOD_RATE_LIMIT_KEY, 'ip');
  assert.equal(c.AUDIO_CHALLENGE_RATE_LIMIT?.blockMs, 600_000);
  assert.equal(c.THREATS_PROBE_LIMIT?.expireMs, 48 * 3_600_000);
  assert.equal(c.THREATS_BOT_LIMIT, null);
  assert.equal(c.EML_BODY_LIMIT, 5 * 1024 * 1024);
  assert.equal(c.POW_MAX_MEMORY, 128 * 1024 * 1024);
  assert.equal(c.PENALTY_TTL, 1_800_000);
  assert.equal(c.CACHE_DURATION_USED_CHALLENGES, 4 * 3_600_000);
  assert.equal(c.CACHE_DURATION_API_KEYS, 10_000);
  assert.equal(c.REDIS_COMMAND_TIMEOUT, 5000);
  assert.equal(c.REDIS_CONNECT_TIMEOUT, 10_000);
  assert.equal(c.REDIS_MAX_RETRIES, 2);
  assert.equal(c.POSTGRES_IDLE_TIMEOUT, 10_000);
  assert.equal(c.OTEL_EXPORTER_OTLP_TIMEOUT, 10_000);
  assert.equal(c.PHISHING_LIST_SCHEDULE, '0 */12 * * *');
  assert.equal(c.SNAPSHOTS_MAIN_SCHEDULE, null);
  assert.equal(c.LOG_LEVEL, 'info');
  assert.equal(c.ACCESS_LOG_ENABLED, true);
  assert.equal(c.MONITORING_HTTP_CREDENTIALS, null);
  assert.deepEqual(c.MONITORING_IP_WHITELIST.source, ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.1/32', '::1/128', 'fd00::/8', '100.64.0.0/10']);
  assert.deepEqual(c.HIGH_RISK_COUNTRIES.slice(0, 3), ['by', 'cd', 'cf']);
  assert.equal(c.DEFAULT_ACCOUNT_NAME, 'Default Account');
  assert.equal(c.workers, 4);
  assert.equal(c.powMaxThreads, 2);
  assert.match(c.version, /^\d+\.\d+\.\d+/);
});

test('every parser through its variable', () => {
  const c = load({
    PORT: '9000', WORKERS: '0', PENALTY_TTL: '5m', REDIS_COMMAND_TIMEOUT: '250', EML_BODY_LIMIT: '1MB',
    FLOOD_RATE_LIMIT: '10/5s(key=apiKey&block=1m)', FLOOD_RATE_LIMIT_KEY: 'device', ACCESS_LOG_ENABLED: '0',
    X_FORWARDED_FOR_TRUSTED: '10.0.0.1, 192.168.0.0/16', PHISHING_LIST_SCHEDULE: '15 3 * * 1',
    MONITORING_HTTP_CREDENTIALS: 'ops:pa:ss', APP_BASE_PATH: '/captcha/', CONTAINER_CPUS: '3', FLOOD_RATE_LIMIT_: 'x',
  });
  assert.equal(c.PORT, 9000);
  assert.equal(c.workers, 0);
  assert.equal(c.PENALTY_TTL, 300_000);
  assert.equal(c.REDIS_COMMAND_TIMEOUT, 250);
  assert.equal(c.EML_BODY_LIMIT, 1_048_576);
  assert.deepEqual({ ...c.FLOOD_RATE_LIMIT }, { source: '10/5s(key=apiKey&block=1m)', count: 10, windowMs: 5000, key: 'apiKey', blockMs: 60_000, expireMs: 0 });
  assert.equal(c.FLOOD_RATE_LIMIT_KEY, 'device');
  assert.equal(c.ACCESS_LOG_ENABLED, false);
  assert.equal(c.X_FORWARDED_FOR_TRUSTED.list.check('192.168.4.4', 'ipv4'), true);
  assert.equal(c.PHISHING_LIST_SCHEDULE, '15 3 * * 1');
  assert.deepEqual(c.MONITORING_HTTP_CREDENTIALS, { user: 'ops', password: 'pa:ss' });
  assert.equal(c.APP_BASE_PATH, '/captcha');
  assert.equal(c.powMaxThreads, 1);
  assert.equal(c.FLOOD_RATE_LIMIT !== null, true);
  assert.equal(load({ FLOOD_RATE_LIMIT: '' }).FLOOD_RATE_LIMIT, null);
  assert.equal(load({}).CHALLENGE_POOL_SIZE, 32);
  assert.equal(load({ CHALLENGE_POOL_SIZE: '50000' }).CHALLENGE_POOL_SIZE, 50_000);
  for (const bad of ['0', '100001', '-1', '1.5', 'lots']) {
    const p = problems({ CHALLENGE_POOL_SIZE: bad });
    assert.equal(p.length, 1, bad);
    assert.match(p[0]!, /^CHALLENGE_POOL_SIZE/, bad);
  }
});

test('NAME_FILE reads the value from a file; both set is a problem', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'secret'), 'x'.repeat(40) + '\n');
  writeFileSync(join(dir, 'port'), '7070');
  const c = load({ PALISADE_HMAC_SECRET_FILE: join(dir, 'secret'), PORT_FILE: join(dir, 'port') });
  assert.equal(c.secrets.PALISADE_HMAC_SECRET, 'x'.repeat(40));
  assert.equal(c.PORT, 7070);
  const p = problems({ PORT: '1', PORT_FILE: join(dir, 'port'), JWT_SECRET_FILE: join(dir, 'missing') });
  assert.equal(p.length, 2);
  assert.match(p[0]!, /PORT and PORT_FILE are both set/);
  assert.match(p[1]!, /JWT_SECRET_FILE: cannot read/);
});

test('all problems are reported together, secrets never echoed', () => {
  const p = problems({
    PORT: '99999', PENALTY_TTL: 'soon', FLOOD_RATE_LIMIT: '100 per minute', LOG_LEVEL: 'loud',
    PALISADE_HMAC_SECRET: 'tooshort-secret', MONITORING_IP_WHITELIST: '10.0.0.0/40', PHISHING_LIST_SCHEDULE: '* * *',
    MSSQL_URL: 'mssql://u:p@h/db', ACCESS_LOG_ENABLED: 'maybe',
  });
  assert.equal(p.length, 9);
  for (const name of ['PORT', 'PENALTY_TTL', 'FLOOD_RATE_LIMIT', 'LOG_LEVEL', 'PALISADE_HMAC_SECRET', 'MONITORING_IP_WHITELIST', 'PHISHING_LIST_SCHEDULE', 'ACCESS_LOG_ENABLED']) {
    assert.ok(p.some((x) => x.startsWith(`${name}:`)), `${name} reported`);
  }
  assert.ok(p.includes('MSSQL_URL is not supported (no driver in this build); supported: POSTGRES_URL (PostgreSQL), MYSQL_URL (MySQL), ' +
    'MARIADB_URL (MariaDB), LIBSQL_URL (SQLite through libSQL, a file: URL), or none of them for the embedded database'));
  assert.ok(p.every((x) => !x.includes('tooshort-secret')), 'secret value not in the message');
  const err = (() => { try { load({ PORT: 'x', WORKERS: 'y' }); } catch (e) { return e as Error; } })();
  assert.match(err!.message, /Invalid configuration:\n {2}- PORT: .*\n {2}- WORKERS: /);
});

test('minimum secret lengths (24) are enforced', () => {
  for (const name of ['PALISADE_HMAC_SECRET', 'CODE_CHALLENGE_SECRET', 'JWT_SECRET', 'EMBEDDED_DB_HMAC_SECRET']) {
    assert.match(problems({ [name]: 'a'.repeat(23) })[0]!, new RegExp(`^${name}: must be at least 24 characters`));
    assert.doesNotThrow(() => load({ [name]: 'a'.repeat(24) }));
  }
  // SECRET_SEED has its own rule (test/unit/secret-seed.test.ts).
  assert.match(problems({ SECRET_SEED: 'kQ3v9Zx7Lm2Pw8Rt5Yn4Bc6' })[0]!, /^SECRET_SEED: must have at least 24 characters/);
});

test('PENALTY_TTL and the THREATS_* rules stay within what the state store keeps (else workers failed to start, or marks were never kept)', async () => {
  assert.deepEqual(problems({ PENALTY_TTL: '0' }), ['PENALTY_TTL must be from 1s to 795d']);
  assert.deepEqual(problems({ PENALTY_TTL: '796d' }), ['PENALTY_TTL must be from 1s to 795d']);
  assert.equal(load({ PENALTY_TTL: '795d' }).PENALTY_TTL, 795 * 86_400_000);
  assert.equal(load({ PENALTY_TTL: '1s' }).PENALTY_TTL, 1000);
  for (const value of ['10/5m(expire=796d)', '10/796d', '10/5m(block=796d)']) {
    assert.deepEqual(problems({ THREATS_MALICIOUS_LIMIT: value }), ['THREATS_MALICIOUS_LIMIT: the window, block and expire must each be at most 795d (how long a mark can be kept)']);
  }
  assert.equal(load({ THREATS_TOR_LIMIT: '1/795d(expire=795d)' }).THREATS_TOR_LIMIT?.expireMs, 795 * 86_400_000);
  // What they did past the configuration: each worker's abuse protection refused to build (a crash
  // loop instead of one configuration error), and a malicious mark past the limit was never kept.
  const base = load({});
  const abuse = (over: Partial<AbuseConfig>) => createAbuseProtection({ ...base, ...over }, { store: new MemoryStore(), logger: captureLogger().logger });
  assert.throws(() => abuse({ PENALTY_TTL: 0 }), RangeError);
  assert.throws(() => abuse({ PENALTY_TTL: 796 * 86_400_000 }), RangeError);
  const longMark = abuse({ THREATS_MALICIOUS_LIMIT: parseRateRule('1/5m(expire=796d)') });
  await longMark.recordMalicious('192.0.2.1', 'invalid_signature');
  assert.equal(await longMark.recordMalicious('192.0.2.1', 'invalid_signature'), 'ignored', 'past the limit, yet no mark');
  const kept = abuse({ THREATS_MALICIOUS_LIMIT: parseRateRule('1/5m(expire=795d)') });
  await kept.recordMalicious('192.0.2.1', 'invalid_signature');
  assert.equal(await kept.recordMalicious('192.0.2.1', 'invalid_signature'), 'marked');
});

test('secrets are generated once, persisted 0600 and reused', () => {
  const dir = tempDir();
  const a = loadConfig({ env: { DATA_DIR: dir }, detectedCpus: 2 });
  const file = join(dir, 'secrets.json');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  assert.equal(stored.PALISADE_HMAC_SECRET, a.secrets.PALISADE_HMAC_SECRET);
  assert.ok(a.secrets.PALISADE_HMAC_SECRET.length >= 40);
  assert.match(a.secrets.NODE_ID, /^[0-9a-f]{16}$/);
  const b = loadConfig({ env: { DATA_DIR: dir }, persistSecrets: false, detectedCpus: 2 });
  assert.deepEqual(b.secrets, a.secrets);
  // A value in the environment wins and is not written to the file.
  const c = loadConfig({ env: { DATA_DIR: dir, JWT_SECRET: 'j'.repeat(30) }, detectedCpus: 2 });
  assert.equal(c.secrets.JWT_SECRET, 'j'.repeat(30));
  assert.equal((JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>).JWT_SECRET, a.secrets.JWT_SECRET);
  // A worker (no persisting) refuses to invent secrets nobody else knows.
  assert.throws(() => loadConfig({ env: { DATA_DIR: tempDir() }, persistSecrets: false }), ConfigError);
  // A corrupt file is reported, not silently replaced.
  writeFileSync(file, '{not json');
  assert.throws(() => loadConfig({ env: { DATA_DIR: dir } }), /not valid JSON/);
});

test('SECRET_SEED: two nodes with the same seed agree; a different seed differs', () => {
  const seed = 'Vb7Kq2Xw9Lr4Tz1Nm8Pc3Hs6Jd5Fg0Ye';
  const a = load({ SECRET_SEED: seed, NODE_NAME: 'a' });
  const b = load({ SECRET_SEED: seed, NODE_NAME: 'b' });
  for (const name of ['PALISADE_HMAC_SECRET', 'CODE_CHALLENGE_SECRET', 'JWT_SECRET', 'HASHING_SALT'] as const) {
    assert.equal(a.secrets[name], b.secrets[name]);
    assert.equal(a.secrets[name], deriveSecret(seed, name));
  }
  assert.notEqual(a.secrets.PALISADE_HMAC_SECRET, a.secrets.JWT_SECRET);
  assert.notEqual(a.secrets.NODE_ID, b.secrets.NODE_ID);
  const c = load({ SECRET_SEED: 'Wc8Lr3Yx0Ms5Ua2On9Qd4It7Ke6Gh1Zf' });
  assert.notEqual(c.secrets.PALISADE_HMAC_SECRET, a.secrets.PALISADE_HMAC_SECRET);
  // Known answer, so a change of derivation cannot slip by.
  assert.equal(deriveSecret('correct horse battery staple!', 'PALISADE_HMAC_SECRET').length, 43);
});

test('DATA_DIR rule: explicit wins, else ./data outside a container', () => {
  assert.equal(resolveDataDir('/srv/palisade'), '/srv/palisade');
  assert.equal(resolveDataDir('rel', '/work'), '/work/rel');
  const implicit = resolveDataDir('', '/work/x');
  assert.ok(implicit === '/data' || implicit === '/work/x/data');
});

test('describeConfig hides secrets and every variable has documentation', () => {
  const c = load({ MONITORING_HTTP_CREDENTIALS: 'a:b', REDIS_URL: 'redis://:pw@host:6379' });
  const d = describeConfig(c);
  assert.equal(d.MONITORING_HTTP_CREDENTIALS, '<set>');
  assert.equal(d.REDIS_URL, '<set>');
  assert.equal(d.PORT, 8080);
  for (const [name, spec] of Object.entries(VARIABLES)) assert.ok(spec.doc.length > 5, `${name} documented`);
});

test('CACHE_DURATION_USED_CHALLENGES must outlast CLAIM_CLOCK_SKEW by a minute (both in the same unit)', () => {
  assert.deepEqual(problems({ CACHE_DURATION_USED_CHALLENGES: '90s', CLAIM_CLOCK_SKEW: '60s' }), ['CACHE_DURATION_USED_CHALLENGES must be at least CLAIM_CLOCK_SKEW plus 1m']);
  assert.equal(load({ CACHE_DURATION_USED_CHALLENGES: '2m', CLAIM_CLOCK_SKEW: '60s' }).CACHE_DURATION_USED_CHALLENGES, 120_000);
});

test('REDIS_URL: one server, a cluster or a sentinel master; bad forms refused naming the part, never the password', () => {
  for (const ok of ['redis://host:6379', 'rediss://u:p@host:6380/2', 'redis+cluster://a:7000,b:7001', 'rediss+cluster://u:p%40ss@[::1]:7000',
    'redis+sentinel://s1:26379,s2:26379/mymaster', 'redis+sentinel://:pw@s1/mymaster/3']) assert.equal(load({ REDIS_URL: ok }).REDIS_URL, ok);
  assert.deepEqual(problems({ REDIS_URL: 'http://host:6379' }),
    ['REDIS_URL must start with redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://']);
  assert.deepEqual(problems({ REDIS_URL: 'redis+sentinel://u:secret-pw@s1:26379,s2:26379' }),
    ['REDIS_URL: redis+sentinel:// needs the master name after the hosts (redis+sentinel://host:26379,host:26379/mymaster)']);
  assert.deepEqual(problems({ REDIS_URL: 'redis+cluster://u:secret-pw@a:7000,b:99999' }), ['REDIS_URL: port 99999 is out of range']);
  assert.deepEqual(problems({ REDIS_URL: 'redis+cluster://u:secret-pw@a:7000,,b:7001' }),
    ['REDIS_URL: "" is not host:port (IPv6 addresses go in brackets: [::1]:6379)']);
  assert.deepEqual(problems({ REDIS_URL: 'redis+cluster://a:7000/0' }), ['REDIS_URL: a Redis Cluster has no database number or name after the hosts']);
  assert.deepEqual(problems({ REDIS_URL: 'redis+cluster://a:7000?password=x' }),
    ["REDIS_URL: no ?parameters are read in this form (a sentinel's database goes after the master name: /mymaster/0)"]);
  assert.deepEqual(problems({ REDIS_URL: 'redis+sentinel://s1/mymaster/x' }), ['REDIS_URL: the database after the master name must be a number']);
  assert.deepEqual(problems({ REDIS_URL: 'redis+sentinel://u:%E0%A4%A@s1/mymaster' }), ['REDIS_URL: the user or password is not percent-encoded correctly']);
  for (const bad of ['redis+cluster://u:secret-pw@a:7000,b:99999', 'redis+sentinel://u:secret-pw@s1:26379,s2:26379', 'redis+cluster://u:secret-pw@a:7000,,b']) {
    assert.doesNotMatch(problems({ REDIS_URL: bad }).join(' '), /secret-pw/, 'no password in a problem');
  }
});

test('REDIS_CLAIM_REPLICAS: auto by default, a count from 0 to 16', () => {
  assert.equal(load({}).REDIS_CLAIM_REPLICAS, null);
  assert.equal(load({ REDIS_CLAIM_REPLICAS: '2' }).REDIS_CLAIM_REPLICAS, 2);
  assert.equal(load({ REDIS_CLAIM_REPLICAS: '0' }).REDIS_CLAIM_REPLICAS, 0);
  assert.equal(problems({ REDIS_CLAIM_REPLICAS: '17' }).length, 1);
  assert.equal(problems({ REDIS_CLAIM_REPLICAS: 'all' }).length, 1);
});
