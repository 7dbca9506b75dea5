// The intelligence downloads: MaxMind credentials travel as HTTP Basic auth to the download host
// and not past a redirect to another host; which databases are downloaded; the user-agent list in
// the intoli format is trimmed to the heaviest entries, and anything else is refused as invalid.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { test } from 'node:test';
import { geoDownloads, MAXMIND_DEFAULT_DOWNLOAD_URL } from '../../src/intel/intel-lists.js';
import { prepareUserAgentList, UserAgentList } from '../../src/intel/user-agent-list.js';
import { fetchList, ListFetchError } from '../../src/lists/fetch-list.js';
import { createOutbound } from '../../src/lists/outbound.js';

const base = {
  MAXMIND_ACCOUNT_ID: '', MAXMIND_LICENSE_KEY: '', MAXMIND_DOWNLOAD_URL: MAXMIND_DEFAULT_DOWNLOAD_URL, MAXMIND_DOWNLOAD_SCHEDULE: '0 0 * * *',
  IPINFO_IO_MMDB_DOWNLOAD_URL: null, IPINFO_IO_MMDB_DOWNLOAD_SCHEDULE: '0 0 * * *', GEO_DATABASE_SIZE_LIMIT: 1e6,
  USER_AGENT_LIST_URL: null, USER_AGENT_LIST_SCHEDULE: '0 0 * * *', USER_AGENT_LIST_SIZE_LIMIT: 1e6, USER_AGENT_LIST_MAX_ENTRIES: 2,
} as const;

test('geoDownloads: nothing by default; MaxMind with a license key (credentials in the URL) or a mirror URL; IPinfo with its URL', () => {
  assert.deepEqual(geoDownloads(base), []);
  const mm = geoDownloads({ ...base, MAXMIND_ACCOUNT_ID: '12345', MAXMIND_LICENSE_KEY: 'k/y:1' });
  assert.equal(mm.length, 1);
  const u = new URL(mm[0]!.url);
  assert.deepEqual([mm[0]!.name, decodeURIComponent(u.username), decodeURIComponent(u.password), u.host], ['maxmind', '12345', 'k/y:1', 'download.maxmind.com']);
  assert.deepEqual(geoDownloads({ ...base, MAXMIND_DOWNLOAD_URL: 'http://mirror.test/city.mmdb', IPINFO_IO_MMDB_DOWNLOAD_URL: 'https://ipinfo.test/x.mmdb?token=t' }).map((d) => [d.name, d.url]),
    [['maxmind', 'http://mirror.test/city.mmdb'], ['ipinfo', 'https://ipinfo.test/x.mmdb?token=t']]);
  assert.deepEqual(geoDownloads({ ...base, MAXMIND_LICENSE_KEY: 'k', MAXMIND_DOWNLOAD_SCHEDULE: null }), [], 'no schedule: disabled');
});

test('fetchList: URL credentials become Basic auth for that host and are dropped on a redirect elsewhere', async () => {
  const seen: { host: string; auth: string | undefined }[] = [];
  const storage = createServer((req: IncomingMessage, res) => { seen.push({ host: 'storage', auth: req.headers.authorization }); res.end('db'); });
  await new Promise<void>((r) => storage.listen(0, '127.0.0.1', r));
  const storageUrl = `http://localhost:${(storage.address() as AddressInfo).port}/db`;
  const download = createServer((req, res) => {
    seen.push({ host: 'download', auth: req.headers.authorization });
    if (req.headers.authorization !== `Basic ${Buffer.from('acct:li:cense').toString('base64')}`) { res.writeHead(401).end(); return; }
    res.writeHead(302, { location: storageUrl }).end();
  });
  await new Promise<void>((r) => download.listen(0, '127.0.0.1', r));
  const outbound = createOutbound({ userAgent: '', version: '1', httpProxy: null, httpsProxy: null, noProxy: [], caFile: null });
  try {
    const url = `http://acct:${encodeURIComponent('li:cense')}@127.0.0.1:${(download.address() as AddressInfo).port}/geo`;
    const body = await fetchList(url, { outbound, sizeLimit: 1000, timeoutMs: 5000 });
    assert.equal(body.toString(), 'db');
    assert.deepEqual(seen, [{ host: 'download', auth: `Basic ${Buffer.from('acct:li:cense').toString('base64')}` }, { host: 'storage', auth: undefined }]);
  } finally {
    await outbound.close();
    storage.close();
    download.close();
  }
});

test('user-agent list: the heaviest entries kept, commonness and rank; bad downloads refused', () => {
  const body = gzipSync(JSON.stringify([
    { userAgent: 'A', weight: 0.2 }, { userAgent: 'B', weight: 0.5 }, { userAgent: 'C', weight: 0.3 }, { userAgent: 'bad\ttab', weight: 1 }, { weight: 1 }, 'x',
  ]));
  const prepared = prepareUserAgentList(body, 2, 1e6);
  assert.equal(prepared.entries, 2);
  assert.equal(prepared.data.toString(), '0.5\tB\n0.3\tC\n');
  const list = new UserAgentList(prepared.data.toString());
  assert.deepEqual(list.commonness('B'), { commonness: 'common', share: 0.625, rank: 1 });
  assert.deepEqual(list.commonness('A'), { commonness: 'uncommon', share: null, rank: null });
  assert.deepEqual(UserAgentList.EMPTY.commonness('B'), { commonness: 'unknown', share: null, rank: null });
  for (const bad of [Buffer.from('<html>'), Buffer.from('{"a":1}'), Buffer.from('[]'), Buffer.from([0x1f, 0x8b, 0, 0])]) {
    assert.throws(() => prepareUserAgentList(bad, 10, 1e6), (err: unknown) => err instanceof ListFetchError && err.reason === 'invalid');
  }
});
