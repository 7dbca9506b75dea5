// The configuration as others may see it: for logs with secret values hidden, and the few settings
// the container health check reads without loading (or validating) the rest.
import { readFileSync } from 'node:fs';
import type { Config } from './load.js';
import type { VarSpec } from './variable.js';
import { VARIABLES, type VariableName } from './variables.js';

/** For logs: the configuration with secret values replaced. */
export function describeConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(VARIABLES) as [VariableName, VarSpec<unknown>][]) {
    const value = config[name];
    out[name] = spec.secret && value !== null && value !== '' ? '<set>' : value;
  }
  return out;
}

/** The few settings the container health check needs, without secrets or validation of the rest. */
export function healthcheckSettings(env: NodeJS.ProcessEnv = process.env): {
  port: number; basePath: string; credentials: string | null; tls: boolean;
} {
  const read = (name: VariableName) => {
    const file = env[`${name}_FILE`];
    if (file) { try { return readFileSync(file, 'utf8').trim(); } catch { return ''; } }
    return env[name] ?? VARIABLES[name].def;
  };
  return {
    port: Number(read('PORT')) || 8080,
    basePath: read('APP_BASE_PATH').replace(/\/+$/, ''),
    credentials: read('MONITORING_HTTP_CREDENTIALS') || null,
    tls: read('HTTP2_CERT') !== '',
  };
}
