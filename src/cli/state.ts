// `state`: how full the shared-memory store is, soft table and claims (docs/operations.md,
// "Sizing"). Opens the files the service uses, never creates one, and only reads them.
import { existsSync } from 'node:fs';
import { dataPath, type Config } from '../config/index.js';
import { claimMemoryBytes } from '../primary/resources.js';
import { openSharedMemoryStore } from '../store/shared-memory-store.js';

/** The exit status: 0, or 1 when there is no shared-memory table to read. */
export function stateCommand(config: Config, json: boolean): number {
  if (config.REDIS_URL) {
    console.error('error: REDIS_URL is set, so the state lives in Redis, not in a shared-memory table');
    return 1;
  }
  const path = dataPath(config, config.EMBEDDED_DB_REDIS_LOCATION);
  if (!existsSync(path)) {
    console.error(`error: no state file at ${path} (has the service run with this DATA_DIR?)`);
    return 1;
  }
  const store = openSharedMemoryStore(path, { capacity: config.STATE_STORE_CAPACITY, sweepEveryMs: 0, sweepFiles: false });
  try {
    const { live, expired, empty } = store.occupancy();
    const capacity = config.STATE_STORE_CAPACITY;
    const load = live / capacity;
    const c = store.claimMemory();
    const maxBytes = claimMemoryBytes(config.STATE_STORE_MAX_MEMORY, config.CONTAINER_MEMORY_LIMIT_MB);
    const claims = { claims: c.claims, buckets: c.buckets, segments: c.segments, bytes: c.bytes, maxBytes };
    if (json) {
      console.log(JSON.stringify({ path, capacity, live, expired, empty, load, claims }));
    } else {
      const pct = (n: number) => `${((n / capacity) * 100).toFixed(1)} %`;
      const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
      console.log(`state file: ${path}\ncapacity:   ${capacity} slots\nlive:       ${live} (${pct(live)})\n` +
        `expired:    ${expired} (${pct(expired)}, reusable)\nnever used: ${empty} (${pct(empty)})\n` +
        `claims:     ${c.claims} used challenges in ${c.buckets} buckets, ${mb(c.bytes)} of ${mb(maxBytes)} (STATE_STORE_MAX_MEMORY)`);
      if (load > 0.5) {
        console.log('More than half the slots are live: past about 57 % new rate-limit and penalty entries evict the least ' +
          'recently used ones (used challenges are kept apart and never evicted). Raise STATE_STORE_CAPACITY if this is ' +
          'ordinary traffic (docs/operations.md, "Sizing").');
      }
      if (c.bytes > maxBytes * 0.8) console.log('Claims take more than 80 % of STATE_STORE_MAX_MEMORY: past it, verification answers 503 STORE_FULL.');
    }
    return 0;
  } finally {
    void store.close();
  }
}
