// Reads, parses and validates the configuration once: every variable of the table (variables.ts)
// from the environment or its NAME_FILE, then the rules across variables; every problem is reported
// together in one ConfigError, and the result is frozen.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolveSecrets, SECRET_NAMES, type Secrets } from '../secrets.js';
import { resolveDataDir } from './data-dir.js';
import type { VarSpec } from './variable.js';
import { CHECKS, VARIABLES, type Parsed, type VariableName } from './variables.js';

export interface Config extends Parsed {
  /** Absolute data directory. */
  readonly dataDir: string;
  /** Worker count actually used (0 = single process). */
  readonly workers: number;
  readonly powMaxThreads: number;
  readonly secrets: Secrets;
  readonly version: string;
}

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadConfigOptions {
  /** The environment to read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Values that win over the environment (the CLI's flags). Default none. */
  overrides?: Readonly<Partial<Record<VariableName, string>>>;
  /** Create and persist missing secrets in DATA_DIR (the primary does; workers and the CLI read). Default true. */
  persistSecrets?: boolean;
  /** CPU count when the caller knows it (tests); default from cgroups/availableParallelism. */
  detectedCpus?: number;
}

/** Reads, parses and validates every variable; throws one ConfigError listing every problem. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.overrides === undefined ? options.env ?? process.env : { ...(options.env ?? process.env), ...options.overrides };
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(VARIABLES) as [VariableName, VarSpec<unknown>][]) {
    let raw: string | undefined = env[name];
    const file = env[`${name}_FILE`];
    if (file !== undefined && file !== '') {
      if (raw !== undefined && raw !== '') {
        problems.push(`${name} and ${name}_FILE are both set; set one`);
        continue;
      }
      try {
        raw = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
      } catch (err) {
        problems.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
        continue;
      }
    }
    try {
      out[name] = spec.parse(raw ?? spec.def);
    } catch (err) {
      const message = (err as Error).message;
      // Never echo a secret's value back in the error.
      problems.push(`${name}: ${spec.secret ? message.replace(raw ?? '', '<hidden>') : message}`);
    }
  }
  for (const check of CHECKS) problems.push(...check(out));
  if (problems.length > 0) throw new ConfigError(problems);

  const dataDir = resolveDataDir(out.DATA_DIR as string);
  let secrets: Secrets;
  try {
    secrets = resolveSecrets(dataDir, {
      seed: out.SECRET_SEED as string | null,
      nodeName: out.NODE_NAME as string,
      given: Object.fromEntries(SECRET_NAMES.map((n) => [n, (out[n] as string | null) || null])),
      persist: options.persistSecrets ?? true,
      rotate: out.SECRET_SEED_ROTATE as boolean,
    });
  } catch (err) {
    throw new ConfigError([`secrets: ${(err as Error).message}`]);
  }
  const cpus = (out.CONTAINER_CPUS as number | null) ?? options.detectedCpus ?? availableParallelism();
  return Object.freeze({
    ...(out as unknown as Parsed),
    dataDir,
    workers: (out.WORKERS as number | null) ?? cpus,
    powMaxThreads: (out.POW_MAX_THREADS as number | null) ?? Math.max(1, Math.floor(cpus / 2)),
    secrets,
    version: packageVersion(),
  });
}

let cachedVersion: string | undefined;
function packageVersion(): string {
  // From dist/src/config/ to the package root.
  cachedVersion ??= (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return cachedVersion;
}
