// prom-client metrics of one process. Names follow the spec (section 4.5) with the palisade_ prefix.
// In a cluster the primary aggregates every worker's registry (src/primary/hub.ts); with WORKERS=0
// the registry is served as it is.
import cluster from 'node:cluster';
import type { ChallengePoolStats } from './pow/pool.js';
import { AggregatorRegistry, Counter, Gauge, type Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LOAD_SAMPLE_SLOTS } from './store/shared-memory-store.js';

export interface Metrics {
  readonly registry: Registry;
  readonly challenges: Counter;
  readonly verificationsSuccess: Counter;
  readonly verificationsFailed: Counter<'reason'>;
  readonly status4xx: Counter;
  readonly status5xx: Counter;
  readonly requestDuration: RequestHistogram;
  readonly requestsPerMinute: Gauge;
  readonly rateLimited: Counter<'reason'>;
  readonly storeErrors: Counter<'code'>;
  /** Register gauges that read the usage buffer's counters at scrape time. */
  watchUsage(stats: () => { droppedLogs: number; rateLimitedLogs: number; pendingLogs: number }): void;
  /** Register the challenge pool's gauge and counter, read at scrape time. */
  watchPool(stats: () => ChallengePoolStats): void;
  /**
   * Register the shared-memory store's gauges: the soft table's live share (sampled at scrape time)
   * and capacity; the claims' count and bytes against STATE_STORE_MAX_MEMORY.
   */
  watchStateTable(table: StateTableView): void;
  /** Register palisade_state_evictions_total, read from either store at scrape time. */
  watchEvictions(store: { evictions(): { seen: number; window: number; penalty: number; counter: number } }): void;
  /** Count one finished request (status, seconds). */
  observe(status: number, seconds: number): void;
  close(): void;
}

/** What the metrics read of the shared-memory store (SharedMemoryStore fits). */
export interface StateTableView {
  sampleLoad(): number;
  readonly capacity: number;
  claimMemory(): { claims: number; bytes: number; maxBytes: number };
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  if (cluster.isWorker) {
    // Answer the primary's AggregatorRegistry with this registry (prom-client installs its worker-side
    // listener when an AggregatorRegistry is constructed).
    AggregatorRegistry.setRegistries([registry]);
    new AggregatorRegistry();
  }
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'palisade_' });
  const challenges = new Counter({ name: 'palisade_api_challenges_total', help: 'Challenges issued.', registers });
  const verificationsSuccess = new Counter({
    name: 'palisade_api_verifications_success_total', help: 'Successful verifications.', registers,
  });
  const verificationsFailed = new Counter({
    name: 'palisade_api_verifications_failed_total', help: 'Failed verifications by reason.', labelNames: ['reason'] as const, registers,
  });
  const status4xx = new Counter({ name: 'palisade_http_status_4xx_total', help: 'Responses with a 4xx status.', registers });
  const status5xx = new Counter({ name: 'palisade_http_status_5xx_total', help: 'Responses with a 5xx status.', registers });
  const requestDuration = new RequestHistogram(
    'palisade_http_request_duration_seconds', 'Request duration.',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  registry.registerMetric(requestDuration as unknown as Histogram);
  const rateLimited = new Counter({
    name: 'palisade_rate_limited_total', help: 'Requests refused by a rate limit, by rule.', labelNames: ['reason'] as const, registers,
  });
  const storeErrors = new Counter({
    name: 'palisade_store_errors_total', help: 'State-store failures (STORE_FULL, STORE_UNAVAILABLE).', labelNames: ['code'] as const, registers,
  });
  // Requests in the last minute: 60 one-second buckets, summed on collect (gauges sum across workers).
  const buckets = new Uint32Array(60);
  let bucketSecond = Math.floor(Date.now() / 1000);
  const advance = (nowSecond: number) => {
    const steps = Math.min(60, nowSecond - bucketSecond);
    for (let i = 1; i <= steps; i++) buckets[(bucketSecond + i) % 60] = 0;
    if (steps > 0) bucketSecond = nowSecond;
  };
  const requestsPerMinute = new Gauge({
    name: 'palisade_http_requests_per_minute', help: 'Requests answered in the last minute.', registers,
    collect() {
      advance(Math.floor(Date.now() / 1000));
      let sum = 0;
      for (const n of buckets) sum += n;
      this.set(sum);
    },
  });
  if (options.defaultMetrics ?? true) watchCpuUsage(registers);
  return {
    registry, challenges, verificationsSuccess, verificationsFailed, status4xx, status5xx, requestDuration,
    requestsPerMinute, rateLimited, storeErrors,
    watchUsage(stats) {
      new Counter({
        name: 'palisade_request_logs_skipped_total', help: 'Request-log rows left out (REQUEST_LOGS_MAX_RATE) or dropped (database away too long).',
        labelNames: ['reason'] as const, registers,
        collect() {
          const s = stats();
          this.reset();
          this.inc({ reason: 'rate' }, s.rateLimitedLogs);
          this.inc({ reason: 'overflow' }, s.droppedLogs);
        },
      });
      new Gauge({
        name: 'palisade_request_logs_pending', help: 'Request-log rows waiting to be written.', registers,
        collect() { this.set(stats().pendingLogs); },
      });
    },
    watchPool(stats) {
      new Gauge({
        name: 'palisade_challenge_pool_ready', help: 'Challenges derived ahead and ready to issue (expensive deterministic policies).', registers,
        collect() { this.set(stats().ready); },
      });
      new Counter({
        name: 'palisade_challenge_pool_takes_total',
        help: 'Challenges asked of the pool: ready (answered at once), waited (the pool was empty), refused (too many waiting).',
        labelNames: ['result'] as const, registers,
        collect() {
          const s = stats();
          this.reset();
          this.inc({ result: 'ready' }, s.fromStock);
          this.inc({ result: 'waited' }, s.waited);
          this.inc({ result: 'refused' }, s.refused);
        },
      });
    },
    watchEvictions(store) {
      // Each worker counts what it evicted: the cluster's value is the sum.
      new Counter({
        name: 'palisade_state_evictions_total',
        help: 'Soft-state entries given up for room, by kind: window (rate limits, threat counters), penalty (penalties, marks), seen (header combinations), counter (plan limits, seeded again from the usage count; shared memory only). Shared memory: the least recently used entry of a full probe window; Redis: a new entry not stored while memory is past 80 % of maxmemory.',
        labelNames: ['kind'] as const, registers,
        collect() {
          const e = store.evictions();
          this.reset();
          this.inc({ kind: 'window' }, e.window);
          this.inc({ kind: 'penalty' }, e.penalty);
          this.inc({ kind: 'seen' }, e.seen);
          this.inc({ kind: 'counter' }, e.counter);
        },
      });
    },
    watchStateTable(table) {
      // Every worker maps the same table: the cluster's value is the highest of their samples.
      new Gauge({
        name: 'palisade_state_store_load',
        help: `Share of the shared-memory soft-state table's slots holding live entries, sampled (${LOAD_SAMPLE_SLOTS.toLocaleString('en-US')} slots per scrape). From about 0.57, new entries evict the least recently used ones (palisade_state_evictions_total).`,
        registers, aggregator: 'max',
        collect() { this.set(table.sampleLoad()); },
      });
      new Gauge({
        name: 'palisade_state_store_capacity_slots', help: 'Slots in the shared-memory soft-state table (STATE_STORE_CAPACITY).',
        registers, aggregator: 'max',
        collect() { this.set(table.capacity); },
      });
      // Claims are shared by the host's workers: each reads the same directory, the cluster shows the highest.
      const claims = (field: 'claims' | 'bytes' | 'maxBytes') => function (this: Gauge) { this.set(table.claimMemory()[field]); };
      new Gauge({ name: 'palisade_state_claims', help: 'Used challenges remembered (claims) on this host.', registers, aggregator: 'max', collect: claims('claims') });
      new Gauge({
        name: 'palisade_state_claims_bytes', help: 'Bytes the claims take on this host; past STATE_STORE_MAX_MEMORY verification answers 503 STORE_FULL.',
        registers, aggregator: 'max', collect: claims('bytes'),
      });
      new Gauge({ name: 'palisade_state_claims_max_bytes', help: 'STATE_STORE_MAX_MEMORY in bytes.', registers, aggregator: 'max', collect: claims('maxBytes') });
    },
    observe(status, seconds) {
      const second = Math.floor(Date.now() / 1000);
      if (second !== bucketSecond) advance(second);
      buckets[second % 60]!++;
      requestDuration.observe(seconds);
      if (status >= 500) status5xx.inc();
      else if (status >= 400) status4xx.inc();
    },
    close() {
      registry.clear();
    },
  };
}

/**
 * The spec's CPU usage gauge (section 4.5 names CPU usage beside the memory gauges; prom-client's
 * default metrics give the memory ones, palisade_process_resident_memory_bytes and
 * palisade_nodejs_heap_size_used_bytes, but CPU only as a counter of seconds). Cores kept busy by the
 * process since the previous scrape (user plus system time over wall time; 1 = one core), summed
 * across workers, so a 2-core node at full load reads about 2. The first scrape covers the time
 * since the metrics were created (the process's start).
 */
export function watchCpuUsage(registers: Registry[], now: () => bigint = process.hrtime.bigint, usage = process.cpuUsage): Gauge {
  let lastWall = now();
  let lastCpu = usage();
  return new Gauge({
    name: 'palisade_process_cpu_usage',
    help: 'CPU cores the process kept busy since the previous scrape (user plus system CPU time over wall time; summed across workers).',
    registers,
    collect() {
      const wall = now();
      const cpu = usage();
      const wallUs = Number(wall - lastWall) / 1000;
      const cpuUs = cpu.user - lastCpu.user + cpu.system - lastCpu.system;
      lastWall = wall;
      lastCpu = cpu;
      // Two scrapes within the same microsecond: keep the last value rather than divide by zero.
      if (wallUs > 0) this.set(Math.max(0, cpuUs / wallUs));
    },
  });
}

interface HistogramValue {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName: string;
}

/**
 * The request-duration histogram: one per worker, no labels, observed on every response. prom-client's
 * Histogram hashes its label object and validates it on each observe (about 5% of a 404's CPU in a
 * profile); this one is a loop over a typed array. It exports exactly what prom-client's would
 * (`_bucket` cumulative with `le`, `+Inf`, `_sum`, `_count`; aggregated by sum across workers), so the
 * registry, the cluster aggregation and /.metrics treat it as any histogram.
 */
export class RequestHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: Float64Array;
  /** Per bucket (not cumulative); the last slot counts values above every bound. */
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;

  constructor(name: string, help: string, bounds: readonly number[]) {
    this.name = name;
    this.help = help;
    this.#bounds = Float64Array.from(bounds);
    this.#counts = new Float64Array(bounds.length + 1);
  }

  observe(seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    const b = this.#bounds;
    let i = 0;
    while (i < b.length && seconds > b[i]!) i++;
    this.#counts[i]!++;
    this.#sum += seconds;
    this.#count++;
  }

  get(): Promise<{ name: string; help: string; type: string; values: HistogramValue[]; aggregator: string }> {
    const bucket = `${this.name}_bucket`;
    const values: HistogramValue[] = [];
    let acc = 0;
    for (let i = 0; i < this.#bounds.length; i++) {
      acc += this.#counts[i]!;
      values.push({ labels: { le: this.#bounds[i]! }, value: acc, metricName: bucket });
    }
    values.push(
      { labels: { le: '+Inf' }, value: this.#count, metricName: bucket },
      { labels: {}, value: this.#sum, metricName: `${this.name}_sum` },
      { labels: {}, value: this.#count, metricName: `${this.name}_count` },
    );
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' });
  }

  reset(): void {
    this.#counts.fill(0);
    this.#sum = 0;
    this.#count = 0;
  }
}
