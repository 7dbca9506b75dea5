// S1: GET /v1/challenge with the default policy (deterministic SHA-256, cost 1): an API-key lookup,
// an origin check, one hash and two HMACs per request. Also run in production without the flood
// limit for issue 6's on/off ratio, and without IP intelligence for its on/off ratio.
import type { Scenario } from './scenario.js';

export const S1: Scenario = {
  id: 'S1',
  title: 'GET /v1/challenge (default policy)',
  endpoint: 'challenge',
  key: 'default',
  configs: ['production', 'bare', 'production-noflood', 'production-nointel'],
  baselines: ['L', 'P'],
  checks: [
    { kind: 'vsL', config: 'production', min: 0.5 },
    { kind: 'vsP', config: 'production', min: 2.5 },
    { kind: 'vsL', config: 'bare', min: 0.65 },
    { kind: 'p99', config: 'production', maxMs: 5 },
    { kind: 'p99', config: 'bare', maxMs: 5 },
  ],
};
