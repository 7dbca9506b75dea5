// The classifier's lists: domains in their compared form, parent matching, the embedded lists, the
// disposable download turned into the kept file, and both downloads through the list machinery
// from a loopback server: a good download replaces the list a serving process loads (after the
// embedded or empty default), one over the size or entry limit or in another format keeps the
// previous list, and a PhishTank key in the URL path never reaches the logs or the status file.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import {
  classifierListSources, DISPOSABLE_LIST, loadClassifierLists, maskPathKeys, PHISHING_LIST, type ClassifierListConfig,
} from '../../src/classifier/classifier-lists.js';
import { DomainList, embeddedDisposableDomains, embeddedFreeProviders, normalizeDomain, prepareDisposableList } from '../../src/classifier/email-domains.js';
import { ListFetchError } from '../../src/lists/fetch-list.js';
import { listPaths, readStatusSync } from '../../src/lists/list-store.js';
import { createListUpdater } from '../../src/lists/list-updater.js';
import { createOutbound } from '../../src/lists/outbound.js';
import { createLogger } from '../../src/log.js';
import { startListServer, type ListServer } from '../helpers/list-server.js';

const KEY = 'a3f1c9e04b7d2e8f6a5c1b3d9e7f0a2c4b6d8e0f1a3c5e7b9d2f4a6c8e0b1d3f';
const PHISHTANK_HEADER = 'phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target';

function config(server: ListServer, extra: Partial<ClassifierListConfig> = {}): ClassifierListConfig {
  return {
    EMAIL_LIST_DISPOSABLE: `${server.url}/disposable.conf`, EMAIL_LIST_DISPOSABLE_SCHEDULE: '0 0 1 1 *',
    EMAIL_LIST_DISPOSABLE_SIZE_LIMIT: 1024, EMAIL_LIST_DISPOSABLE_MAX_ENTRIES: 3,
    PHISHING_LIST_URL: `${server.url}/data/${KEY}/online-valid.csv`, PHISHING_LIST_SCHEDULE: '0 0 1 1 *',
    PHISHING_LIST_SIZE_LIMIT: 4096, PHISHING_LIST_MAX_ENTRIES: 2, ...extra,
  };
}

function capture() {
  const lines: string[] = [];
  const destination = new Writable({ write(chunk: Buffer | string, _e, done) { lines.push(chunk.toString()); done(); } });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

test('normalizeDomain: IDNA, case, labels, lengths and numeric top-level labels', () => {
  assert.equal(normalizeDomain('Mail.Example.COM'), 'mail.example.com');
  assert.equal(normalizeDomain('bücher.de'), 'xn--bcher-kva.de');
  for (const bad of ['', 'localhost', 'a..b', '-a.com', 'a-.com', 'a_b.com', 'a b.com', '1.2.3.4', 'x.com.', `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}com`]) {
    assert.equal(normalizeDomain(bad), null, bad);
  }
});

test('DomainList: exact and parent matching, never a bare top-level label', () => {
  const list = DomainList.fromText('# comment\nMailinator.com\n\n*.wild.net # trailing comment\n.dot.org\nnot a domain\ncom\n');
  assert.equal(list.size, 3);
  assert.equal(list.match('mailinator.com'), 'mailinator.com');
  assert.equal(list.match('a.b.mailinator.com'), 'mailinator.com');
  assert.equal(list.match('x.wild.net'), 'wild.net');
  assert.equal(list.match('dot.org'), 'dot.org');
  assert.equal(list.match('mailinator.com.evil.org'), null);
  assert.equal(list.match('notmailinator.com'), null);
  assert.equal(list.match('com'), null);
  assert.equal(list.has('a.b.mailinator.com'), false);
});

test('embedded lists: disposable-email-domains (index and wildcard) and email-providers', () => {
  const disposable = embeddedDisposableDomains();
  assert.ok(disposable.size > 100_000, String(disposable.size));
  assert.equal(disposable.match('mailinator.com'), 'mailinator.com');
  assert.equal(disposable.match('anything.33mail.com'), '33mail.com', 'wildcard.json');
  assert.equal(disposable.match('gmail.com'), null);
  const free = embeddedFreeProviders();
  assert.ok(free.size > 8000, String(free.size));
  for (const d of ['gmail.com', 'outlook.com', 'yahoo.com', 'gmx.de', 'web.de', 'proton.me']) assert.ok(free.has(d), d);
  assert.equal(free.has('acme-widgets.com'), false);
});

test('prepareDisposableList: valid domains kept once and normalised; other formats refused', () => {
  const body = '# disposable domains\r\nTempMail.dev\r\n\r\ntempmail.dev\n*.throwaway.email\nbücher-wegwerf.de\n<not a domain>\n';
  const prepared = prepareDisposableList(Buffer.from(body), 1e6);
  assert.deepEqual(prepared, { data: Buffer.from('tempmail.dev\nthrowaway.email\nxn--bcher-wegwerf-wob.de\n'), entries: 3 });
  assert.deepEqual(prepareDisposableList(gzipSync(body), 1e6), prepared);
  for (const bad of ['<html><body>404</body></html>', '# only comments\n', '{"domains":["a.com"]}', 'a.com\n<x>\n<y>\n']) {
    assert.throws(() => prepareDisposableList(Buffer.from(bad), 1e6), (err: unknown) => err instanceof ListFetchError && err.reason === 'invalid', bad);
  }
});

test('classifierListSources: both lists by default; an empty URL or schedule disables one; keys masked', () => {
  const server = { url: 'https://lists.example' } as ListServer;
  const sources = classifierListSources(config(server));
  assert.deepEqual(sources.map((s) => [s.name, s.ext ?? 'txt', s.sizeLimit, s.maxEntries]), [[DISPOSABLE_LIST, 'txt', 1024, 3], [PHISHING_LIST, 'tsv', 4096, 2]]);
  assert.equal(sources[1]!.displayUrl, 'https://lists.example/data/***/online-valid.csv');
  assert.deepEqual(classifierListSources(config(server, { EMAIL_LIST_DISPOSABLE: null, PHISHING_LIST_SCHEDULE: null })), []);
  assert.equal(maskPathKeys('https://data.phishtank.com/data/online-valid.csv'), 'https://data.phishtank.com/data/online-valid.csv');
  assert.equal(maskPathKeys('not a url'), 'not a url');
});

describe('downloads through the list machinery', () => {
  let server: ListServer;
  before(async () => { server = await startListServer(); });
  after(async () => { await server.close(); });

  test('a serving process loads the defaults, then each download; failed downloads keep the list', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'palisade-classifier-lists-'));
    const cfg = config(server);
    const { logger, lines } = capture();
    const loaded = await loadClassifierLists({ ...cfg, dataDir }, logger);
    assert.equal(loaded.disposable(), embeddedDisposableDomains(), 'no download yet: the embedded list');
    assert.equal(loaded.phishing().match('https://evil.example/login'), null, 'no download yet: nothing');

    const outbound = createOutbound({ userAgent: '', version: '1', httpProxy: null, httpsProxy: null, noProxy: [], caFile: null });
    const updated: string[] = [];
    const updater = createListUpdater(classifierListSources(cfg), {
      dataDir, outbound, timeoutMs: 2000, logger, onUpdated: (name) => { updated.push(name); void loaded.reload(name); },
    });
    try {
      server.routes.set('/disposable.conf', { kind: 'body', body: '# list\ntempmail.dev\nburner.example\n' });
      const csv = `${PHISHTANK_HEADER}\n9001,https://evil.example/login,http://www.phishtank.com/phish_detail.php?phish_id=9001,2025-09-19T19:02:10+00:00,yes,2025-09-19T19:30:00+00:00,yes,PayPal\n`;
      server.routes.set(`/data/${KEY}/online-valid.csv`, { kind: 'body', body: csv });
      assert.deepEqual(await updater.update(DISPOSABLE_LIST), { ok: true, entries: 2 });
      assert.deepEqual(await updater.update(PHISHING_LIST), { ok: true, entries: 1 });
      await loaded.reload(DISPOSABLE_LIST);
      await loaded.reload(PHISHING_LIST);
      assert.deepEqual(updated, [DISPOSABLE_LIST, PHISHING_LIST]);
      assert.equal(readFileSync(listPaths(dataDir, DISPOSABLE_LIST).file, 'utf8'), 'tempmail.dev\nburner.example\n');
      assert.equal(loaded.disposable().match('x.tempmail.dev'), 'tempmail.dev');
      assert.equal(loaded.disposable().match('mailinator.com'), null, 'the download replaces the embedded list');
      assert.deepEqual(loaded.phishing().match('http://evil.example/login?x=1'), { id: '9001', target: 'PayPal', submittedAt: 1758308530 });

      // Over the entry limit (3), over the size limit (1 KB), another format: refused, the list stays.
      server.routes.set('/disposable.conf', { kind: 'body', body: 'a.com\nb.com\nc.com\nd.com\n' });
      assert.deepEqual(await updater.update(DISPOSABLE_LIST), { ok: false, reason: 'too_many_entries' });
      server.routes.set('/disposable.conf', { kind: 'body', body: `${'x'.repeat(1100)}.com\n` });
      assert.deepEqual(await updater.update(DISPOSABLE_LIST), { ok: false, reason: 'too_large' });
      server.routes.set('/disposable.conf', { kind: 'body', body: '<html>maintenance</html>' });
      assert.deepEqual(await updater.update(DISPOSABLE_LIST), { ok: false, reason: 'invalid' });
      const threeRows = [1, 2, 3].map((i) => `${i},https://p${i}.example/x,,,yes,,yes,Other`).join('\n');
      server.routes.set(`/data/${KEY}/online-valid.csv`, { kind: 'body', body: `${PHISHTANK_HEADER}\n${threeRows}\n` });
      assert.deepEqual(await updater.update(PHISHING_LIST), { ok: false, reason: 'too_many_entries' });
      server.routes.set(`/data/${KEY}/online-valid.csv`, { kind: 'body', body: 'Service unavailable', status: 503 });
      assert.deepEqual(await updater.update(PHISHING_LIST), { ok: false, reason: 'http_status' });
      assert.deepEqual(updated, [DISPOSABLE_LIST, PHISHING_LIST], 'no reload after a failure');
      assert.equal(readFileSync(listPaths(dataDir, DISPOSABLE_LIST).file, 'utf8'), 'tempmail.dev\nburner.example\n');
      assert.equal(loaded.phishing().match('https://evil.example/login')?.id, '9001');

      const status = readStatusSync(listPaths(dataDir, PHISHING_LIST).status)!;
      assert.equal(status.url, `${server.url}/data/***/online-valid.csv`);
      assert.deepEqual(status.failures, { too_many_entries: 1, http_status: 1 });
      assert.equal(readStatusSync(listPaths(dataDir, DISPOSABLE_LIST).status)!.entries, 2);
      assert.ok(!lines.join('').includes(KEY), 'the key never reaches the logs');
      assert.ok(lines.some((l) => l.includes('online-valid.csv')), 'the URL is logged, masked');

      // A new serving process finds the files; with downloads turned off it ignores them.
      const restarted = await loadClassifierLists({ ...cfg, dataDir }, logger);
      assert.equal(restarted.disposable().match('tempmail.dev'), 'tempmail.dev');
      assert.equal(restarted.phishing().match('https://evil.example/login')?.id, '9001');
      const off = await loadClassifierLists({ ...cfg, EMAIL_LIST_DISPOSABLE: null, PHISHING_LIST_URL: null, dataDir }, logger);
      assert.equal(off.disposable(), embeddedDisposableDomains());
      assert.equal(off.phishing().match('https://evil.example/login'), null);
      await off.reload(PHISHING_LIST);
      assert.equal(off.phishing().match('https://evil.example/login'), null);
    } finally {
      await updater.stop();
      await outbound.close();
    }
  });
});
