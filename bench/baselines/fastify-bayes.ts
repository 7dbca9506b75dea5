// Baseline B: text classification the ecosystem's usual way. A Fastify cluster (node:cluster, same
// worker count as the service) with wink-naive-bayes-text-classifier (MIT), trained at start on
// bench/lib/training-sample.ts (20 spam, 20 legitimate messages): its README's pipeline, a
// tokenizer as the prep task, multinomial with Laplace smoothing (the package's defaults).
//   POST /v1/classifier  {"text": string | string[], …}  with `Authorization: Bearer <BENCH_B_TOKEN>`
//   → 200 {"classification": "GOOD" | "BAD", "score": log-odds of spam}; 401 without the token.
// Fastify parses the JSON body (its default parser, limit 1 MB); the other fields of S6's body are
// read past, as such a server would.
//   PORT=8080 WORKERS=2 BENCH_B_TOKEN=sec_… node dist/bench/baselines/fastify-bayes.js
import { timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import Fastify from 'fastify';
import { HAM_SAMPLE, SPAM_SAMPLE } from '../lib/training-sample.js';
import { runClustered } from './cluster.js';

/** The few methods of wink-naive-bayes-text-classifier used here (the package ships no types). */
interface NaiveBayes {
  definePrepTasks(tasks: ((input: never) => unknown)[]): number;
  defineConfig(config: { considerOnlyPresence?: boolean; smoothingFactor?: number }): boolean;
  learn(input: string, label: string): boolean;
  consolidate(): boolean;
  computeOdds(input: string): [string, number][];
}
const createClassifier = createRequire(import.meta.url)('wink-naive-bayes-text-classifier') as () => NaiveBayes;

const port = Number(process.env.PORT ?? 8080);

await runClustered(serve);

/** Lower-case words of letters and digits: the usual tokenizer in front of a naive-Bayes model. */
function tokenize(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t !== '');
}

async function serve(): Promise<void> {
  const nb = createClassifier();
  nb.definePrepTasks([tokenize]);
  nb.defineConfig({ considerOnlyPresence: false, smoothingFactor: 1 });
  for (const t of SPAM_SAMPLE) nb.learn(t, 'spam');
  for (const t of HAM_SAMPLE) nb.learn(t, 'ham');
  nb.consolidate();

  const token = Buffer.from(`Bearer ${process.env.BENCH_B_TOKEN ?? ''}`);
  const app = Fastify({ logger: false });
  app.get('/.live', async () => 'ok'); // the runner's readiness probe
  app.post<{ Body: { text?: unknown } }>('/v1/classifier', async (req, reply) => {
    const auth = Buffer.from(req.headers.authorization ?? '');
    if (auth.length !== token.length || !timingSafeEqual(auth, token)) {
      return reply.code(401).send({ error: 'AUTHORIZATION_REQUIRED', statusCode: 401 });
    }
    const text = req.body?.text;
    const input = typeof text === 'string' ? text : Array.isArray(text) ? text.filter((t) => typeof t === 'string').join('\n') : null;
    if (input === null) return reply.code(400).send({ error: 'INVALID_PARAMETER', statusCode: 400 });
    const odds = nb.computeOdds(input);
    const spam = odds.find(([label]) => label === 'spam')?.[1] ?? 0;
    return { classification: spam > 0 ? 'BAD' : 'GOOD', score: spam };
  });
  await app.listen({ port, host: '0.0.0.0' });
}
