// S2: POST /v1/verify with unique pre-solved payloads (bench/lib/payloads.ts): every request is a
// first use, so the replay store (shared memory) inserts each one, and every answer carries a signed
// server payload. The payloads come from the "narrow" key (counter range 0–100, see
// bench/lib/keys.ts) so that enough of them can be solved before each run.
import type { Scenario } from './scenario.js';

export const S2: Scenario = {
  id: 'S2',
  title: 'POST /v1/verify (unique payloads, shared-memory store)',
  endpoint: 'verify',
  key: 'narrow',
  configs: ['production', 'bare'],
  baselines: ['L', 'P'],
  checks: [
    { kind: 'vsL', config: 'production', min: 0.4 },
    { kind: 'vsP', config: 'production', min: 3 },
    { kind: 'p99', config: 'production', maxMs: 5 },
    { kind: 'p99', config: 'bare', maxMs: 5 },
  ],
};
