// Every variable, in the documentation's order (docs/configuration.md is generated from this table
// by `npm run docs`, and a test keeps the two in step), and the rules across variables, in the order
// their problems are reported.
import { ADMIN_VARIABLES } from './admin.js';
import { LIMIT_VARIABLES, checkLimits } from './limits.js';
import { LIST_VARIABLES, checkLists } from './lists.js';
import { OBSERVABILITY_VARIABLES } from './observability.js';
import { OUTBOUND_VARIABLES, checkOutbound } from './outbound.js';
import { SECRET_VARIABLES } from './secrets.js';
import { CLIENT_IP_VARIABLES, SERVER_VARIABLES, checkMemory, checkTls } from './server.js';
import { STORE_VARIABLES, checkStores } from './stores.js';
import type { Check } from './variable.js';

/** Every variable. Order is the documentation's order. */
export const VARIABLES = {
  ...SERVER_VARIABLES,
  ...OBSERVABILITY_VARIABLES,
  ...CLIENT_IP_VARIABLES,
  ...SECRET_VARIABLES,
  ...ADMIN_VARIABLES,
  ...LIMIT_VARIABLES,
  ...LIST_VARIABLES,
  ...STORE_VARIABLES,
  ...OUTBOUND_VARIABLES,
} as const;

export type VariableName = keyof typeof VARIABLES;
export type Parsed = { readonly [K in VariableName]: ReturnType<(typeof VARIABLES)[K]['parse']> };

/** The rules across variables, run once every variable is parsed. */
export const CHECKS: readonly Check[] = [checkStores, checkTls, checkOutbound, checkLimits, checkLists, checkMemory];
