// S5: GET /v1/inspect with the default intelligence (the embedded country database, the embedded
// ASN index, the threat lists as downloaded, no user-agent list): the key's authorisation, a
// geolocation and ASN lookup, the threat lists, the user-agent verdict, the device key, the penalty
// and the marks, in a JSON answer. No target of the issue applies; it is measured
// beside L to show what a look at the caller costs.
import type { Scenario } from './scenario.js';

export const S5: Scenario = {
  id: 'S5',
  title: 'GET /v1/inspect (default intelligence)',
  endpoint: 'inspect',
  key: 'default',
  configs: ['production', 'bare'],
  baselines: ['L'],
  checks: [],
};
