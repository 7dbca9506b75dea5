// S4: GET /v1/challenge for a key whose policy is PBKDF2/SHA-256, cost 5,000, deterministic: each
// challenge costs one expensive derivation, made ahead in the per-worker pool (src/pow/pool.ts). At
// full load the pool empties and issuance runs at the rate the cores derive, so beside L and P the
// runner measures that rate alone (bench/lib/derive-rate.ts) and reports issuance ÷ derivation.
import type { Scenario } from './scenario.js';

export const S4: Scenario = {
  id: 'S4',
  title: 'GET /v1/challenge (PBKDF2/SHA-256 cost 5,000, pooled)',
  endpoint: 'challenge',
  key: 'pbkdf2',
  configs: ['production', 'bare'],
  baselines: ['L', 'P'],
  derivation: { algorithm: 'PBKDF2/SHA-256', cost: 5_000 },
  checks: [
    { kind: 'derivation', config: 'production', min: 0.9 },
    { kind: 'derivation', config: 'bare', min: 0.9 },
  ],
};
