// Where integration tests find Redis and PostgreSQL. Under CI=true an unreachable server fails the
// suite; elsewhere the suite is skipped with a loud message.
import { Socket } from 'node:net';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The machine's MariaDB (also what MYSQL_URL tests run against: mysql2 speaks to both). */
export const MARIADB_URL = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';

const SERVICES = {
  redis: { url: REDIS_URL, port: 6379 },
  postgres: { url: POSTGRES_URL, port: 5432 },
  mariadb: { url: MARIADB_URL, port: 3306 },
} as const;

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(2000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(Number(u.port || defaultPort), u.hostname.replace(/^\[|\]$/g, ''), () => done(true));
  });
}

/**
 * Resolves to `false` (skip) or `true` (run). Call at the top of an integration test file:
 *   const skip = !(await requireService('redis'));  test('...', { skip }, ...)
 */
export async function requireService(name: keyof typeof SERVICES): Promise<boolean> {
  const { url, port } = SERVICES[name];
  // A refused connection on a loaded machine (a full accept queue) is tried again before it counts.
  let ok = false;
  for (let attempt = 0; attempt < 5 && !ok; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 500));
    ok = await reachable(url, port);
  }
  if (ok) return true;
  if (process.env.CI === 'true') throw new Error(`${name} is not reachable at ${url} (CI=true: integration tests must run)`);
  console.error(`\n*** SKIPPING ${name} integration tests: ${url} is not reachable ***\n`);
  return false;
}

/** Deletes every key under `prefix` (one test's or benchmark's own keys) from the Redis at `url`. */
export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const raw = new Redis(url);
  let cursor = '0';
  do {
    const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5000);
    if (keys.length > 0) await raw.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  await raw.quit();
}
