// The configuration: the only code that reads process.env. One table of every variable (interface
// spec sections 5 and 8, plus Palisade's own), one module per concern, each variable with its
// default, parser and meaning; docs/configuration.md is generated from the table (`npm run docs`).
//   variable.ts       what a variable is, and the parsers the concerns share
//   server.ts         serving HTTP, TLS, workers and memory; the client IP behind proxies
//   observability.ts  logs, access log, monitoring access, OpenTelemetry
//   secrets.ts        the service's secrets and node identity
//   admin.ts          the admin area
//   limits.ts         rate limits, threat counters, body sizes, proof-of-work costs, the state store's room
//   lists.ts          downloaded lists, threat sources, IP intelligence
//   stores.ts         databases, Redis, the state file, storage and snapshots
//   outbound.ts       proxies and CA certificates of outbound requests
//   variables.ts      the whole table in documentation order, and the rules across variables
//   status.ts         what each variable does today: implemented, planned or ignored
//   load.ts           loadConfig: parse, check, resolve secrets, freeze
//   data-dir.ts       DATA_DIR and paths under it
//   describe.ts       the configuration for logs; the health check's few settings
//   process.ts        what the process learns from its environment besides settings
export { ConfigError, loadConfig, type Config, type LoadConfigOptions } from './load.js';
export { VARIABLES, type VariableName } from './variables.js';
export { IMPLEMENTED, STATUS, statusText, type VariableStatus } from './status.js';
export { DEFAULT_MONITORING_WHITELIST } from './observability.js';
export { dataPath, resolveDataDir } from './data-dir.js';
export { describeConfig, healthcheckSettings } from './describe.js';
export { workerSlot } from './process.js';
