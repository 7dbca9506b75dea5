// Geolocation: the embedded databases answer country and ASN for IPv4 and IPv6 with no download;
// a downloaded database is asked first and swapped atomically while lookups run (every answer
// comes from the old or the new database, a broken file changes nothing); MaxMind's .tar.gz is
// unpacked and anything that is no MMDB is refused.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { embeddedAsnFiles, loadAsnIndex } from '../../src/intel/asn-index.js';
import { createGeo, embeddedCountryDatabase } from '../../src/intel/geo.js';
import { extractMmdb } from '../../src/intel/intel-lists.js';
import { ListFetchError } from '../../src/lists/fetch-list.js';
import { tarGz, tinyMmdb } from '../helpers/mmdb.js';

const quiet = { error() {}, warn() {}, info() {}, debug() {} } as never;

test('embedded databases: country and ASN for IPv4 and IPv6, nothing for private or bad input', async () => {
  const asn = await loadAsnIndex(embeddedAsnFiles());
  const geo = createGeo({ databases: [{ name: 'embedded', path: embeddedCountryDatabase() }], logger: quiet, asn: () => asn });
  await geo.reloadAll();
  const google4 = geo.lookup('8.8.8.8');
  assert.deepEqual([google4.country, google4.asn, google4.org, google4.locationSource, google4.networkSource], ['US', 15169, 'Google LLC', 'embedded', 'embedded_asn']);
  const google6 = geo.lookup('2001:4860:4860::8888');
  assert.deepEqual([google6.country, google6.asn, google6.org], ['US', 15169, 'Google LLC']);
  const cf = geo.lookup('1.1.1.1');
  assert.deepEqual([cf.country, cf.asn], ['AU', 13335]);
  assert.equal(geo.lookup('::ffff:8.8.8.8').asn, 15169);
  for (const ip of ['10.1.2.3', '127.0.0.1', 'unknown', '', '1.2.3.4.5', '::1%eth0']) {
    const g = geo.lookup(ip);
    assert.deepEqual([g.country, g.asn, g.sources.length], [null, null, 0], ip);
  }
});

test('a downloaded database answers first and is swapped atomically under lookups; a broken file keeps the old one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'geo-'));
  const path = join(dir, 'maxmind.mmdb');
  const us = tinyMmdb({ low: { country: { iso_code: 'US' } }, high: { country: { iso_code: 'US' }, city: { names: { en: 'Old' } } } });
  const de = tinyMmdb({ low: { country: { iso_code: 'DE' } }, high: { country: { iso_code: 'DE' }, city: { names: { en: 'New' } }, subdivisions: [{ names: { en: 'Berlin' } }] } });
  writeFileSync(path, us);
  const geo = createGeo({ databases: [{ name: 'maxmind', path }, { name: 'embedded', path: embeddedCountryDatabase() }], logger: quiet });
  await geo.reloadAll();
  assert.deepEqual(geo.lookup('203.0.113.9'), {
    country: 'US', region: null, city: 'Old', asn: null, org: null, sources: ['maxmind', 'embedded'], locationSource: 'maxmind', networkSource: null,
  });
  // Lookups run between every step of 40 swaps; each answer is one database's, whole.
  let stop = false;
  const seen = new Set<string>();
  const looker = (async () => {
    while (!stop) {
      const g = geo.lookup('203.0.113.9');
      seen.add(`${g.country}/${g.city}/${g.region}`);
      await new Promise((r) => setImmediate(r));
    }
  })();
  for (let i = 0; i < 40; i++) {
    writeFileSync(`${path}.tmp`, i % 2 === 0 ? de : us);
    renameSync(`${path}.tmp`, path);
    await geo.reload('maxmind');
  }
  stop = true;
  await looker;
  assert.deepEqual([...seen].sort(), ['DE/New/Berlin', 'US/Old/null']);
  assert.equal(geo.lookup('203.0.113.9').country, 'US');
  writeFileSync(path, 'not a database');
  await geo.reload('maxmind');
  assert.equal(geo.lookup('203.0.113.9').city, 'Old', 'a broken file: the loaded database stays');
  // The fixture has no record for the low half: the embedded database answers there.
  writeFileSync(path, tinyMmdb({ low: null, high: { country: { iso_code: 'DE' } } }));
  await geo.reload('maxmind');
  assert.deepEqual([geo.lookup('8.8.8.8').country, geo.lookup('8.8.8.8').locationSource], ['US', 'embedded']);
});

test('extractMmdb: plain, gzipped and MaxMind tar.gz downloads; anything else is invalid', () => {
  const db = tinyMmdb({ low: null, high: { country_code: 'FR' } });
  assert.ok(extractMmdb(db, 1e6).equals(db));
  assert.ok(extractMmdb(tarGz({ 'COPYRIGHT.txt': Buffer.from('c'), 'GeoLite2-City.mmdb': db }), 1e6).equals(db));
  for (const bad of [Buffer.from('<html>login</html>'), tarGz({ 'README.txt': Buffer.from('no database') }), Buffer.from([0x1f, 0x8b, 1, 2, 3])]) {
    assert.throws(() => extractMmdb(bad, 1e6), (err: unknown) => err instanceof ListFetchError && err.reason === 'invalid');
  }
});
