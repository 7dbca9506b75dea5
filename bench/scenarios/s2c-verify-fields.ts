// S2c (opt-in: --only S2c): what a key's classification policy costs POST /v1/verify when the
// widget sends no fields. production verifies with the narrow key (default policy), production-fields
// with the same policy plus `classification: {fields: true}` (bench/lib/keys.ts); both get S2's
// payloads, which carry no fields and no time zone. The classifier issue's aim: the policy costs no
// more than 15 %, i.e. production-fields ÷ production ≥ 0.85.
import type { Scenario } from './scenario.js';

export const S2c: Scenario = {
  id: 'S2c',
  title: 'POST /v1/verify, a key asking for fields, payloads without them',
  endpoint: 'verify',
  key: 'narrow',
  keyFor: { 'production-fields': 'fields' },
  configs: ['production', 'production-fields'],
  baselines: ['L'],
  checks: [
    { kind: 'vsConfig', config: 'production-fields', of: 'production', min: 0.85 },
  ],
  optIn: true,
};
