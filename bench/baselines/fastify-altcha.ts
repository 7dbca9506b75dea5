// Baseline P: what a user would build instead of Palisade. A Fastify cluster (node:cluster, same
// worker count, default scheduling) with altcha-lib 2.x doing the same job:
//   GET  /v1/challenge?apiKey=<policy name>  createChallenge, deterministic (secret counter drawn from
//        the policy's range, key signature), same algorithm, cost, key length and expiry, HMAC-signed;
//   POST /v1/verify {"payload": base64}      verifySolution (key-signature path) plus an in-memory
//        replay store (Map of nonce → expiry, swept once a minute). As in any in-process store, a
//        replay is caught only by the worker that saw the first use: weaker than Palisade's shared one.
// Policies come from the runner as JSON in BENCH_P_POLICIES ({name: {algorithm, cost, keyLength,
// counterMin, counterMax, expiresInMs}}); the primary draws the two secrets and passes them to workers.
//   PORT=8080 WORKERS=2 BENCH_P_POLICIES='{"default":{…}}' node dist/bench/baselines/fastify-altcha.js
import { randomBytes, randomInt } from 'node:crypto';
import { createChallenge, verifySolution, type Challenge, type DeriveKeyFunction, type Solution } from 'altcha-lib';
import { deriveKey as derivePbkdf2 } from 'altcha-lib/algorithms/pbkdf2';
import { deriveKey as deriveSha } from 'altcha-lib/algorithms/sha';
import Fastify from 'fastify';
import { runClustered } from './cluster.js';

export interface BaselinePolicy {
  readonly algorithm: string;
  readonly cost: number;
  readonly keyLength: number;
  readonly counterMin: number;
  readonly counterMax: number;
  readonly expiresInMs: number;
}

const port = Number(process.env.PORT ?? 8080);

await runClustered(serve, {
  BENCH_P_SECRET: randomBytes(32).toString('hex'),
  BENCH_P_KEY_SECRET: randomBytes(32).toString('hex'),
});

async function serve(): Promise<void> {
  const policies = new Map(Object.entries(JSON.parse(process.env.BENCH_P_POLICIES ?? '{}') as Record<string, BaselinePolicy>));
  const hmacSignatureSecret = process.env.BENCH_P_SECRET!;
  const hmacKeySignatureSecret = process.env.BENCH_P_KEY_SECRET!;
  const used = new Map<string, number>();
  setInterval(() => {
    const now = Date.now();
    for (const [nonce, expires] of used) if (expires <= now) used.delete(nonce);
  }, 60_000).unref();

  const deriveFor = (algorithm: string): DeriveKeyFunction => (algorithm.startsWith('PBKDF2/') ? derivePbkdf2 : deriveSha);

  const app = Fastify({ logger: false });

  app.get<{ Querystring: { apiKey?: string } }>('/v1/challenge', async (req, reply) => {
    const policy = policies.get(req.query.apiKey ?? 'default');
    if (policy === undefined) return reply.code(401).send({ error: 'API_KEY_INVALID', statusCode: 401 });
    reply.header('cache-control', 'no-store');
    return createChallenge({
      algorithm: policy.algorithm,
      cost: policy.cost,
      keyLength: policy.keyLength,
      counter: randomInt(policy.counterMin, policy.counterMax + 1),
      deriveKey: deriveFor(policy.algorithm),
      expiresAt: new Date(Date.now() + policy.expiresInMs),
      hmacSignatureSecret,
      hmacKeySignatureSecret,
    });
  });

  app.post<{ Body: { payload?: unknown } }>('/v1/verify', async (req, reply) => {
    const payload = req.body?.payload;
    let decoded: { challenge: Challenge; solution: Solution };
    try {
      if (typeof payload !== 'string') throw new Error('payload');
      decoded = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
      if (typeof decoded?.challenge?.parameters?.nonce !== 'string') throw new Error('payload');
    } catch {
      return reply.code(400).send({ error: 'INVALID_PAYLOAD', statusCode: 400 });
    }
    const { challenge, solution } = decoded;
    const nonce = challenge.parameters.nonce;
    if (used.has(nonce)) return { verified: false, reason: 'PAYLOAD_ALREADY_USED' };
    const result = await verifySolution({
      challenge, solution, deriveKey: deriveFor(challenge.parameters.algorithm), hmacSignatureSecret, hmacKeySignatureSecret,
    });
    if (!result.verified) return { verified: false, reason: result.expired ? 'CHALLENGE_EXPIRED' : 'INVALID_SOLUTION' };
    // Checked again after the await: another request with the same nonce may have won meanwhile.
    if (used.has(nonce)) return { verified: false, reason: 'PAYLOAD_ALREADY_USED' };
    used.set(nonce, (challenge.parameters.expiresAt ?? 0) * 1000);
    return { verified: true };
  });

  await app.listen({ port, host: '0.0.0.0' });
}
