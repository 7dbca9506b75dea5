// Child process for test/integration/db-usage-processes.test.ts: counts usage and logs requests
// for the given keys from several async tasks through its own usage buffer, then flushes and exits.
//   node usage-writer.js '<json: {target, keys, perTask, tasks}>'
import { openDatabase } from '../../src/db/client.js';
import { writeUsageBatch } from '../../src/db/usage.js';
import { createUsageBuffer, type Classification } from '../../src/usage/usage-buffer.js';

interface Job {
  target: { socketPath?: string; postgresUrl?: string; schema?: string; mysqlUrl?: string; libsqlUrl?: string };
  keys: { id: string; accountId: string }[];
  perTask: number;
  tasks: number;
}

const job = JSON.parse(process.argv[2]!) as Job;
const db = openDatabase({ ...job.target, maxConnections: 2 });
const buffer = createUsageBuffer((batch) => writeUsageBatch(db.sql, batch, { requestLogHmacSecret: 'usage-writer-hmac-secret-0123456789' }), {
  flushIntervalMs: 20, maxBatchRows: 300, timeZone: 'UTC',
});
buffer.start();
const classes: (Classification | null)[] = ['GOOD', 'NEUTRAL', 'BAD', null];
await Promise.all(Array.from({ length: job.tasks }, async (_, task) => {
  for (let i = 0; i < job.perTask; i++) {
    const key = job.keys[(task + i) % job.keys.length]!;
    buffer.countUsage(key, classes[i % 4]!, i % 5 === 0 ? `https://t${task % 3}.example` : null);
    buffer.logRequest({ apiKeyId: key.id, accountId: key.accountId, ip: '192.0.2.55', method: 'GET', path: '/v1/challenge', status: 200, durationMs: 0.5 });
    if (i % 100 === 0) await new Promise((r) => setImmediate(r));
  }
}));
const ok = await buffer.close(60_000);
await db.close();
process.stdout.write(JSON.stringify({ ok, stats: buffer.stats() }));
process.exitCode = ok ? 0 : 1;
