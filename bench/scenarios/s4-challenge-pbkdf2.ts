// S4: GET /v1/challenge for a key whose policy is PBKDF2/SHA-256, cost 5,000, deterministic: each
// challenge costs one expensive derivation, made ahead in the per-worker pool (src/pow/pool.ts). At
// full load the pool empties and issuance runs at the rate the cores derive, so beside L and P the
// runner measures that rate alone (bench/lib/derive-rate.ts) and reports issuance ÷ derivation.
// Then each configuration runs again with CHALLENGE_POOL_SIZE=100,000 and is measured in bursts that
// the stocked pools cover (bench/lib/stocked-pool.ts): issuance ÷ L while the pool keeps up.
import type { Scenario } from './scenario.js';

export const S4: Scenario = {
  id: 'S4',
  title: 'GET /v1/challenge (PBKDF2/SHA-256 cost 5,000, pooled)',
  endpoint: 'challenge',
  key: 'pbkdf2',
  configs: ['production', 'bare'],
  baselines: ['L', 'P'],
  derivation: { algorithm: 'PBKDF2/SHA-256', cost: 5_000 },
  // 100,000 per worker (the most CHALLENGE_POOL_SIZE takes, ~30 MB each): a warm-up burst of 10 % of
  // all pools, then 3 bursts of 17 % each, take 122,000 of 200,000. Refilling starts below a quarter
  // (25,000 in a worker), so no derivation runs during a burst unless one worker answers more than
  // 61 % of the requests (75,000 of 122,000); the connections are spread over the workers by the kernel.
  stockedPool: { size: 100_000, warmupShare: 0.1, burstShare: 0.17 },
  checks: [
    { kind: 'stocked', config: 'production', min: 0.3 },
    { kind: 'stocked', config: 'bare', min: 0.3 },
    { kind: 'derivation', config: 'production', min: 0.9 },
    { kind: 'derivation', config: 'bare', min: 0.9 },
  ],
};
