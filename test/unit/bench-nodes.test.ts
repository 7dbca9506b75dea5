// The S3n scenario's Redis accounting (bench/lib/redis-window.ts): INFO read into a snapshot, the
// nodes' count files summed, and the window's figures per verification, INFO (the nodes' memory
// check and the runner's own snapshots) left out; and its section of bench/README.md.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { NodesArmResult, NodesResult, NodesRun } from '../../bench/lib/nodes.js';
import { medianPerVerification } from '../../bench/lib/nodes.js';
import { renderSection, renderSummary, type NodesFile } from '../../bench/lib/report.js';
import { parseInfo, perVerification, readClientCounts, redisWindow, type PerVerification } from '../../bench/lib/redis-window.js';

const INFO = [
  '# Stats', 'total_connections_received:12', 'total_commands_processed:5000', 'total_reads_processed:1200', '',
  '# CPU', 'used_cpu_sys:1.250000', 'used_cpu_user:0.750500', '',
  '# Memory', 'used_memory:2000000', 'used_memory_human:1.91M', '',
  '# Commandstats',
  'cmdstat_set:calls=3000,usec=9000,usec_per_call=3.00,rejected_calls=0,failed_calls=0',
  'cmdstat_config|get:calls=2,usec=10,usec_per_call=5.00,rejected_calls=0,failed_calls=0',
  'cmdstat_evalsha:calls=40,usec=800,usec_per_call=20.00,rejected_calls=0,failed_calls=0',
  '', '# Keyspace', 'db0:keys=900,expires=900,avg_ttl=1000', 'db15:keys=100,expires=0,avg_ttl=0',
].join('\r\n');

test('bench nodes: INFO becomes a snapshot: calls per command (subcommands too), reads, CPU in ms, memory, keys of every database', () => {
  assert.deepEqual(parseInfo(INFO), {
    executed: { set: 3000, 'config|get': 2, evalsha: 40 }, reads: 1200, cpuMs: 2000.5, usedMemory: 2_000_000, keys: 1000,
  });
  assert.throws(() => parseInfo('# Commandstats\r\n'), /INFO has no total_reads_processed/);
});

test('bench nodes: the count files of every process of the nodes are summed; a half-written temporary file is not read', () => {
  const root = mkdtempSync(join(tmpdir(), 'pb-count-test-'));
  try {
    mkdirSync(join(root, 'a'));
    mkdirSync(join(root, 'b'));
    writeFileSync(join(root, 'a', '10.json'), JSON.stringify({ pid: 10, commands: { palisadeClaims: 5, info: 2 }, turns: 6 }));
    writeFileSync(join(root, 'a', '11.json'), JSON.stringify({ pid: 11, commands: { palisadeClaims: 1, mget: 4 }, turns: 3 }));
    writeFileSync(join(root, 'b', '12.json'), JSON.stringify({ pid: 12, commands: { set: 7 }, turns: 7 }));
    writeFileSync(join(root, 'b', '12.json.tmp'), '{"pid":12,"comm');
    assert.deepEqual(readClientCounts([join(root, 'a'), join(root, 'b'), join(root, 'missing')]), {
      requests: { palisadeClaims: 6, info: 2, mget: 4, set: 7 }, turns: 16,
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('bench nodes: a window per verification leaves INFO out and counts the commands scripts run', () => {
  const before = {
    redis: { executed: { set: 100, get: 50, evalsha: 10, info: 5 }, reads: 1000, cpuMs: 500, usedMemory: 1_000_000, keys: 40 },
    client: { requests: { palisadeClaims: 4, palisadeHits: 6, info: 5 }, turns: 9 },
  };
  const after = {
    redis: { executed: { set: 2100, get: 1050, evalsha: 30, info: 9, time: 10 }, reads: 1040, cpuMs: 530, usedMemory: 1_128_000, keys: 1040 },
    client: { requests: { palisadeClaims: 14, palisadeHits: 16, info: 9, mget: 10 }, turns: 39 },
  };
  const w = redisWindow(before, after, 1000);
  assert.deepEqual(w, {
    verifications: 1000, executed: { set: 2000, get: 1000, evalsha: 20, info: 4, time: 10 },
    requests: { palisadeClaims: 10, palisadeHits: 10, info: 4, mget: 10 }, turns: 30, reads: 40, cpuMs: 30, memoryBytes: 128_000, keys: 1000,
  });
  assert.deepEqual(perVerification(w), {
    executed: 3.03, executedBy: { set: 2, get: 1, evalsha: 0.02, time: 0.01 },
    requests: 0.03, requestsBy: { palisadeClaims: 0.01, palisadeHits: 0.01, mget: 0.01 },
    roundTrips: 0.03, reads: 0.04, redisCpuUs: 30, bytesPerKey: 128,
  });
  assert.equal(perVerification({ ...w, verifications: 0 }), null);
  assert.equal(perVerification({ ...w, keys: 0 })!.bytesPerKey, null);
});

const per = (executed: number, requests: number, redisCpuUs: number, by: Record<string, number>): PerVerification => ({
  executed, executedBy: by, requests, requestsBy: by, roundTrips: requests, reads: requests, redisCpuUs, bytesPerKey: 128,
});

test('bench nodes: the medians over runs take a command missing from a run as 0 there', () => {
  const m = medianPerVerification([per(3, 0.2, 15, { set: 2, mget: 0.1 }), per(4, 0.3, 20, { set: 2 }), per(5, 0.4, 10, { set: 2, mget: 0.3 })]);
  assert.deepEqual(m, {
    executed: 4, executedBy: { mget: 0.1, set: 2 }, requests: 0.3, requestsBy: { mget: 0.1, set: 2 }, roundTrips: 0.3, reads: 0.3, redisCpuUs: 15, bytesPerKey: 128,
  });
});

function arm(id: string, nodes: number, workersPerNode: number, rps: number, perNodeRps: number[], redis: PerVerification): NodesArmResult {
  const run = { perVerification: redis } as unknown as NodesRun;
  return { id, nodes, workersPerNode, runs: [run], rps, perNodeRps, serverCpuUs: 70, redis, troubled: 0 };
}

const machine = { cpuModel: 'AMD EPYC', cores: 2, cpuFlags: ['sha_ni'], memoryMb: 24_106, node: 'v20.20.2', os: 'linux' };
const options = {
  generator: 'autocannon 8.0.0', quick: false, durationS: 10, warmupS: 2, runs: 3, connections: 100, loadWorkers: 1, workers: 2,
};

test('bench report: S3n gives each arm per node and in all, the ratios, and the Redis figures per verification; the summary leaves it out', () => {
  const full = per(3.2849, 0.2312, 15.04, { set: 2, get: 1.0035, mget: 0.11 });
  const result: NodesResult = {
    id: 'S3n', title: 'POST /v1/verify, two nodes sharing Redis beside one node', skipped: null, loadBefore: [1.5], loadAfter: [2],
    redisVersion: '7.0.15',
    arms: [arm('1×2', 1, 2, 12_000, [12_000], full), arm('2×1', 2, 1, 11_000, [5_600, 5_400], full), arm('1×1', 1, 1, 8_000, [8_000], full)],
    fixedRate: { ...arm('2×1', 2, 1, 2_000, [1_000, 1_000], per(6.83, 3.57, 84.2, { set: 2, mget: 1.185 })), ratePerNode: 1000, paced: { p50: 0.87, p99: 11.561 } },
    ratios: { split: 0.92, added: 1.38, perNodeAdded: 0.69 },
    checks: [],
  };
  const file: NodesFile = { kind: 'nodes', date: '2026-11-28T09:00:00.000Z', machine, options, result };
  const lines = renderSection(new Map([['S3n', file]])).split('\n');
  const at = lines.indexOf('### S3n: POST /v1/verify, two nodes sharing Redis beside one node');
  assert.notEqual(at, -1);
  assert.deepEqual(lines.slice(at + 4, at + 11), [
    '| nodes × workers | verifications/s (median) | per node (median run) | ÷ 1 × 2 | server CPU per verification (µs) | Redis commands executed per verification | requests per verification | round trips per verification | Redis CPU per verification (µs) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    '| 1 × 2 | 12,000 | 12,000 | 1 | 70 | 3.28 | 0.23 | 0.23 | 15.0 |',
    '| 2 × 1 | 11,000 | 5,600 + 5,400 | 0.92 | 70 | 3.28 | 0.23 | 0.23 | 15.0 |',
    '| 1 × 1 | 8,000 | 8,000 | 0.67 | 70 | 3.28 | 0.23 | 0.23 | 15.0 |',
    '| 2 × 1 at 1,000/s per node (paced) | 2,000 | 1,000 + 1,000 | — | 70 | 6.83 | 3.57 | 3.57 | 84.2 |',
    '',
  ]);
  assert.ok(lines.includes('Two nodes ÷ one node of as many workers in all (2 × 1 ÷ 1 × 2): 0.92; two nodes ÷ one of them alone (2 × 1 ÷ 1 × 1): 1.38 in all, 0.69 per node.'));
  assert.ok(lines.includes('Requests the nodes sent per verification (a script by its name, sent as one EVALSHA), two nodes: ' +
    'at full speed set 2, get 1.004, mget 0.11; at 1,000/s per node set 2, mget 1.185.'));
  assert.ok(lines.some((l) => l.endsWith('Paced latency at 1,000/s per node, p50 / p99: 0.87 / 11.56 ms. Redis memory per key created: 128 bytes.')));
  assert.equal(renderSummary(new Map([['S3n', file]])), '_No results yet: run `npm run bench`._');
  const skipped: NodesFile = { ...file, result: { ...result, skipped: 'no throwaway Redis: spawn redis-server ENOENT', arms: [], fixedRate: null } };
  assert.match(renderSection(new Map([['S3n', skipped]])), /\nSkipped \(2026-11-28 on AMD EPYC, .*\): no throwaway Redis: spawn redis-server ENOENT\n/);
});
