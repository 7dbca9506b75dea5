// Threat lists through the real clustered service (WORKERS=2): FIREHOL_*_URL point at a loopback
// server; the primary downloads them at start and the workers load them. A client (named by
// X-Forwarded-For from the trusted loopback proxy) on the malicious list gets a harder challenge
// (the penalty raise of a malicious mark); one on the Tor list is counted as a tor threat event
// (THREATS_TOR_LIMIT) and in palisade_threat_list_matches_total; `threats status` shows each source.
// THREATS_ENABLED=0 downloads nothing and changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli } from '../helpers/cli.js';
import { startListServer, type ListServer } from '../helpers/list-server.js';
import { createTestKey, startService, type Service, type TestKey } from '../helpers/service.js';

const COST = 100;

async function challengeCost(svc: Service, key: TestKey, ip: string): Promise<number> {
  const res = await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`, { headers: { 'x-forwarded-for': ip } });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { parameters: { cost: number } }).parameters.cost;
}

async function metrics(svc: Service): Promise<string> {
  return (await fetch(`${svc.url}/.metrics`)).text();
}

describe('threat lists in the running service', () => {
  let lists: ListServer;
  before(async () => {
    lists = await startListServer();
    lists.routes.set('/level1.netset', { kind: 'body', body: '# level1\n203.0.113.0/24\n2001:db8:bad::/48\n' });
    lists.routes.set('/proxies.netset', { kind: 'body', body: '198.51.100.0/24\n' });
    lists.routes.set('/tor.ipset', { kind: 'body', body: '192.0.2.7\n' });
  });
  after(async () => { await lists.close(); });

  const env = (extra: Record<string, string> = {}) => ({
    THREATS_ENABLED: '1', X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32', THREATS_TOR_LIMIT: '100/1m',
    FIREHOL_LEVEL1_URL: `${lists.url}/level1.netset`, FIREHOL_PROXIES_URL: `${lists.url}/proxies.netset`,
    FIREHOL_TOR_EXITS_URL: `${lists.url}/tor.ipset`, ...extra,
  });

  test('listed clients: malicious raises the challenge cost, tor is a threat event; CLI status', async () => {
    const svc = await startService({ env: env() });
    try {
      const key = await createTestKey(svc, { challengePolicy: { algorithm: 'SHA-256', mode: 'probabilistic', cost: COST, maxCost: 100_000, keyPrefixLength: 1 } });
      // The primary downloads at start (no list on disk yet) and the workers reload: wait for it.
      const deadline = Date.now() + 20_000;
      let listed = 0;
      while (Date.now() < deadline) {
        listed = await challengeCost(svc, key, '203.0.113.9');
        if (listed > COST) break;
        await sleep(100);
      }
      // Penalty 16 (a malicious mark's raise): cost × (1 + 16). Both workers answer alike.
      for (let i = 0; i < 4; i++) assert.equal(await challengeCost(svc, key, '203.0.113.9'), COST * 17);
      assert.equal(await challengeCost(svc, key, '2001:db8:bad::1'), COST * 17);
      assert.equal(await challengeCost(svc, key, '203.0.114.1'), COST, 'one above the /24: not listed');
      assert.equal(await challengeCost(svc, key, '192.0.2.7'), COST, 'tor: counted, no raise without a mark');
      assert.equal(await challengeCost(svc, key, '198.51.100.1'), COST, 'proxy without THREATS_PROXY_LIMIT: no raise');
      const text = await metrics(svc);
      assert.match(text, /palisade_threat_events_total\{kind="tor"\} 1\b/);
      assert.match(text, /palisade_threat_list_matches_total\{kind="tor"\} 1\b/);
      assert.match(text, /palisade_threat_list_matches_total\{kind="proxy"\} 1\b/);
      assert.match(text, /palisade_list_entries\{list="firehol_level1"\} 2\b/);
      assert.match(text, /palisade_list_entries\{list="tor_exits"\} 1\b/);

      const cliEnv = { ...svc.env, DATA_DIR: svc.dataDir };
      const human = await runCli(['threats', 'status'], cliEnv);
      assert.equal(human.code, 0, human.err);
      assert.match(human.out, /firehol_level1 \(malicious\)\n {2}url: {9}http:\/\/127\.0\.0\.1:\d+\/level1\.netset\n/);
      assert.match(human.out, /tor_exits \(tor\)[\s\S]*entries: {5}1\n {2}last update: \d{4}-/);
      const json = await runCli(['--json', 'threats', 'status'], cliEnv);
      assert.equal(json.code, 0, json.err);
      const report = JSON.parse(json.out) as { enabled: boolean; sources: { name: string; kind: string; entries: number; lastUpdate: string | null; nextRun: string | null; lastError: unknown }[] };
      assert.equal(report.enabled, true);
      assert.deepEqual(report.sources.map((s) => [s.name, s.kind, s.entries, s.lastError]), [
        ['firehol_level1', 'malicious', 2, null], ['firehol_proxies', 'proxy', 1, null], ['tor_exits', 'tor', 1, null],
      ]);
      for (const s of report.sources) {
        assert.ok(s.lastUpdate !== null && s.nextRun !== null && Date.parse(s.nextRun) > Date.now());
      }
    } finally {
      await svc.stop();
    }
  });

  test('THREATS_ENABLED=0: nothing downloaded, nothing raised', async () => {
    const before = lists.hits.get('/level1.netset') ?? 0;
    const svc = await startService({ env: env({ THREATS_ENABLED: '0' }) });
    try {
      const key = await createTestKey(svc, { challengePolicy: { algorithm: 'SHA-256', mode: 'probabilistic', cost: COST, maxCost: 100_000, keyPrefixLength: 1 } });
      await sleep(500);
      assert.equal(await challengeCost(svc, key, '203.0.113.9'), COST);
      assert.equal(lists.hits.get('/level1.netset') ?? 0, before);
      const status = await runCli(['threats', 'status'], { ...svc.env, DATA_DIR: svc.dataDir });
      assert.equal(status.out.trim(), 'threat lists: off (THREATS_ENABLED=0)');
    } finally {
      await svc.stop();
    }
  });
});
