// The downloaded-list machinery against a loopback HTTP server: a good download replaces the list
// and is loaded by the index; a timeout, an HTTP 500, a body over the size limit (aborted while
// streaming, long before the server finished) and too many entries each keep the old list, with
// the reason in the status file and the metrics; a schedule fires; a restart loads the list from
// DATA_DIR without any download; lookups during reloads always see a complete index; HTTP_PROXY is
// used (and NO_PROXY bypasses it); credentials never reach the logs or the status.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer as createHttpsServer } from 'node:https';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { createThreatIndex } from '../../src/intel/threat-index.js';
import { KIND_BIT, THREAT_LIST_KINDS, type ThreatSource } from '../../src/intel/threat-sources.js';
import { countListLines } from '../../src/lists/ip-ranges.js';
import { listPaths, readStatusSync } from '../../src/lists/list-store.js';
import { createListUpdater, type ListSource } from '../../src/lists/list-updater.js';
import { registerListMetrics } from '../../src/lists/metrics.js';
import { createOutbound } from '../../src/lists/outbound.js';
import { createLogger } from '../../src/log.js';
import { startConnectProxy, startListServer, type ListServer } from '../helpers/list-server.js';

const OLD = '# old\n203.0.113.0/24\n2001:db8:1::/48\n';
const NEW = '# new\n198.51.100.0/24\n2001:db8:2::/48\n';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({ write(chunk: Buffer | string, _e, done) { lines.push(chunk.toString()); done(); } });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

function source(server: ListServer, name: string, path: string, extra: Partial<ListSource> = {}): ListSource {
  return {
    name, url: `${server.url}${path}`, schedule: '0 0 1 1 *', sizeLimit: 1024 * 1024, maxEntries: 1000,
    countEntries: countListLines, meta: { kind: 'malicious' }, ...extra,
  };
}

function outbound(settings: Partial<Parameters<typeof createOutbound>[0]> = {}) {
  return createOutbound({ userAgent: '', version: '9.9.9', httpProxy: null, httpsProxy: null, noProxy: [], caFile: null, ...settings });
}

async function metricsText(registry: Registry): Promise<string> {
  return registry.metrics();
}

describe('downloaded lists', () => {
  let server: ListServer;
  let dataDir: string;
  before(async () => {
    server = await startListServer();
  });
  after(async () => {
    await server.close();
  });
  const freshDir = () => {
    dataDir = mkdtempSync(join(tmpdir(), 'palisade-lists-'));
    return dataDir;
  };

  test('a download replaces the list, is loaded by the index, and every kind matches IPv4 and IPv6', async () => {
    const dir = freshDir();
    const sources: ThreatSource[] = THREAT_LIST_KINDS.map((kind) => ({ name: `k_${kind}`, kind, url: `${server.url}/${kind}.netset`, schedule: '0 0 1 1 *' }));
    THREAT_LIST_KINDS.forEach((kind, i) => {
      server.routes.set(`/${kind}.netset`, { kind: 'body', body: `# ${kind}\n10.${i}.0.0/16\n2001:db8:${i}::/48\n` });
    });
    const { logger } = capture();
    const index = createThreatIndex({ dataDir: dir, sources, logger });
    const out = outbound();
    const updated: string[] = [];
    const updater = createListUpdater(sources.map((s) => source(server, s.name, `/${s.kind}.netset`)), {
      dataDir: dir, outbound: out, timeoutMs: 5000, logger, onUpdated: (n) => { updated.push(n); void index.reload(n); },
    });
    for (const s of sources) assert.deepEqual(await updater.update(s.name), { ok: true, entries: 2 });
    await index.reloadAll();
    assert.deepEqual(updated.sort(), sources.map((s) => s.name).sort());
    assert.equal(server.lastUserAgent, 'palisade/9.9.9');
    THREAT_LIST_KINDS.forEach((kind, i) => {
      assert.equal(index.match(`10.${i}.0.0`), KIND_BIT[kind], `${kind} first IPv4`);
      assert.equal(index.match(`10.${i}.255.255`), KIND_BIT[kind], `${kind} last IPv4`);
      assert.equal(index.match(`10.${i + 1}.0.0`) & KIND_BIT[kind], 0, `${kind} one above`);
      assert.equal(index.match(`2001:db8:${i}::`), KIND_BIT[kind], `${kind} first IPv6`);
      assert.equal(index.match(`2001:db8:${i}:ffff:ffff:ffff:ffff:ffff`), KIND_BIT[kind], `${kind} last IPv6`);
      assert.equal(index.match(`2001:db8:${i + 1}::`) & KIND_BIT[kind], 0, `${kind} IPv6 one above`);
      assert.equal(index.match(`::ffff:10.${i}.1.1`), KIND_BIT[kind], `${kind} IPv4-mapped`);
    });
    assert.equal(index.match('9.255.255.255'), 0);
    assert.deepEqual(index.matchSources('10.3.0.1'), ['k_bot']);
    await updater.stop();
    await out.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('timeout, HTTP 500, too large (aborted while streaming) and too many entries keep the old list', async () => {
    const dir = freshDir();
    const { logger, lines } = capture();
    server.routes.set('/list.netset', { kind: 'body', body: OLD });
    const out = outbound();
    const srcs: ListSource[] = [source(server, 'one', '/list.netset', { url: `http://user:s3cret@127.0.0.1:${new URL(server.url).port}/list.netset?token=t0ken`, sizeLimit: 4096, maxEntries: 5 })];
    const updater = createListUpdater(srcs, { dataDir: dir, outbound: out, timeoutMs: 500, logger, onUpdated: () => {} });
    const index = createThreatIndex({ dataDir: dir, sources: [{ name: 'one', kind: 'malicious', url: srcs[0]!.url, schedule: srcs[0]!.schedule }], logger });
    const registry = new Registry();
    registerListMetrics(registry, dir, ['one']);
    assert.equal((await updater.update('one')).ok, true);
    await index.reload('one');
    const paths = listPaths(dir, 'one');
    const good = readFileSync(paths.file, 'utf8');
    assert.equal(good, OLD);

    const cases = [
      { route: { kind: 'hang' } as const, reason: 'timeout' },
      { route: { kind: 'body', body: 'oops', status: 500 } as const, reason: 'http_status' },
      // 100 KB over 5 s if nobody stops it; the client must give up at 4 KB.
      { route: { kind: 'stream', chunk: `${'#'.repeat(1023)}\n`, everyMs: 50, total: 100 * 1024 } as const, reason: 'too_large' },
      { route: { kind: 'body', body: '10.0.0.1\n10.0.0.2\n10.0.0.3\n10.0.0.4\n10.0.0.5\n10.0.0.6\n' } as const, reason: 'too_many_entries' },
    ];
    const failures: Record<string, number> = {};
    for (const c of cases) {
      server.routes.set('/list.netset', c.route);
      const started = Date.now();
      assert.deepEqual(await updater.update('one'), { ok: false, reason: c.reason });
      failures[c.reason] = 1;
      if (c.reason === 'timeout') assert.ok(Date.now() - started < 3000, 'the deadline holds');
      if (c.reason === 'too_large') {
        await sleep(200);
        const s = server.streamed.get('/list.netset')!;
        assert.equal(s.closedEarly, true, 'the client aborted the transfer');
        assert.ok(s.sent < 20 * 1024, `aborted early, after ${s.sent} bytes`);
      }
      assert.equal(readFileSync(paths.file, 'utf8'), OLD, `${c.reason}: the old list stays on disk`);
      assert.equal(index.match('203.0.113.9'), KIND_BIT.malicious, `${c.reason}: the old list stays in use`);
      const status = readStatusSync(paths.status)!;
      assert.equal(status.lastError?.reason, c.reason);
      assert.equal(status.entries, 2);
      assert.deepEqual(status.failures, failures);
      const text = await metricsText(registry);
      assert.match(text, new RegExp(`palisade_list_failures_total\\{list="one",reason="${c.reason}"\\} 1`));
    }
    const text = await metricsText(registry);
    assert.match(text, /palisade_list_entries\{list="one"\} 2/);
    assert.match(text, /palisade_list_last_success_timestamp_seconds\{list="one"\} \d{10}/);
    const status = readStatusSync(paths.status)!;
    assert.equal(status.url, `http://127.0.0.1:${new URL(server.url).port}/list.netset?…`);
    const logged = lines.join('');
    assert.ok(!logged.includes('s3cret') && !logged.includes('t0ken'), 'no credentials in the log');
    assert.match(logged, /list update failed; the previous list stays in use/);
    assert.deepEqual(readdirSync(join(dir, 'lists')).sort(), ['one.json', 'one.txt'], 'no temporary file left');
    await updater.stop();
    await out.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a schedule fires (every second) and a stale list is downloaded at start, a fresh one is not', async () => {
    const dir = freshDir();
    const { logger } = capture();
    server.routes.set('/sched.netset', { kind: 'body', body: OLD });
    server.hits.delete('/sched.netset');
    const out = outbound();
    const updated: string[] = [];
    const updater = createListUpdater([source(server, 'sched', '/sched.netset', { schedule: '* * * * * *' })], {
      dataDir: dir, outbound: out, timeoutMs: 2000, logger, onUpdated: (n) => updated.push(n),
    });
    updater.start();
    const deadline = Date.now() + 5000;
    while ((server.hits.get('/sched.netset') ?? 0) < 3 && Date.now() < deadline) await sleep(50);
    await updater.stop();
    assert.ok((server.hits.get('/sched.netset') ?? 0) >= 3, `downloads: ${server.hits.get('/sched.netset')}`);
    assert.ok(updated.length >= 3);

    // Fresh (just downloaded) with a yearly schedule: no download at start.
    server.hits.delete('/sched.netset');
    const yearly = createListUpdater([source(server, 'sched', '/sched.netset', { schedule: '0 0 1 1 *' })], {
      dataDir: dir, outbound: out, timeoutMs: 2000, logger, onUpdated: () => {},
    });
    yearly.start();
    await sleep(300);
    assert.equal(server.hits.get('/sched.netset') ?? 0, 0);
    assert.ok(yearly.nextRun('sched')!.getTime() > Date.now());
    await yearly.stop();
    // Stale: the last success is older than one period (here one minute).
    const paths = listPaths(dir, 'sched');
    const status = readStatusSync(paths.status)!;
    writeFileSync(paths.status, JSON.stringify({ ...status, lastSuccessAt: new Date(Date.now() - 120_000).toISOString() }));
    const minutely = createListUpdater([source(server, 'sched', '/sched.netset', { schedule: '0 * * * * *' })], {
      dataDir: dir, outbound: out, timeoutMs: 2000, logger, onUpdated: () => {},
    });
    minutely.start();
    const until = Date.now() + 3000;
    while ((server.hits.get('/sched.netset') ?? 0) < 1 && Date.now() < until) await sleep(20);
    await minutely.stop();
    assert.equal(server.hits.get('/sched.netset'), 1);
    await out.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a restart loads the list from DATA_DIR without downloading; an absent file is an empty list', async () => {
    const dir = freshDir();
    const { logger } = capture();
    mkdirSync(join(dir, 'lists'), { recursive: true });
    writeFileSync(listPaths(dir, 'kept').file, OLD);
    const index = createThreatIndex({
      dataDir: dir, logger,
      sources: [{ name: 'kept', kind: 'tor', url: 'http://127.0.0.1:9/never', schedule: '0 0 1 1 *' }, { name: 'absent', kind: 'proxy', url: 'http://127.0.0.1:9/never', schedule: '0 0 1 1 *' }],
    });
    assert.equal(index.match('203.0.113.1'), 0, 'nothing before loading');
    await index.reloadAll();
    assert.equal(index.match('203.0.113.1'), KIND_BIT.tor);
    assert.equal(index.match('2001:db8:1::1'), KIND_BIT.tor);
    assert.deepEqual(index.stats().map((s) => [s.name, s.entries]), [['kept', 2], ['absent', 0]]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('lookups during reloads answer from the old or the new complete index, never a mix', async () => {
    const dir = freshDir();
    const { logger } = capture();
    mkdirSync(join(dir, 'lists'), { recursive: true });
    const file = listPaths(dir, 'swap').file;
    // Many ranges so a build takes a while; A lists 203.0.113.0/24 and not 198.51.100.0/24, B the reverse.
    const filler = Array.from({ length: 50_000 }, (_, i) => `100.${(i >> 8) & 255}.${i & 255}.0/24`).join('\n');
    const A = `${filler}\n203.0.113.0/24\n2001:db8:1::/48\n`;
    const B = `${filler}\n198.51.100.0/24\n2001:db8:2::/48\n`;
    writeFileSync(file, A);
    const index = createThreatIndex({ dataDir: dir, logger, sources: [{ name: 'swap', kind: 'malicious', url: 'http://127.0.0.1:9/x', schedule: '0 0 1 1 *' }] });
    await index.reloadAll();
    let stop = false;
    let lookups = 0;
    const seen = new Set<string>();
    const reader = (async () => {
      while (!stop) {
        for (let i = 0; i < 200; i++) {
          const a = index.match('203.0.113.5') !== 0;
          const b = index.match('198.51.100.5') !== 0;
          const a6 = index.match('2001:db8:1::5') !== 0;
          const b6 = index.match('2001:db8:2::5') !== 0;
          assert.ok((a && !b && a6 && !b6) || (!a && b && !a6 && b6), `mixed answer: ${a} ${b} ${a6} ${b6}`);
          seen.add(a ? 'A' : 'B');
          lookups++;
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let round = 0; round < 6; round++) {
      writeFileSync(file, round % 2 === 0 ? B : A);
      await index.reload('swap');
    }
    stop = true;
    await reader;
    assert.deepEqual([...seen].sort(), ['A', 'B']);
    assert.ok(lookups > 1000, `lookups: ${lookups}`);
    rmSync(dir, { recursive: true, force: true });
  });

  test('TLS_EXTRA_CA_CERTS: an HTTPS list signed by a private CA downloads with the CA file and is refused without it', async () => {
    const dir = freshDir();
    const { logger } = capture();
    // A CA and a server certificate for 127.0.0.1, made here with openssl.
    const pki = mkdtempSync(join(tmpdir(), 'palisade-ca-'));
    const run = (...args: string[]) => execFileSync('openssl', args, { cwd: pki, stdio: 'ignore' });
    run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Palisade test CA');
    run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(pki, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
    run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'ext.cnf');
    const https = createHttpsServer({ key: readFileSync(join(pki, 'server.key')), cert: readFileSync(join(pki, 'server.pem')) }, (_req, res) => res.end(NEW));
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(https.address() as { port: number }).port}/tls.netset`;
    const src: ListSource = { name: 'tls', url, schedule: '0 0 1 1 *', sizeLimit: 1024 * 1024, maxEntries: 1000, countEntries: countListLines, meta: { kind: 'malicious' } };
    try {
      const untrusted = outbound();
      const refused = createListUpdater([src], { dataDir: dir, outbound: untrusted, timeoutMs: 3000, logger, onUpdated: () => {} });
      assert.deepEqual(await refused.update('tls'), { ok: false, reason: 'network' }, 'a certificate from an unknown CA is refused');
      assert.equal(existsSync(listPaths(dir, 'tls').file), false);
      await untrusted.close();
      const trusted = outbound({ caFile: join(pki, 'ca.pem') });
      const ok = createListUpdater([src], { dataDir: dir, outbound: trusted, timeoutMs: 3000, logger, onUpdated: () => {} });
      assert.deepEqual(await ok.update('tls'), { ok: true, entries: 2 });
      assert.equal(readFileSync(listPaths(dir, 'tls').file, 'utf8'), NEW);
      await trusted.close();
    } finally {
      https.close();
      rmSync(pki, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('HTTP_PROXY carries the download (CONNECT); NO_PROXY bypasses it', async () => {
    const dir = freshDir();
    const { logger } = capture();
    const proxy = await startConnectProxy();
    server.routes.set('/proxied.netset', { kind: 'body', body: NEW });
    const port = new URL(server.url).port;
    const via = outbound({ httpProxy: proxy.url, noProxy: [] });
    const updater = createListUpdater([source(server, 'proxied', '/proxied.netset')], { dataDir: dir, outbound: via, timeoutMs: 3000, logger, onUpdated: () => {} });
    assert.deepEqual(await updater.update('proxied'), { ok: true, entries: 2 });
    assert.deepEqual(proxy.targets, [`127.0.0.1:${port}`]);
    await via.close();
    const bypass = outbound({ httpProxy: proxy.url, noProxy: ['127.0.0.1'] });
    const direct = createListUpdater([source(server, 'proxied', '/proxied.netset')], { dataDir: dir, outbound: bypass, timeoutMs: 3000, logger, onUpdated: () => {} });
    assert.deepEqual(await direct.update('proxied'), { ok: true, entries: 2 });
    assert.equal(proxy.targets.length, 1, 'NO_PROXY host went direct');
    await bypass.close();
    await proxy.close();
    assert.ok(existsSync(listPaths(dir, 'proxied').file));
    rmSync(dir, { recursive: true, force: true });
  });
});
