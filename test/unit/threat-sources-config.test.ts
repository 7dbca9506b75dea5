// The threat-list variables: FireHOL defaults, THREATS_SOURCES syntax (kind[:name]=url[|schedule]),
// name clashes, bad kinds and schedules reported as configuration problems, THREATS_INDEX_STORE=sqlite
// refused, and NO_PROXY matching.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { threatSources } from '../../src/intel/threat-sources.js';
import { bypassesProxy } from '../../src/lists/outbound.js';

const load = (env: Record<string, string>) =>
  loadConfig({ env: { DATA_DIR: mkdtempSync(join(tmpdir(), 'palisade-cfg-')), ...env }, persistSecrets: true, detectedCpus: 1 });

function problems(env: Record<string, string>): readonly string[] {
  try {
    load(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

test('defaults: the three FireHOL sources with their schedules', () => {
  const sources = threatSources(load({}));
  assert.deepEqual(sources.map((s) => [s.name, s.kind, s.url, s.schedule]), [
    ['firehol_level1', 'malicious', 'https://raw.githubusercontent.com/firehol/blocklist-ipsets/master/firehol_level1.netset', '10 */6 * * *'],
    ['firehol_proxies', 'proxy', 'https://raw.githubusercontent.com/firehol/blocklist-ipsets/master/firehol_proxies.netset', '20 */6 * * *'],
    ['tor_exits', 'tor', 'https://raw.githubusercontent.com/firehol/blocklist-ipsets/master/tor_exits.ipset', '30 * * * *'],
  ]);
});

test('THREATS_SOURCES entries, names and schedules; empty FireHOL URLs disable them', () => {
  const config = load({
    FIREHOL_LEVEL1_URL: '', FIREHOL_PROXIES_URL: '', FIREHOL_TOR_EXITS_URL: '',
    THREATS_SOURCES: 'bot=https://example.org/lists/botscout_30d.ipset|0 3 * * *;\n malicious:drop=https://example.org/x/spamhaus_drop.netset ; proxy=http://example.org/p.txt|*/10 * * * * *',
  });
  assert.deepEqual(threatSources(config).map((s) => [s.name, s.kind, s.schedule]), [
    ['botscout_30d', 'bot', '0 3 * * *'], ['drop', 'malicious', '25 */6 * * *'], ['p', 'proxy', '*/10 * * * * *'],
  ]);
});

test('bad sources, clashing names, bad schedules and sqlite are configuration problems', () => {
  assert.match(problems({ THREATS_SOURCES: 'spam=https://example.org/a.txt' }).join('\n'), /THREATS_SOURCES: "spam" is not one of malicious, proxy, tor, bot/);
  assert.match(problems({ THREATS_SOURCES: 'bot=ftp://example.org/a.txt' }).join('\n'), /only http and https/);
  assert.match(problems({ THREATS_SOURCES: 'bot:a=https://x.org/1;tor:a=https://x.org/2' }).join('\n'), /two sources are named a/);
  assert.match(problems({ THREATS_SOURCES: 'tor:tor_exits=https://x.org/t' }).join('\n'), /the name tor_exits is taken/);
  assert.match(problems({ THREATS_SOURCES: 'bot=https://x.org/a|61 * * * *' }).join('\n'), /THREATS_SOURCES/);
  assert.match(problems({ FIREHOL_TOR_EXITS_SCHEDULE: 'hourly' }).join('\n'), /FIREHOL_TOR_EXITS_SCHEDULE: "hourly" is not a cron pattern/);
  assert.deepEqual(problems({ THREATS_INDEX_STORE: 'sqlite' }), ['THREATS_INDEX_STORE: sqlite is not implemented yet; use auto or memory']);
  assert.deepEqual(problems({ THREATS_INDEX_STORE: 'memory' }), []);
});

test('NO_PROXY: hosts, subdomains, ports, IPs and *', () => {
  const u = (s: string) => new URL(s);
  assert.equal(bypassesProxy(u('https://raw.example.com/x'), ['example.com']), true);
  assert.equal(bypassesProxy(u('https://example.com/x'), ['.example.com']), true);
  assert.equal(bypassesProxy(u('https://notexample.com/x'), ['example.com']), false);
  assert.equal(bypassesProxy(u('http://127.0.0.1:8080/x'), ['127.0.0.1:8080']), true);
  assert.equal(bypassesProxy(u('http://127.0.0.1:8081/x'), ['127.0.0.1:8080']), false);
  assert.equal(bypassesProxy(u('http://[::1]:80/x'), ['::1']), true);
  assert.equal(bypassesProxy(u('http://anything.org/'), ['*']), true);
  assert.equal(bypassesProxy(u('http://anything.org/'), []), false);
});
