// S4's reference: how many PBKDF2/SHA-256 cost-5,000 derivations per second the cores do alone,
// through the service's own deriveKey (src/pow/derive.ts: native PBKDF2 on the libuv pool) with one
// derivation slot per core and the slots kept full. Issuing from the pool cannot beat this, so
// "S4 req/s ÷ this" is the share of the derivation capacity the challenge path delivers.
// Runs in a child process (its own libuv pool sized to the cores, nothing else on its event loop):
//   node dist/bench/lib/derive-rate.js <seconds> [algorithm] [cost]
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configureDerivation, deriveKey, type PowAlgorithm } from '../../src/pow/derive.js';

export interface DerivationRate {
  readonly algorithm: string;
  readonly cost: number;
  readonly threads: number;
  readonly derivations: number;
  readonly seconds: number;
  /** Derivations per second, all cores. */
  readonly rate: number;
}

const SELF = fileURLToPath(import.meta.url);

export function measureDerivationRate(seconds: number, algorithm = 'PBKDF2/SHA-256', cost = 5_000): Promise<DerivationRate> {
  const threads = availableParallelism();
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, [SELF, String(seconds), algorithm, String(cost)], {
      env: { PATH: process.env.PATH ?? '', UV_THREADPOOL_SIZE: String(Math.max(4, threads)) },
      timeout: (seconds + 30) * 1000,
    }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`derive-rate failed: ${stderr || err.message}`));
      resolvePromise(JSON.parse(stdout) as DerivationRate);
    });
  });
}

async function measure(seconds: number, algorithm: PowAlgorithm, cost: number): Promise<DerivationRate> {
  const threads = availableParallelism();
  configureDerivation({ maxThreads: threads });
  const params = { algorithm, cost, keyLength: 32 };
  const nonce = randomBytes(16);
  const salt = randomBytes(16);
  let counting = false;
  let derivations = 0;
  let stop = false;
  const loop = async (slot: number) => {
    for (let n = slot; !stop; n += threads) {
      await deriveKey(params, nonce, salt, n);
      if (counting) derivations++;
    }
  };
  const loops = Array.from({ length: threads }, (_, i) => loop(i));
  await new Promise((r) => setTimeout(r, 500)); // warm-up
  counting = true;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = (performance.now() - start) / 1000;
  counting = false;
  stop = true;
  await Promise.all(loops);
  return { algorithm, cost, threads, derivations, seconds: Math.round(elapsed * 100) / 100, rate: Math.round(derivations / elapsed) };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === SELF) {
  const [seconds = '5', algorithm = 'PBKDF2/SHA-256', cost = '5000'] = process.argv.slice(2);
  measure(Number(seconds), algorithm as PowAlgorithm, Number(cost)).then((r) => process.stdout.write(JSON.stringify(r)));
}
