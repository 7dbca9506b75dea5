// The S3n scenario's client-side Redis counter (bench/lib/redis-count.cjs), preloaded into a process
// as the bench preloads it into the nodes: requests counted by command, a defined script by its name
// (though sent as EVALSHA), and one round trip per event-loop turn that sent something other than INFO.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { startThrowawayRedis, type ThrowawayRedis } from '../helpers/redis-server.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const COUNT_MODULE = join(ROOT, 'bench', 'lib', 'redis-count.cjs');

let redis: ThrowawayRedis;
before(async () => { redis = await startThrowawayRedis(); });
after(async () => { await redis.stop(); });

// After connecting: PING, then a script, a SET and a GET sent together (one turn), then the script
// again. INFO memory (as the store's memory check sends it) is a request but no round trip of its own.
const CLIENT = `
import { Redis } from 'ioredis';
const r = new Redis(process.env.URL, { lazyConnect: true });
r.defineCommand('benchTwoSets', { numberOfKeys: 2, lua: "redis.call('SET', KEYS[1], '1'); redis.call('SET', KEYS[2], '1'); return 1" });
await r.connect();
await r.ping();
await Promise.all([r.benchTwoSets('a', 'b'), r.set('c', '1'), r.get('c')]);
await r.benchTwoSets('d', 'e');
await r.info('memory');
await new Promise((resolve) => setTimeout(resolve, 250));
r.disconnect();
`;

test('bench redis counter: requests by command and script name, round trips per event-loop turn, INFO not a round trip', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-count-'));
  try {
    redis.command('CONFIG', 'RESETSTAT');
    await promisify(execFile)(process.execPath, ['--require', COUNT_MODULE, '--input-type=module', '-e', CLIENT], {
      cwd: ROOT, env: { PATH: process.env.PATH ?? '', URL: redis.url, BENCH_REDIS_COUNT_DIR: dir },
    });
    const files = readdirSync(dir);
    assert.equal(files.length, 1);
    const counts = JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as { commands: Record<string, number>; turns: number };
    // On connecting ioredis sends CLIENT SETINFO twice (library name, then version: two turns) and
    // INFO for its ready check; the client's own INFO is the second.
    assert.deepEqual(counts.commands, { client: 2, info: 2, ping: 1, benchTwoSets: 2, set: 1, get: 1 });
    assert.equal(counts.turns, 5);
    // Redis itself counts the SETs the script ran as commands, and cannot tell the requests apart.
    const calls = Object.fromEntries(redis.command('INFO', 'commandstats').split('\n')
      .map((l) => /^cmdstat_([^:]+):calls=(\d+)/.exec(l.trim())).filter((m) => m !== null).map((m) => [m[1], Number(m[2])]));
    assert.equal(calls['set'], 5);
    assert.equal((calls['eval'] ?? 0) + (calls['evalsha'] ?? 0), 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
