// Pre-solved payloads for the verify scenarios: N challenges are fetched from the target's own
// challenge endpoint, solved here with the service's native derivation (the "fast local solver"),
// encoded as the widget would post them, and packed into a feed shared by the load-generator threads
// (bench/lib/feed-request.cjs), so every request of a run is a first use.
import { deriveKeySync, POW_ALGORITHMS, type PowAlgorithm } from '../../src/pow/derive.js';
import { collectBodies } from './load.js';
import type { Feed } from './types.js';

interface ChallengeParameters {
  readonly algorithm: string;
  readonly nonce: string;
  readonly salt: string;
  readonly cost: number;
  readonly keyLength?: number;
  readonly keyPrefix: string;
}

/** Highest counter tried: the narrow policy's range is 0–100; a wider one means a wrong key. */
const MAX_COUNTER = 100_000;

/**
 * The widget's payload for one challenge response body (Palisade's {parameters, signature,
 * configuration} or altcha-lib's {parameters, signature}): base64(JSON{challenge, solution}).
 */
export function solvePayload(challengeJson: string): string {
  const { parameters, signature } = JSON.parse(challengeJson) as { parameters: ChallengeParameters; signature: string };
  const algorithm = parameters.algorithm as PowAlgorithm;
  if (!(POW_ALGORITHMS as readonly string[]).includes(algorithm)) throw new Error(`cannot solve ${parameters.algorithm}`);
  const params = { algorithm, cost: parameters.cost, keyLength: parameters.keyLength ?? 32 };
  const nonce = Buffer.from(parameters.nonce, 'hex');
  const salt = Buffer.from(parameters.salt, 'hex');
  const prefix = Buffer.from(parameters.keyPrefix, 'hex');
  const start = performance.now();
  for (let counter = 0; counter <= MAX_COUNTER; counter++) {
    const key = deriveKeySync(params, nonce, salt, counter);
    if (key.compare(prefix, 0, prefix.length, 0, prefix.length) === 0) {
      const solution = { counter, derivedKey: key.toString('hex'), time: Math.round(performance.now() - start) };
      return Buffer.from(JSON.stringify({ challenge: { parameters, signature }, solution })).toString('base64');
    }
  }
  throw new Error(`no solution below counter ${MAX_COUNTER}: is the key's counter range narrow?`);
}

export function verifyBody(payload: string): string {
  return `{"payload":"${payload}"}`;
}

export function buildFeed(bodies: readonly string[], repeat = false): Feed {
  const offsets = new SharedArrayBuffer(4 * (bodies.length + 1));
  const off = new Int32Array(offsets);
  let total = 0;
  for (let i = 0; i < bodies.length; i++) {
    off[i] = total;
    total += bodies[i]!.length; // ASCII: one byte per character
  }
  off[bodies.length] = total;
  const data = new SharedArrayBuffer(total);
  const bytes = Buffer.from(data);
  for (let i = 0; i < bodies.length; i++) bytes.write(bodies[i]!, off[i]!, 'latin1');
  return { data, offsets, next: new SharedArrayBuffer(4), count: bodies.length, repeat };
}

/** Fetches `count` challenges from GET `url + path`, solves them and packs the request bodies. */
export async function prepareFeed(url: string, path: string, headers: Record<string, string>, count: number): Promise<Feed> {
  const challenges = await collectBodies(url, path, headers, count);
  const bodies = challenges.map((c) => verifyBody(solvePayload(c)));
  return buildFeed(bodies);
}
