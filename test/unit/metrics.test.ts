// src/metrics.ts: the request-duration histogram exports exactly what prom-client's Histogram would
// for the same observations, alone and through the cluster aggregation; the state table's gauges;
// errors capture no stack.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { PalisadeError } from '../../src/errors.js';
import { createMetrics, RequestHistogram, watchCpuUsage } from '../../src/metrics.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
// On a bound, just above and below, beyond the last bound, zero.
const VALUES = [0, 0.0001, 0.0005, 0.00051, 0.001, 0.003, 0.0049, 0.01, 0.2, 0.5, 0.9, 2.5, 4.99, 5, 7, 120, 0.03];

function both(values: readonly number[]) {
  const oursRegistry = new Registry();
  const ours = new RequestHistogram('h_seconds', 'Help.', BOUNDS);
  oursRegistry.registerMetric(ours as unknown as Histogram);
  const theirsRegistry = new Registry();
  const theirs = new Histogram({ name: 'h_seconds', help: 'Help.', buckets: BOUNDS, registers: [theirsRegistry] });
  for (const v of values) {
    ours.observe(v);
    theirs.observe(v);
  }
  return { ours, oursRegistry, theirsRegistry };
}

test('the request histogram prints exactly what prom-client prints for the same observations', async () => {
  const { oursRegistry, theirsRegistry } = both(VALUES);
  const text = await oursRegistry.metrics();
  assert.equal(text, await theirsRegistry.metrics());
  assert.match(text, /^h_seconds_bucket\{le="0\.0005"\} 3$/m);
  assert.match(text, /^h_seconds_bucket\{le="\+Inf"\} 17$/m);
  assert.match(text, /^h_seconds_count 17$/m);
});

test('the request histogram ignores values that are not finite numbers and resets to zero', async () => {
  const { ours, oursRegistry } = both([0.002]);
  ours.observe(Number.NaN);
  ours.observe(Number.POSITIVE_INFINITY);
  assert.match(await oursRegistry.metrics(), /^h_seconds_count 1$/m);
  oursRegistry.resetMetrics();
  const text = await oursRegistry.metrics();
  assert.match(text, /^h_seconds_count 0$/m);
  assert.match(text, /^h_seconds_sum 0$/m);
});

test('the cluster aggregation sums two workers\' histograms as it sums prom-client\'s', async () => {
  const a = both(VALUES.slice(0, 8));
  const b = both(VALUES.slice(8));
  const json = async (r: Registry) => r.getMetricsAsJSON();
  const ours = AggregatorRegistry.aggregate([await json(a.oursRegistry), await json(b.oursRegistry)]);
  const theirs = AggregatorRegistry.aggregate([await json(a.theirsRegistry), await json(b.theirsRegistry)]);
  assert.equal(await ours.metrics(), await theirs.metrics());
  assert.match(await ours.metrics(), /^h_seconds_count 17$/m);
});

test('createMetrics().observe counts a response in the histogram and by status class', async () => {
  const m = createMetrics({ defaultMetrics: false });
  m.observe(200, 0.0007);
  m.observe(404, 0.002);
  m.observe(503, 0.3);
  const text = await m.registry.metrics();
  assert.match(text, /^palisade_http_request_duration_seconds_bucket\{le="0\.001"\} 1$/m);
  assert.match(text, /^palisade_http_request_duration_seconds_bucket\{le="0\.5"\} 3$/m);
  assert.match(text, /^palisade_http_request_duration_seconds_count 3$/m);
  assert.match(text, /^palisade_http_status_4xx_total 1$/m);
  assert.match(text, /^palisade_http_status_5xx_total 1$/m);
  m.close();
});

test('the state table gauges: the live share of the table, its capacity, the highest worker\'s value across the cluster', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-metrics-'));
  try {
    const store = openSharedMemoryStore(join(dir, 'state.shm'), { capacity: 4096 });
    for (let i = 0; i < 1024; i++) assert.equal(store.seenOnceSync(`m${i}`, 60_000), true);
    const worker = async () => {
      const m = createMetrics({ defaultMetrics: false });
      m.watchStateTable(store);
      const json = await m.registry.getMetricsAsJSON();
      m.close();
      return json;
    };
    const one = createMetrics({ defaultMetrics: false });
    one.watchStateTable(store);
    const text = await one.registry.metrics();
    // A table no larger than the sample is counted whole: exactly a quarter of the slots are live.
    assert.match(text, /^palisade_state_store_load 0\.25$/m);
    assert.match(text, /^palisade_state_store_capacity_slots 4096$/m);
    one.close();
    // Two workers map the same table: the cluster shows one table, not the sum of two.
    const cluster = await AggregatorRegistry.aggregate([await worker(), await worker()]).metrics();
    assert.match(cluster, /^palisade_state_store_load 0\.25$/m);
    assert.match(cluster, /^palisade_state_store_capacity_slots 4096$/m);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a PalisadeError carries its code and message but no stack frames', () => {
  const err = new PalisadeError('NOT_FOUND');
  assert.equal(err.code, 'NOT_FOUND');
  assert.equal(err.statusCode, 404);
  assert.ok(err instanceof Error);
  assert.doesNotMatch(err.stack ?? '', /\n\s+at /);
  // The limit is restored: other errors keep their stacks.
  assert.match(new Error('x').stack ?? '', /\n\s+at /);
});

test('CPU usage gauge: cores kept busy between scrapes, from user plus system time over wall time', async () => {
  const registry = new Registry();
  let wallNs = 0n;
  let cpu = { user: 0, system: 0 };
  watchCpuUsage([registry], () => wallNs, () => cpu);
  const value = async () => (await registry.getSingleMetric('palisade_process_cpu_usage')!.get()).values[0]?.value;
  wallNs = 2_000_000_000n; // 2 s
  cpu = { user: 1_500_000, system: 500_000 }; // 2 s of CPU: one core busy
  assert.equal(await value(), 1);
  wallNs += 1_000_000_000n;
  cpu = { user: cpu.user + 250_000, system: cpu.system }; // a quarter of a core
  assert.equal(await value(), 0.25);
  // No time passed: the last value stays rather than a division by zero.
  assert.equal(await value(), 0.25);
  wallNs += 1_000_000_000n;
  cpu = { user: cpu.user + 1_000_000, system: cpu.system + 1_000_000 }; // two cores
  assert.equal(await value(), 2);
});

test('createMetrics exports the CPU usage gauge beside the default memory gauges', async () => {
  const m = createMetrics();
  const text = await m.registry.metrics();
  assert.match(text, /^# TYPE palisade_process_cpu_usage gauge$/m);
  assert.match(text, /^palisade_process_cpu_usage \d+(\.\d+)?(e-?\d+)?$/m);
  assert.match(text, /^# TYPE palisade_process_resident_memory_bytes gauge$/m);
  assert.match(text, /^# TYPE palisade_nodejs_heap_size_used_bytes gauge$/m);
  m.close();
  const bare = createMetrics({ defaultMetrics: false });
  assert.doesNotMatch(await bare.registry.metrics(), /palisade_process_cpu_usage/);
  bare.close();
});
