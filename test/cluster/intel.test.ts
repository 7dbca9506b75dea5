// IP intelligence through the real clustered service (WORKERS=2), clients named by X-Forwarded-For
// from the trusted loopback proxy; a MaxMind database (a .tar.gz of a hand-built MMDB), a threat
// list and a user-agent list are served by a loopback server and downloaded by the primary.
//   GET /v1/inspect: location and its source, flags and the source that set them, trusted x-ip-*
//   headers (a wrong secret changes nothing), user-agent verdict and commonness, penalty.
//   HIGH_RISK_COUNTRIES and a key's expectedCountries raise the challenge's cost; its
//   blockedCountries refuse challenge and verify with 403 COUNTRY_BLOCKED; a declared bot counts
//   as a bot threat event. Bad input gets {error, statusCode}; INSPECT_ROUTE_ENABLED=0 gives 404.
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startListServer, type ListServer } from '../helpers/list-server.js';
import { tarGz, tinyMmdb } from '../helpers/mmdb.js';
import { createTestKey, startService, type Service, type TestKey } from '../helpers/service.js';

const COST = 100;
const SECRET = 'lb-secret-0123456789';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const POLICY = { algorithm: 'SHA-256', mode: 'probabilistic', cost: COST, maxCost: 100_000, keyPrefixLength: 1 };

interface Inspect {
  ip: string; ipAnonymized: boolean;
  location: { country: string | null; region: string | null; city: string | null; latitude: number | null; longitude: number | null; highRiskCountry: boolean; source: string | null };
  network: { asn: number | null; organization: string | null; source: string | null };
  flags: Record<'hosting' | 'proxy' | 'tor' | 'malicious' | 'mobile', { value: boolean; source: string | null }>;
  headersTrusted: boolean;
  userAgent: { kind: string; browser: string | null; device: string; commonness: string; share: number | null; rank: number | null };
  deviceKey: string; penalty: number; score: number;
  threats: { marks: string[]; lists: string[] };
  key: { countryBlocked: boolean; unexpectedCountry: boolean };
}

async function inspect(svc: Service, key: TestKey, ip: string, headers: Record<string, string> = {}): Promise<Inspect> {
  const res = await fetch(`${svc.url}/v1/inspect?apiKey=${key.id}`, { headers: { 'x-forwarded-for': ip, 'user-agent': CHROME, ...headers } });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as Inspect;
}

async function challenge(svc: Service, key: TestKey, ip: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`, { headers: { 'x-forwarded-for': ip, 'user-agent': CHROME, ...headers } });
}

async function cost(svc: Service, key: TestKey, ip: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await challenge(svc, key, ip, headers);
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { parameters: { cost: number } }).parameters.cost;
}

describe('IP intelligence in the running service', () => {
  let lists: ListServer;
  let svc: Service;
  let key: TestKey;
  before(async () => {
    lists = await startListServer();
    // 0.0.0.0/1 has no record (the embedded database answers); 128.0.0.0/1 is in Germany.
    const city = tinyMmdb({ low: null, high: { country: { iso_code: 'DE' }, city: { names: { en: 'Testville' } }, subdivisions: [{ names: { en: 'Testland' } }] } });
    lists.routes.set('/maxmind', { kind: 'body', status: 302, body: '', headers: { location: '/storage/GeoLite2-City.tar.gz' } });
    lists.routes.set('/storage/GeoLite2-City.tar.gz', { kind: 'body', body: tarGz({ 'GeoLite2-City.mmdb': city }) });
    lists.routes.set('/level1.netset', { kind: 'body', body: '203.0.113.0/24\n' });
    lists.routes.set('/ua.json.gz', { kind: 'body', body: gzipSync(JSON.stringify([{ userAgent: 'Rare/1.0', weight: 0.1 }, { userAgent: CHROME, weight: 0.9, deviceCategory: 'desktop' }])) });
    svc = await startService({
      env: {
        THREATS_ENABLED: '1', X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32', IP_HEADERS_SECRET: SECRET, THREATS_BOT_LIMIT: '100/1m',
        FIREHOL_LEVEL1_URL: `${lists.url}/level1.netset`, MAXMIND_DOWNLOAD_URL: `${lists.url}/maxmind`,
        USER_AGENT_LIST_URL: `${lists.url}/ua.json.gz`, ANONYMIZE_IP_ADDRESS: '0',
      },
    });
    key = await createTestKey(svc, { challengePolicy: POLICY });
    // The primary downloads at start and the workers reload: wait until both have everything.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const views = await Promise.all([1, 2, 3, 4].map(() => inspect(svc, key, '203.0.113.9')));
      if (views.every((v) => v.location.city === 'Testville' && v.flags.malicious.value && v.userAgent.commonness === 'common')) break;
      await sleep(100);
    }
  });
  after(async () => {
    await svc?.stop();
    await lists.close();
  });

  test('inspect: location, network, list flags and the user agent, from the databases and lists', async () => {
    const listed = await inspect(svc, key, '203.0.113.9');
    assert.equal(listed.ip, '203.0.113.9');
    assert.equal(listed.ipAnonymized, false);
    assert.deepEqual(listed.location, { country: 'DE', region: 'Testland', city: 'Testville', latitude: null, longitude: null, highRiskCountry: false, source: 'maxmind' });
    assert.deepEqual(listed.flags.malicious, { value: true, source: 'firehol_level1' });
    assert.deepEqual(listed.flags.proxy, { value: false, source: null });
    assert.deepEqual(listed.threats, { marks: [], lists: ['firehol_level1'] });
    assert.equal(listed.headersTrusted, false);
    assert.deepEqual(listed.userAgent, { kind: 'browser', browser: 'chrome', device: 'desktop', commonness: 'common', share: 0.9, rank: 1 });
    assert.match(listed.deviceKey, /^[0-9a-f]{64}$/);
    assert.equal(listed.penalty, 16, 'a malicious listing raises as a malicious mark does');
    assert.equal(listed.key.countryBlocked, false);

    const google = await inspect(svc, key, '8.8.8.8', { 'user-agent': GOOGLEBOT });
    assert.deepEqual(google.location, { country: 'US', region: null, city: null, latitude: null, longitude: null, highRiskCountry: false, source: 'embedded' });
    assert.deepEqual(google.network, { asn: null, organization: null, source: null }, 'GEO_EMBEDDED_ASN=0 and no ASN in the fixture');
    assert.deepEqual(google.userAgent, { kind: 'bot', browser: null, device: 'bot', commonness: 'uncommon', share: null, rank: null });
    assert.equal(google.penalty, 0);
    const v6 = await inspect(svc, key, '2001:4860:4860::8888');
    assert.equal(v6.location.country, 'US');
  });

  test('trusted x-ip-* headers win over databases and lists; a wrong or missing secret changes nothing', async () => {
    const headers = {
      'x-ip-country-code': 'ir', 'x-ip-city': 'Tehran', 'x-ip-lat': '35.69', 'x-ip-lon': '51.39', 'x-ip-hosting': '?1', 'x-ip-proxy': '?1',
      'x-ip-tor': '?1', 'x-ip-malicious': '?0', 'x-ip-mobile': '?1',
    };
    const trusted = await inspect(svc, key, '203.0.113.9', { ...headers, 'x-ip-headers-secret': SECRET });
    assert.equal(trusted.headersTrusted, true);
    assert.deepEqual(trusted.location, { country: 'IR', region: null, city: 'Tehran', latitude: 35.69, longitude: 51.39, highRiskCountry: true, source: 'header' });
    for (const f of ['hosting', 'proxy', 'tor', 'mobile'] as const) assert.deepEqual(trusted.flags[f], { value: true, source: 'header' }, f);
    assert.deepEqual(trusted.flags.malicious, { value: false, source: 'header' });
    // Sentinel's header name for the secret works too.
    assert.equal((await inspect(svc, key, '203.0.113.9', { ...headers, 'x-ip-secret': SECRET })).location.country, 'IR');
    for (const wrong of [{ 'x-ip-headers-secret': `${SECRET}x` }, { 'x-ip-headers-secret': '' }, {}] as Record<string, string>[]) {
      const v = await inspect(svc, key, '203.0.113.9', { ...headers, ...wrong });
      assert.equal(v.headersTrusted, false);
      assert.deepEqual([v.location.country, v.location.source, v.flags.hosting.value, v.flags.proxy.value, v.flags.malicious.source], ['DE', 'maxmind', false, false, 'firehol_level1']);
    }
  });

  test('HIGH_RISK_COUNTRIES and a trusted hosting flag raise the challenge cost by 1 each', async () => {
    assert.equal(await cost(svc, key, '8.8.4.4'), COST);
    // 77.88.8.8 (Yandex DNS) is in Russia in the embedded database.
    assert.equal(await cost(svc, key, '77.88.8.8'), COST * 2);
    assert.equal(await cost(svc, key, '8.8.4.4', { 'x-ip-country-code': 'KP', 'x-ip-headers-secret': SECRET }), COST * 2);
    assert.equal(await cost(svc, key, '8.8.4.4', { 'x-ip-country-code': 'KP', 'x-ip-hosting': '?1', 'x-ip-headers-secret': SECRET }), COST * 3);
    assert.equal(await cost(svc, key, '8.8.4.4', { 'x-ip-country-code': 'KP', 'x-ip-hosting': '?1', 'x-ip-headers-secret': 'wrong' }), COST);
  });

  test("a key's blockedCountries refuse challenge and verify; expectedCountries raise the cost", async () => {
    const eu = await createTestKey(svc, { challengePolicy: { ...POLICY, blockedCountries: ['list:eu', 'kp'] } });
    for (const [ip, h] of [['203.0.113.9', {}], ['8.8.4.4', { 'x-ip-country-code': 'KP', 'x-ip-headers-secret': SECRET }]] as const) {
      const res = await challenge(svc, eu, ip, h);
      assert.equal(res.status, 403);
      assert.deepEqual(await res.json(), { error: 'COUNTRY_BLOCKED', statusCode: 403 });
    }
    const verify = await fetch(`${svc.url}/v1/verify?apiKey=${eu.id}`, {
      method: 'POST', headers: { 'x-forwarded-for': '203.0.113.9', 'content-type': 'application/json' }, body: JSON.stringify({ payload: 'x' }),
    });
    assert.equal(verify.status, 403);
    assert.equal(((await verify.json()) as { error: string }).error, 'COUNTRY_BLOCKED');
    assert.equal(await cost(svc, eu, '8.8.4.4'), COST, 'US is not blocked');
    assert.equal((await inspect(svc, eu, '203.0.113.9')).key.countryBlocked, true);

    const us = await createTestKey(svc, { challengePolicy: { ...POLICY, expectedCountries: ['us'] } });
    assert.equal(await cost(svc, us, '8.8.4.4'), COST);
    assert.equal(await cost(svc, us, '1.1.1.1'), COST * 2, 'AU is not expected');
    assert.equal((await inspect(svc, us, '1.1.1.1')).key.unexpectedCountry, true);
  });

  test('a declared bot counts as a bot threat event', async () => {
    await cost(svc, key, '8.8.4.4', { 'user-agent': GOOGLEBOT });
    const text = await (await fetch(`${svc.url}/.metrics`)).text();
    assert.match(text, /palisade_threat_events_total\{kind="bot"\} [1-9]/);
  });

  test('bad input on /v1/inspect gets {error, statusCode}', async () => {
    const missing = await fetch(`${svc.url}/v1/inspect`);
    assert.equal(missing.status, 401);
    assert.deepEqual(await missing.json(), { error: 'API_KEY_REQUIRED', statusCode: 401 });
    const invalid = await fetch(`${svc.url}/v1/inspect?apiKey=key_nope`);
    assert.equal(invalid.status, 401);
    assert.deepEqual(await invalid.json(), { error: 'API_KEY_INVALID', statusCode: 401 });
    const hostile = await inspect(svc, key, '8.8.4.4', {
      'x-ip-headers-secret': SECRET, 'x-ip-country-code': '<script>', 'x-ip-lat': 'NaN', 'x-ip-lon': '1e309', 'x-ip-city': 'x'.repeat(500),
      'x-ip-region': '   ', 'x-ip-proxy': 'yes please', 'user-agent': '\u00ff'.repeat(2000),
    });
    assert.deepEqual(hostile.location, { country: 'US', region: null, city: null, latitude: null, longitude: null, highRiskCountry: false, source: 'embedded' });
    assert.deepEqual(hostile.flags.proxy, { value: false, source: null });
    const spoofed = await fetch(`${svc.url}/v1/inspect?apiKey=${key.id}`, { headers: { 'x-forwarded-for': 'not-an-ip' } });
    assert.equal(spoofed.status, 200);
    const body = (await spoofed.json()) as Inspect;
    assert.deepEqual([body.ip, body.location.country], ['unknown', null]);
  });
});

test('INSPECT_ROUTE_ENABLED=0: GET /v1/inspect is 404', async () => {
  const svc = await startService({ env: { INSPECT_ROUTE_ENABLED: '0' } });
  try {
    const key = await createTestKey(svc);
    const res = await fetch(`${svc.url}/v1/inspect?apiKey=${key.id}`);
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'NOT_FOUND', statusCode: 404 });
  } finally {
    await svc.stop();
  }
});
