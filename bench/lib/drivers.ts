// How one target is loaded in one scenario: the request it gets (path, headers, body) and, for
// the verify scenarios, a fresh feed of pre-solved payloads before every run, sized from the rate
// measured so far; a run that used up its feed is thrown away and repeated with a larger one, so no
// measured run contains a replayed payload.
import { Agent, request } from 'node:http';
import type { Scenario } from '../scenarios/scenario.js';
import { BENCH_ORIGIN, type KeyName } from './keys.js';
import { runLoad, type LoadResult, type RequestSpec, type WrkRequest } from './load.js';
import { runPaced } from './paced.js';
import { serverCpuMs } from './processes.js';
import { buildFeed, prepareFeed, solvePayload, verifyBody } from './payloads.js';
import type { Target } from './targets.js';
import type { Feed } from './types.js';

export interface DriverContext {
  readonly connections: number;
  readonly loadWorkers: number;
  readonly keys: Readonly<Record<KeyName, string>>;
  /** The keys' secrets (the classifier scenario's `Authorization: Bearer`). */
  readonly secrets: Readonly<Record<KeyName, string>>;
  log(message: string): void;
}

/** full: as fast as possible; autocannon: autocannon -R at `rate`; paced: bench/lib/paced.ts at `rate`. */
export type RunMode = { readonly kind: 'full' } | { readonly kind: 'autocannon' | 'paced'; readonly rate: number };

export interface Driver {
  run(durationS: number, mode: RunMode): Promise<LoadResult>;
  /** The same request for wrk (not the verify scenarios: they need a different body per request). */
  readonly wrk: WrkRequest | null;
}

/** First guess of a verify target's rate (req/s), used to size the first feed. */
const INITIAL_ESTIMATE = 6_000;
const FEED_ATTEMPTS = 3;

/** The key a target is measured with: the scenario's, or the one it names for the target's configuration. */
export function keyOf(s: Scenario, target: Target): KeyName {
  return (target.config === null ? undefined : s.keyFor?.[target.config]) ?? s.key;
}

export function paths(s: Scenario, target: Target, keys: Readonly<Record<KeyName, string>>): { challenge: string; inspect: string; verify: string } {
  // L gets Palisade's request line, so both parse requests of the same size.
  const apiKey = target.kind === 'P' ? s.key : keys[keyOf(s, target)];
  return {
    challenge: `/v1/challenge?apiKey=${apiKey}`,
    inspect: `/v1/inspect?apiKey=${apiKey}`,
    verify: target.kind === 'P' ? '/v1/verify' : `/v1/verify?apiKey=${apiKey}`,
  };
}

export const GET_HEADERS = { origin: BENCH_ORIGIN };
export const POST_HEADERS = { origin: BENCH_ORIGIN, 'content-type': 'application/json' };

/** The classifier scenario's path and headers: the scenario key's secret, as a site's backend sends it. */
export const CLASSIFIER_PATH = '/v1/classifier';
export function classifierHeaders(s: Scenario, secrets: Readonly<Record<KeyName, string>>): Record<string, string> {
  return { ...POST_HEADERS, authorization: `Bearer ${secrets[s.key]}` };
}

/**
 * `sampleFrom`: for L in a verify scenario, a target whose challenge endpoint gives a real payload
 * to send as L's fixed body (same size as the others').
 */
export function createDriver(s: Scenario, target: Target, ctx: DriverContext, sampleFrom?: Target): Driver {
  const url = target.server.url;
  const p = paths(s, target, ctx.keys);
  const load = async (request: RequestSpec, durationS: number, mode: RunMode): Promise<LoadResult> => {
    const common = { url, request, durationS, connections: ctx.connections };
    // The server's CPU over the load alone (not the verify scenarios' feed preparation): a figure the
    // other jobs on a shared machine move far less than req/s.
    const before = serverCpuMs(target.server);
    const result = mode.kind === 'paced'
      ? await runPaced({ ...common, rate: mode.rate })
      : await runLoad({ ...common, workers: ctx.loadWorkers, ...(mode.kind === 'autocannon' ? { rate: mode.rate } : {}) });
    const after = serverCpuMs(target.server);
    const answers = Object.values(result.statusCodes).reduce((a, b) => a + b, 0);
    const cpu = before === null || after === null || answers === 0 ? null : Math.round(((after - before) * 1000) / answers);
    return { ...result, serverCpuUsPerAnswer: cpu };
  };

  if (s.endpoint === 'classifier') {
    // Every target (L and B included) gets the very same request: path, headers and the fixed body.
    if (s.body === undefined) throw new Error(`${s.id}: the classifier scenario needs a body`);
    const body = s.body;
    const headers = classifierHeaders(s, ctx.secrets);
    return {
      run: (d, mode) => load({ method: 'POST', path: CLASSIFIER_PATH, headers, body }, d, mode),
      wrk: { url: url + CLASSIFIER_PATH, headers, method: 'POST', body },
    };
  }
  if (s.endpoint !== 'verify') {
    const path = getPath(s, p);
    return {
      run: (d, mode) => load({ method: 'GET', path, headers: GET_HEADERS }, d, mode),
      wrk: { url: url + path, headers: GET_HEADERS },
    };
  }
  if (target.kind === 'L') {
    // L gets its body through the same per-request feed as the others (a feed of one body, sent
    // again and again): autocannon spends the same on building each request for every target, so
    // the generator's share of the two cores is the same and ÷ L compares the servers alone.
    let feed: Feed | undefined;
    return {
      wrk: null,
      async run(d, mode) {
        if (feed === undefined) {
          if (!sampleFrom) throw new Error('L in a verify scenario needs a target to take a sample payload from');
          const res = await fetch(sampleFrom.server.url + paths(s, sampleFrom, ctx.keys).challenge, { headers: GET_HEADERS });
          feed = buildFeed([verifyBody(solvePayload(await res.text()))], true);
        }
        return load({ method: 'POST', path: p.verify, headers: POST_HEADERS, feed }, d, mode);
      },
    };
  }
  let estimate = INITIAL_ESTIMATE;
  return {
    wrk: null,
    async run(durationS, mode) {
      const rate = mode.kind === 'full' ? undefined : mode.rate;
      for (let attempt = 1; ; attempt++) {
        // autocannon -R hands out per-second budgets, and the last second may start just before the end.
        const count = rate === undefined
          ? Math.ceil(estimate * 1.3 * durationS) + 3 * ctx.connections
          : Math.ceil(rate * (durationS + 1)) + 3 * ctx.connections;
        const started = performance.now();
        const feed = await prepareFeed(url, p.challenge, GET_HEADERS, count);
        ctx.log(`    ${target.id}: ${count} payloads fetched and solved in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        const result = await load({ method: 'POST', path: p.verify, headers: POST_HEADERS, feed }, durationS, mode);
        const claimed = result.fed!.claimed;
        if (rate === undefined) estimate = Math.max(estimate, result.rps);
        if (claimed <= count) return result;
        estimate = Math.max(estimate * 2, (claimed / durationS) * 1.5);
        if (attempt === FEED_ATTEMPTS) {
          ctx.log(`    ${target.id}: feed still too small after ${attempt} attempts; keeping a run whose last requests went to /.live`);
          return result;
        }
        ctx.log(`    ${target.id}: feed of ${count} used up; repeating the run with a larger one`);
      }
    },
  };
}

/**
 * Before measuring a verify target: one payload verifies, and the same payload again, on the same
 * connection, is refused as a replay. (The same connection because P's replay store lives in each
 * worker: a replay reaching another worker gets through there, which is P's design, not the bench's
 * concern.) Returns why not, or null.
 */
export async function checkVerify(s: Scenario, target: Target, keys: Readonly<Record<KeyName, string>>): Promise<string | null> {
  const p = paths(s, target, keys);
  const challenge = await fetch(target.server.url + p.challenge, { headers: GET_HEADERS });
  if (challenge.status !== 200) return `GET ${p.challenge.replace(/apiKey=.*/, 'apiKey=…')} answered ${challenge.status}`;
  const body = verifyBody(solvePayload(await challenge.text()));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = () => new Promise<{ status: number; json: { verified?: boolean; reason?: string } | null }>((resolve, reject) => {
    const req = request(target.server.url + p.verify, { method: 'POST', headers: POST_HEADERS, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        let json = null;
        try { json = JSON.parse(text) as { verified?: boolean; reason?: string }; } catch { /* reported below */ }
        resolve({ status: res.statusCode ?? 0, json });
      });
    });
    req.once('error', reject);
    req.end(body);
  });
  try {
    const first = await post();
    if (first.status !== 200 || first.json?.verified !== true) return `POST /v1/verify answered ${first.status} ${JSON.stringify(first.json)}`;
    const again = await post();
    if (again.json?.verified !== false) return `a replayed payload was not refused: ${again.status} ${JSON.stringify(again.json)}`;
    return null;
  } finally {
    agent.destroy();
  }
}

/** The blocks a classification with every input present must carry (docs/classifier.md). */
const CLASSIFIER_BLOCKS = ['text', 'email', 'ip', 'location', 'device', 'similarity'] as const;

/**
 * Before measuring a classifier target: the scenario's request answers 200 with a classification;
 * Palisade's answer carries every block (no signal left out), the MX rule found the domain's mail
 * server (the loopback DNS server answered), and the text was read as English. Returns why not, or null.
 */
export async function checkClassifier(s: Scenario, target: Target, secrets: Readonly<Record<KeyName, string>>): Promise<string | null> {
  const res = await fetch(target.server.url + CLASSIFIER_PATH, { method: 'POST', headers: classifierHeaders(s, secrets), body: s.body });
  const text = await res.text();
  if (res.status !== 200) return `POST ${CLASSIFIER_PATH} answered ${res.status} ${text.slice(0, 200)}`;
  const json = JSON.parse(text) as Record<string, unknown>;
  if (typeof json.classification !== 'string') return `POST ${CLASSIFIER_PATH} gave no classification: ${text.slice(0, 200)}`;
  if (target.kind !== 'palisade') return null;
  const missing = CLASSIFIER_BLOCKS.filter((b) => json[b] === null || typeof json[b] !== 'object');
  if (missing.length > 0) return `the classification has no ${missing.join(', ')} block: not every signal ran`;
  const email = json.email as { rules?: Record<string, { score?: number }> };
  if (email.rules?.MX?.score !== 0) return `the MX rule fired (${JSON.stringify(email.rules?.MX)}): the loopback DNS server did not answer`;
  const language = (json.text as { language?: unknown }).language;
  if (language !== 'en') return `the text was read as ${JSON.stringify(language)}, not en`;
  return null;
}

/** The path of a GET scenario. */
function getPath(s: Scenario, p: ReturnType<typeof paths>): string {
  return s.endpoint === 'ops' ? '/.live' : s.endpoint === 'inspect' ? p.inspect : p.challenge;
}

/** Before measuring a GET target: one challenge (or inspection) comes back. Returns why not, or null. */
export async function checkChallenge(s: Scenario, target: Target, keys: Readonly<Record<KeyName, string>>): Promise<string | null> {
  const path = getPath(s, paths(s, target, keys));
  const res = await fetch(target.server.url + path, { headers: GET_HEADERS });
  const text = await res.text();
  if (res.status !== 200) {
    const shown = path.replace(/apiKey=.*/, 'apiKey=…');
    return res.status === 404 && s.endpoint !== 'ops'
      ? `GET ${shown} answered 404 (the route is not wired into the service yet)`
      : `GET ${shown} answered ${res.status} ${text.slice(0, 200)}`;
  }
  if (s.endpoint === 'challenge' && !text.includes('"parameters"')) return `GET ${path} did not return a challenge: ${text.slice(0, 200)}`;
  if (s.endpoint === 'inspect' && !text.includes('"location"')) return `GET ${path} did not return an inspection: ${text.slice(0, 200)}`;
  return null;
}
