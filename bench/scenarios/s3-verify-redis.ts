// S3: S2 with the Redis state store. Redis database 15 keeps the bench's used-challenge keys apart
// from anything else on the server; nothing is flushed (every key is a random challenge id, so runs
// cannot collide), and CACHE_DURATION_USED_CHALLENGES=30m lets them expire soon (the TTL's value
// does not change the cost of the insert).
import { connect } from 'node:net';
import type { Scenario } from './scenario.js';

export const REDIS_URL = 'redis://127.0.0.1:6379/15';

export const S3: Scenario = {
  id: 'S3',
  title: 'POST /v1/verify (unique payloads, Redis store)',
  endpoint: 'verify',
  key: 'narrow',
  configs: ['production', 'bare'],
  baselines: ['L'],
  env: { REDIS_URL, CACHE_DURATION_USED_CHALLENGES: '30m' },
  unavailable: () => redisReachable('127.0.0.1', 6379),
  async checkTarget(url) {
    const res = await fetch(`${url}/.health`);
    const health = (await res.json()) as { checks?: { redis?: { kind?: string } } };
    const kind = health.checks?.redis?.kind;
    return kind === 'redis' ? null : `the service reports state store "${kind ?? 'unknown'}" with REDIS_URL set (Redis store not wired in yet)`;
  },
  checks: [
    { kind: 'vsL', config: 'production', min: 0.3 },
  ],
};

/** null when a PING at host:port answers +PONG within a second. */
function redisReachable(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    const done = (reason: string | null) => { socket.destroy(); resolve(reason); };
    socket.setTimeout(1000, () => done(`Redis at ${host}:${port} did not answer within 1 s`));
    socket.once('error', (err) => done(`Redis at ${host}:${port} is not reachable (${(err as NodeJS.ErrnoException).code ?? err.message})`));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG') ? null : `Redis at ${host}:${port} answered ${d.toString().trim()}`));
  });
}
