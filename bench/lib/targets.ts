// The servers a scenario measures: Palisade in one configuration (a fresh copy of the key template
// as DATA_DIR), L (bare uWebSockets.js) and P (Fastify + altcha-lib), all with the same worker count.
import { fileURLToPath } from 'node:url';
import { resolvePolicy } from '../../src/pow/policy.js';
import type { BaselinePolicy } from '../baselines/fastify-altcha.js';
import { CONFIGS, type ConfigName } from '../scenarios/scenario.js';
import { KEY_POLICIES, type KeyName, type KeyTemplate } from './keys.js';
import { spawnServer, type ServerProcess } from './processes.js';

const PALISADE_MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const L_MAIN = fileURLToPath(new URL('../baselines/uws-hello.js', import.meta.url));
const P_MAIN = fileURLToPath(new URL('../baselines/fastify-altcha.js', import.meta.url));
const B_MAIN = fileURLToPath(new URL('../baselines/fastify-bayes.js', import.meta.url));

export type TargetKind = 'palisade' | 'L' | 'P' | 'B';

export interface Target {
  /** 'palisade:production', 'L', 'P', 'B'. */
  readonly id: string;
  readonly kind: TargetKind;
  readonly config: ConfigName | null;
  readonly server: ServerProcess;
}

export async function startPalisade(
  template: KeyTemplate, config: ConfigName, workers: number, extraEnv: Readonly<Record<string, string>> = {},
): Promise<Target> {
  const server = await spawnServer({
    name: `palisade:${config}`,
    script: PALISADE_MAIN,
    readyPath: '/.live',
    env: {
      WORKERS: String(workers),
      DATA_DIR: template.freshDataDir(),
      SECRET_SEED: template.secretSeed,
      LOG_LEVEL: 'info',
      ...CONFIGS[config],
      ...extraEnv,
    },
  });
  return { id: `palisade:${config}`, kind: 'palisade', config, server };
}

export async function startL(workers: number): Promise<Target> {
  const server = await spawnServer({ name: 'L', script: L_MAIN, env: { WORKERS: String(workers) } });
  return { id: 'L', kind: 'L', config: null, server };
}

export async function startP(workers: number): Promise<Target> {
  const server = await spawnServer({
    name: 'P',
    script: P_MAIN,
    readyPath: '/v1/challenge?apiKey=default',
    env: { WORKERS: String(workers), BENCH_P_POLICIES: JSON.stringify(baselinePolicies()) },
  });
  return { id: 'P', kind: 'P', config: null, server };
}

/** Baseline B (S6): Fastify + a naive-Bayes classifier, answering `Authorization: Bearer <token>`. */
export async function startB(workers: number, token: string): Promise<Target> {
  const server = await spawnServer({ name: 'B', script: B_MAIN, readyPath: '/.live', env: { WORKERS: String(workers), BENCH_B_TOKEN: token } });
  return { id: 'B', kind: 'B', config: null, server };
}

/** The scenario keys' policies as Palisade resolves them, so P issues exactly the same challenges. */
export function baselinePolicies(): Record<KeyName, BaselinePolicy> {
  const out = {} as Record<KeyName, BaselinePolicy>;
  for (const [name, stored] of Object.entries(KEY_POLICIES) as [KeyName, Record<string, unknown> | null][]) {
    const p = resolvePolicy(stored, { maxMemoryBytes: 128 * 2 ** 20 });
    out[name] = {
      algorithm: p.algorithm, cost: p.cost, keyLength: p.keyLength, counterMin: p.counterMin, counterMax: p.counterMax,
      expiresInMs: p.expiresInMs,
    };
  }
  return out;
}
