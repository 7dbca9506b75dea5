// Issue 6 acceptance at module level, on the real stores (shared memory and Redis):
// - across 4 processes a 100/1m flood rule admits exactly 100 per key per window (≥ 300 hits per
//   key, many in flight), two addresses of one IPv6 /64 sharing one bucket;
// - `block` holds a client for its duration, `expire` keeps a mark for its duration;
// - a scanner replaying 50 probe paths is marked and then refused, another IP unaffected;
// - a penalised client's scaled policy is harder, and back to normal after PENALTY_TTL.
// This file forks itself: with argv[2] === CHILD it is a flood-limit worker process.
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createAbuseMetrics } from '../../src/abuse/metrics.js';
import { createAbuseProtection, createFloodGuard, type AbuseConfig } from '../../src/abuse/index.js';
import type { Reply } from '../../src/http/types.js';
import { parseRateRule } from '../../src/parse.js';
import { resolvePolicy, scalePolicy } from '../../src/pow/policy.js';
import { openRedisStore } from '../../src/store/redis-store.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { captureLogger } from '../helpers/memory-store.js';
import { deleteRedisKeys, REDIS_URL, requireService } from '../helpers/services.js';
import { awayFromWindowEnd } from '../helpers/windows.js';

const CHILD = 'abuse-flood-child';
const PROCESSES = 4;

type StoreSpec = { kind: 'shm'; path: string } | { kind: 'redis'; url: string; keyPrefix: string };
interface ChildJob {
  store: StoreSpec;
  rule: string;
  /** Each child sends `hitsPerIp` requests from every IP, `inFlight` at a time. */
  ips: string[];
  hitsPerIp: number;
  inFlight: number;
}
interface ChildResult {
  admitted: number[];
  /** Retry-After values seen on 429s (all must be 1..60 for a 1m window). */
  retryAfter: number[];
  statuses: number[];
}

async function openStore(spec: StoreSpec): Promise<StateStore> {
  return spec.kind === 'shm'
    ? openSharedMemoryStore(spec.path, { capacity: 1 << 16 })
    : openRedisStore(spec.url, { keyPrefix: spec.keyPrefix, commandTimeout: 10_000 });
}

if (process.argv[2] === CHILD) {
  process.once('message', (job: ChildJob) => {
    void runChild(job).then((result) => process.send!(result, () => process.disconnect()), (err: unknown) => {
      process.send!({ error: String((err as Error)?.stack ?? err) }, () => process.disconnect());
    });
  });
} else {
  await registerTests();
}

async function runChild(job: ChildJob): Promise<ChildResult> {
  const store = await openStore(job.store);
  const { logger } = captureLogger('warn');
  const guard = createFloodGuard({ store, rule: parseRateRule(job.rule), key: 'ip', logger, metrics: createAbuseMetrics() });
  const admitted = job.ips.map(() => 0);
  const retryAfter: number[] = [];
  const statuses: number[] = [];
  const queue: number[] = [];
  for (let h = 0; h < job.hitsPerIp; h++) for (let i = 0; i < job.ips.length; i++) queue.push(i);
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const i = next;
      const reply: Reply | undefined = await guard.check({ ip: job.ips[i]!, headers: {}, query: new URLSearchParams() }, false);
      if (reply === undefined) admitted[i]!++;
      else {
        statuses.push(reply.status);
        retryAfter.push(Number(reply.headers?.['retry-after']));
      }
    }
  };
  await Promise.all(Array.from({ length: job.inFlight }, worker));
  await store.close();
  return { admitted, retryAfter, statuses };
}

function runChildren(job: ChildJob, live: Set<ChildProcess>): Promise<ChildResult[]> {
  return Promise.all(Array.from({ length: PROCESSES }, () => new Promise<ChildResult>((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [CHILD], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    live.add(child);
    child.once('message', (msg: ChildResult | { error: string }) => ('error' in msg ? reject(new Error(msg.error)) : resolve(msg)));
    child.once('exit', (code) => {
      live.delete(child);
      if (code !== 0) reject(new Error(`child exited with ${code}`));
    });
    child.send(job);
  })));
}

/** Waits until at least `ms` are left in the current minute, so a 1m window is not crossed. */
async function registerTests(): Promise<void> {
  const { after, describe, test } = await import('node:test');
  const redisUp = await requireService('redis');
  const run = randomBytes(6).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'palisade-abuse-'));
  const live = new Set<ChildProcess>();
  const opened: StateStore[] = [];
  const redisPrefix = `palisade-test-abuse-${run}:`;

  after(async () => {
    for (const child of live) child.kill('SIGKILL');
    for (const store of opened) await store.close();
    rmSync(dir, { recursive: true, force: true });
    if (redisUp) await deleteRedisKeys(REDIS_URL, redisPrefix);
  });

  const specs: { name: string; skip: boolean; spec: StoreSpec }[] = [
    { name: 'shared memory', skip: false, spec: { kind: 'shm', path: join(dir, 'state.shm') } },
    { name: 'Redis', skip: !redisUp, spec: { kind: 'redis', url: REDIS_URL, keyPrefix: redisPrefix } },
  ];

  for (const { name, skip, spec } of specs) {
    // The tests of one store run concurrently (different keys); each asserts only what scheduling
    // delays cannot change.
    describe(`abuse protection on the ${name} store`, { skip, concurrency: true }, () => {
      let store: Promise<StateStore> | undefined;
      const open = () => (store ??= openStore(spec).then((s) => {
        opened.push(s);
        return s;
      }));

      test(`${PROCESSES} processes, 100/1m: exactly 100 per key per window; one IPv6 /64 is one key`, async () => {
        await awayFromWindowEnd(60_000, 10_000);
        const ips = ['198.51.100.1', '198.51.100.2', '2001:db8:77:1::1', '2001:db8:77:1:ffff::2', '2001:db8:77:2::1'];
        const results = await runChildren({ store: spec, rule: '100/1m', ips, hitsPerIp: 80, inFlight: 16 }, live);
        const total = ips.map((_, i) => results.reduce((sum, r) => sum + r.admitted[i]!, 0));
        // 4 × 80 = 320 requests per address; the two addresses of 2001:db8:77:1::/64 share 100.
        assert.equal(total[0], 100);
        assert.equal(total[1], 100);
        assert.equal(total[2]! + total[3]!, 100);
        assert.equal(total[4], 100);
        const refused = results.flatMap((r) => r.statuses);
        assert.equal(refused.length, PROCESSES * 80 * ips.length - 400);
        assert.ok(refused.every((s) => s === 429));
        assert.ok(results.flatMap((r) => r.retryAfter).every((s) => Number.isInteger(s) && s >= 1 && s <= 60));
      });

      test('block holds a client for its duration, then lets it go', async () => {
        const s = await open();
        const { logger } = captureLogger('warn');
        const rule = parseRateRule('2/1s(block=2s)');
        const guard = createFloodGuard({ store: s, rule, key: 'ip', logger, metrics: createAbuseMetrics() });
        const ip = `192.0.2.${1 + (parseInt(run.slice(0, 2), 16) % 200)}`;
        const check = async () => guard.check({ ip, headers: {}, query: new URLSearchParams() }, false);
        // The shared-memory store is checked synchronously (hitSync), Redis through a Promise.
        assert.equal(guard.check({ ip: '192.0.2.250', headers: {}, query: new URLSearchParams() }, false) instanceof Promise, spec.kind === 'redis');
        // Hits until one passes the limit (the first ones may straddle a 1 s window boundary).
        let denied: Reply | undefined;
        let passedAt = 0;
        let admitted = 0;
        for (let i = 0; i < 50 && denied === undefined; i++) {
          passedAt = Date.now();
          denied = await check();
          if (denied === undefined) admitted++;
        }
        assert.equal(denied?.status, 429);
        assert.ok(admitted >= 2, 'at least the rule count was admitted');
        const retry = Number(denied?.headers?.['retry-after']);
        assert.ok(retry === 1 || retry === 2, `Retry-After ${retry}`);
        const { blockedUntil } = await s.peek(`flood|ip:${ip}`, rule);
        assert.ok(blockedUntil >= passedAt + 2000, 'held at least 2 s from the passing hit');
        // Through the next 1 s windows: refused whenever the answer came before blockedUntil.
        while (Date.now() < blockedUntil - 150) {
          const reply = await check();
          if (Date.now() < blockedUntil) assert.equal(reply?.status, 429);
          await sleep(200);
        }
        await sleep(Math.max(0, blockedUntil - Date.now()) + 50);
        assert.equal(await check(), undefined, 'released once the block has passed');
      });

      test('expire keeps a mark for its duration; a scanner replaying 50 probe paths is refused, another IP is not', async () => {
        const s = await open();
        const { logger, records } = captureLogger('info');
        const config: AbuseConfig = {
          FLOOD_RATE_LIMIT: parseRateRule('100/1m'), FLOOD_RATE_LIMIT_KEY: 'ip', THREATS_ENABLED: true,
          THREATS_PROBE_LIMIT: parseRateRule('2/5m(expire=2s)'), THREATS_MALICIOUS_LIMIT: parseRateRule('10/5m(expire=48h)'),
          THREATS_BOT_LIMIT: null, THREATS_PROXY_LIMIT: null, THREATS_TOR_LIMIT: null, PENALTY_TTL: 30 * 60_000,
          HEADER_ENTROPY_MAX_ENTRIES: 100, ANONYMIZE_IP_ADDRESS: true, secrets: { HASHING_SALT: `salt-${run}-0123456789` },
        };
        const abuse = createAbuseProtection(config, { store: s, logger });
        const scanner = `2001:db8:${run.slice(0, 4)}:1::66`;
        const visitor = `2001:db8:${run.slice(0, 4)}:2::1`;
        const paths = [
          '/.env', '/.git/config', '/.aws/credentials', '/config.json', '/wp-login.php', '/wp-admin/', '/xmlrpc.php', '/phpmyadmin/',
          '/pma/', '/adminer.php', '/shell.php', '/cgi-bin/luci', '/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/..%2f..%2fetc',
          '/%252e%252e/etc', '/backup.zip', '/db.sql', '/site.tar.gz', '/actuator/env', '/server-status', '/debug/pprof/',
          '/.env.local', '/.svn/entries', '/.htpasswd', '/wp-content/debug.log', '/administrator/', '/manager/html', '/c99.php',
          '/index.php.bak', '/.DS_Store', '/docker-compose.yml', '/web.config', '/phpinfo.php', '/telescope/requests',
          '/_ignition/execute-solution', '/console', '/jolokia/list', '/boaform/admin/formLogin', '/HNAP1/', '/solr/admin/',
          '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php', '/.ssh/id_rsa', '/appsettings.json', '/wp-config.php',
          '/dump.sql', '/backup/', '/login.aspx', '/struts/x.action', '/.npmrc',
        ];
        assert.equal(paths.length, 50);
        for (const path of paths) {
          assert.equal(await abuse.beforeRoute!({ ip: scanner, path, rawQuery: '', headers: {}, query: new URLSearchParams() }, false), undefined, path);
        }
        // Counting happens behind the request (the router answers 404 meanwhile): wait for it.
        for (let i = 0; i < 100 && !(await abuse.threats.isBlocked(scanner)); i++) await sleep(20);
        assert.equal(await abuse.threats.isBlocked(scanner), true);
        await assert.rejects(async () => abuse.challengePenalty({ ip: scanner, headers: {} }), { code: 'IP_BLOCKED', statusCode: 403 });
        await assert.rejects(async () => abuse.assertNotBlocked(scanner), { code: 'IP_BLOCKED' });
        assert.equal(records.filter((r) => r.msg === 'IP marked').map((r) => r.kind).sort().join(), 'malicious,probe');
        assert.equal(await abuse.challengePenalty({ ip: visitor, headers: { 'user-agent': 'Firefox' } }), 0);
        await abuse.assertNotBlocked(visitor);
        assert.equal(await abuse.beforeRoute!({ ip: visitor, path: '/v1/challenge', rawQuery: '', headers: {}, query: new URLSearchParams() }, false), undefined);
        // The probe mark (expire=2s) lasts 2 s after the last probe; the malicious one 48 h.
        const probedAt = Date.now();
        assert.equal(await abuse.threats.recordProbe(scanner), 'limit');
        const recordedAt = Date.now();
        if (Date.now() < probedAt + 2000) assert.equal(await abuse.threats.isMarked(scanner, 'probe'), true);
        await sleep(recordedAt + 2000 - Date.now() + 200);
        assert.equal(await abuse.threats.isMarked(scanner, 'probe'), false, 'the probe mark expired');
        assert.equal(await abuse.threats.isBlocked(scanner), true, 'the malicious mark still holds');
      });

      test('a penalised client gets a measurably harder policy, back to normal after PENALTY_TTL', async () => {
        const s = await open();
        const { logger } = captureLogger('warn');
        const config: AbuseConfig = {
          FLOOD_RATE_LIMIT: null, FLOOD_RATE_LIMIT_KEY: 'ip', THREATS_ENABLED: true,
          THREATS_PROBE_LIMIT: parseRateRule('2/5m(expire=48h)'), THREATS_MALICIOUS_LIMIT: parseRateRule('10/5m(expire=48h)'),
          THREATS_BOT_LIMIT: null, THREATS_PROXY_LIMIT: null, THREATS_TOR_LIMIT: null, PENALTY_TTL: 2000,
          HEADER_ENTROPY_MAX_ENTRIES: 100, ANONYMIZE_IP_ADDRESS: true, secrets: { HASHING_SALT: `salt-${run}-0123456789` },
        };
        const abuse = createAbuseProtection(config, { store: s, logger });
        const ip = `203.0.113.${1 + (parseInt(run.slice(2, 4), 16) % 200)}`;
        const limits = { maxMemoryBytes: 128 * 1024 * 1024 };
        const deterministic = resolvePolicy(null, limits);
        const probabilistic = resolvePolicy({ algorithm: 'PBKDF2/SHA-256', mode: 'probabilistic' }, limits);
        assert.equal(scalePolicy(deterministic, await abuse.challengePenalty({ ip, headers: {} })), deterministic);
        const failedAt = Date.now();
        await abuse.verificationFailed(ip, 'INVALID_SOLUTION');
        await abuse.verificationFailed(ip, 'INVALID_SOLUTION');
        const penalty = await abuse.challengePenalty({ ip, headers: {} });
        const readAt = Date.now();
        if (readAt < failedAt + 2000) {
          assert.equal(penalty, 2);
          const harder = scalePolicy(deterministic, penalty);
          assert.deepEqual([harder.counterMin, harder.counterMax], [deterministic.counterMin * 3, deterministic.counterMax * 3]);
          assert.equal(scalePolicy(probabilistic, penalty).cost, probabilistic.cost * 3);
          assert.deepEqual(await abuse.assess({ req: { ip }, penalty }), { score: 1.28, reasons: ['penalty', 'failed_attempts'] });
        }
        await sleep(readAt + 2000 - Date.now() + 200);
        assert.equal(await abuse.penaltyFor(ip), 0);
        assert.equal(scalePolicy(deterministic, await abuse.challengePenalty({ ip, headers: {} })), deterministic);
        assert.deepEqual(await abuse.assess({ req: { ip }, penalty: 0 }), { score: 0, reasons: [] });
      });
    });
  }
}
