// IP intelligence in what a verification signs and in the request log, through the real clustered
// service: clients named by X-Forwarded-For from the trusted loopback proxy, a MaxMind database
// (128.0.0.0/1 in Germany) and two threat lists (malicious, proxy) served by a loopback server.
//   A listed client's verificationData carries location.countryCode, location.highRiskCountry and
//   threats.<kind>=<source>, and altcha-lib verifies the signature; a clean client's carries its
//   country and no threats.* names at all; trusted x-ip-* headers sign as source 'header'. The
//   request-log rows of challenge and verify keep the country and the threat kinds.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyServerSignature } from 'altcha-lib';
import { startListServer, type ListServer } from '../helpers/list-server.js';
import { tarGz, tinyMmdb } from '../helpers/mmdb.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { createTestKey, startService, withServiceDb, type Service, type TestKey } from '../helpers/service.js';

const SECRET = 'lb-secret-0123456789';
const POLICY = { algorithm: 'SHA-256', mode: 'probabilistic', cost: 20, maxCost: 1000, keyPrefixLength: 1 };
const LISTED = '203.0.113.9'; // malicious and proxy lists; Germany (the MaxMind fixture)
const CLEAN = '8.8.8.8'; // no list; United States (the embedded database)

interface Verified { verified: boolean; payload: string; verificationData: string }

async function verifyAs(svc: Service, key: TestKey, ip: string, headers: Record<string, string> = {}): Promise<Verified> {
  const ch = await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`, { headers: { 'x-forwarded-for': ip, ...headers } });
  assert.equal(ch.status, 200, await ch.clone().text());
  const { payload } = await solveV2(await ch.text());
  const res = await fetch(`${svc.url}/v1/verify?apiKey=${key.id}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, ...headers }, body: JSON.stringify({ payload }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as Verified;
  assert.equal(body.verified, true, JSON.stringify(body));
  return body;
}

/** verificationData's names that come from IP intelligence, with their values. */
function intelNames(verificationData: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(verificationData)) if (k.startsWith('location.') || k.startsWith('threats.')) out[k] = v;
  return out;
}

async function altchaVerifies(body: Verified, secret: string): Promise<Record<string, unknown>> {
  const decoded = JSON.parse(Buffer.from(body.payload, 'base64').toString('utf8')) as never;
  const checked = await verifyServerSignature({ payload: decoded, hmacSecret: secret });
  assert.equal(checked.verified, true);
  return checked.verificationData as Record<string, unknown>;
}

describe('IP intelligence in verificationData and the request log', () => {
  let lists: ListServer;
  let svc: Service;
  let key: TestKey;
  before(async () => {
    lists = await startListServer();
    const city = tinyMmdb({ low: null, high: { country: { iso_code: 'DE' } } });
    lists.routes.set('/GeoLite2-City.tar.gz', { kind: 'body', body: tarGz({ 'GeoLite2-City.mmdb': city }) });
    lists.routes.set('/level1.netset', { kind: 'body', body: '203.0.113.0/24\n' });
    lists.routes.set('/proxies.netset', { kind: 'body', body: '203.0.113.9\n198.51.100.0/24\n' });
    svc = await startService({
      env: {
        WORKERS: '2', THREATS_ENABLED: '1', X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32', IP_HEADERS_SECRET: SECRET,
        FIREHOL_LEVEL1_URL: `${lists.url}/level1.netset`, FIREHOL_PROXIES_URL: `${lists.url}/proxies.netset`,
        MAXMIND_DOWNLOAD_URL: `${lists.url}/GeoLite2-City.tar.gz`, HIGH_RISK_COUNTRIES: 'de', ANONYMIZE_IP_ADDRESS: '0',
      },
    });
    key = await createTestKey(svc, { challengePolicy: POLICY });
    // The primary downloads at start and the workers reload: wait until every worker has everything.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const views = await Promise.all([1, 2, 3, 4].map(async () => {
        const res = await fetch(`${svc.url}/v1/inspect?apiKey=${key.id}`, { headers: { 'x-forwarded-for': LISTED } });
        return (await res.json()) as { location: { source: string }; threats: { lists: string[] } };
      }));
      if (views.every((v) => v.location.source === 'maxmind' && v.threats.lists.length === 2)) break;
      assert.ok(Date.now() < deadline, `lists not loaded: ${JSON.stringify(views)}`);
      await sleep(100);
    }
  });
  after(async () => {
    await svc?.stop();
    await lists?.close();
  });

  test('a listed client: its country, the high-risk rule and each threat kind with its source are signed', async () => {
    const body = await verifyAs(svc, key, LISTED);
    assert.deepEqual(intelNames(body.verificationData), {
      'location.countryCode': 'DE', 'location.highRiskCountry': 'true',
      'threats.malicious': 'firehol_level1', 'threats.proxy': 'firehol_proxies',
    });
    // Names in sorted order, as the general writer gives them.
    const names = [...new URLSearchParams(body.verificationData).keys()];
    assert.deepEqual(names, [...names].sort());
    const data = await altchaVerifies(body, key.secret);
    assert.equal(data['location.countryCode'], 'DE');
    assert.equal(data['threats.malicious'], 'firehol_level1');
    // POST /v1/verify/signature nests the dotted names.
    const online = await fetch(`${svc.url}/v1/verify/signature`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payload: body.payload, secret: key.secret }),
    });
    const checked = (await online.json()) as { verified: boolean; verificationData: { location: unknown; threats: unknown } };
    assert.equal(checked.verified, true);
    assert.deepEqual({ ...checked.verificationData.location as object }, { countryCode: 'DE', highRiskCountry: true });
    assert.deepEqual({ ...checked.verificationData.threats as object }, { malicious: 'firehol_level1', proxy: 'firehol_proxies' });
  });

  test('a clean client: its country only, no threats.* names and no high-risk flag', async () => {
    const body = await verifyAs(svc, key, CLEAN);
    assert.deepEqual(intelNames(body.verificationData), { 'location.countryCode': 'US' });
    assert.equal((await altchaVerifies(body, key.secret))['location.countryCode'], 'US');
    // An address no database locates carries no location.* either.
    const unknown = await verifyAs(svc, key, '10.1.2.3');
    assert.deepEqual(intelNames(unknown.verificationData), {});
  });

  test('trusted x-ip-* headers are signed with source "header" and win over the lists', async () => {
    const headers = { 'x-ip-headers-secret': SECRET, 'x-ip-country-code': 'FR', 'x-ip-tor': '?1', 'x-ip-proxy': '?0' };
    const body = await verifyAs(svc, key, LISTED, headers);
    assert.deepEqual(intelNames(body.verificationData), {
      'location.countryCode': 'FR', 'threats.malicious': 'firehol_level1', 'threats.tor': 'header',
    });
    await altchaVerifies(body, key.secret);
    // Without the secret the headers count for nothing.
    const untrusted = await verifyAs(svc, key, CLEAN, { 'x-ip-country-code': 'FR', 'x-ip-tor': '?1' });
    assert.deepEqual(intelNames(untrusted.verificationData), { 'location.countryCode': 'US' });
  });

  test('request-log rows keep the country and the threat kinds', async () => {
    const logKey = await createTestKey(svc, { challengePolicy: POLICY });
    await verifyAs(svc, logKey, LISTED);
    await verifyAs(svc, logKey, CLEAN);
    const deadline = Date.now() + 10_000;
    let rows: { ip: string; path: string; country: string | null; threats: string | null }[] = [];
    while (rows.length < 4) {
      assert.ok(Date.now() < deadline, `request logs not written: ${JSON.stringify(rows)}`);
      await sleep(200);
      rows = await withServiceDb(svc, (sql) => sql<typeof rows>`
        select ip, path, country, threats from request_logs where api_key_id = ${logKey.id} order by ip, path`);
    }
    assert.deepEqual(rows.map((r) => ({ ...r })), [
      { ip: LISTED, path: '/v1/challenge', country: 'DE', threats: 'malicious,proxy' },
      { ip: LISTED, path: '/v1/verify', country: 'DE', threats: 'malicious,proxy' },
      { ip: CLEAN, path: '/v1/challenge', country: 'US', threats: null },
      { ip: CLEAN, path: '/v1/verify', country: 'US', threats: null },
    ]);
  });
});
