// S0 (opt-in: --only S0): GET /.live, the service's HTTP layer (routing, client IP, flood limit,
// access log, metrics) with no proof-of-work behind it. Against L it shows what the layer costs,
// the ceiling every other scenario lives under.
import type { Scenario } from './scenario.js';

export const S0: Scenario = {
  id: 'S0',
  title: 'GET /.live (HTTP layer only)',
  endpoint: 'ops',
  key: 'default',
  configs: ['production', 'bare'],
  baselines: ['L'],
  checks: [],
  optIn: true,
};
