// Battery item 6: graceful restart (SIGTERM to the whole service) under load, then a start on the
// same DATA_DIR. What "0 failed requests" means when every process goes away: once the listening
// sockets close, a new connection is refused, or reset by the kernel while it waits in the backlog
// of a listening socket being closed (SO_REUSEPORT): its first request was never read by the
// service. Every request the service accepted must get a complete response: the requests in flight
// are finished, and every keep-alive connection that had been answered before gets its next request
// answered too, with `Connection: close`, rather than being dropped under it. Usage: every request
// answered 200 is counted exactly once in the database after the restart (flushed on shutdown), so
// none of the unanswered ones was processed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { keyUsage } from '../../src/db/usage.js';
import { freshPgliteDataDir } from '../helpers/db.js';
import { createTestKey, withServiceDb, type Service, type TestKey } from '../helpers/service.js';
import { ConnectionPool, report, sleep, solvePayloads, startBatteryService, Tally } from './harness.js';
import { runVerifyLoad } from './verify-load.js';

/** Fresh payloads per second, and as many replays. */
const RATE = 150;

let dataDir: string;
let svc: Service;
let key: TestKey;

before(async () => {
  dataDir = await freshPgliteDataDir();
  svc = await startBatteryService({ WORKERS: '2' }, dataDir);
  key = await createTestKey(svc, { challengePolicy: { counterMin: 1, counterMax: 50 } });
});

after(async () => {
  await svc?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

// Regression: a draining worker closed every connection as soon as nothing was in flight, under
// requests its keep-alive clients were already sending (5-19 lost per stop at this load).
test('SIGTERM under load: every accepted request answered in full (keep-alive connections are not cut under a request), no usage count lost across the restart', async () => {
  const pool = new ConnectionPool(svc.port, 64);
  const payloads = await solvePayloads(pool, key.id, RATE * 6);
  const challenges = payloads.length;
  const load = runVerifyLoad(pool, key.id, payloads, { rate: RATE });
  await sleep(3000);
  const stopping = performance.now();
  const exit = svc.stop('SIGTERM');
  const code = await exit;
  const stoppedMs = performance.now() - stopping;
  await sleep(200);
  const records = await load.stop();
  pool.close();

  const outcomes = new Tally();
  for (const r of records) outcomes.add(r.sentAt < stopping ? `before:${r.outcome}` : `after:${r.outcome}`);
  const answered = records.filter((r) => !r.outcome.startsWith('ERR'));
  // A new connection's first request fails when the connection was refused, or reset by the kernel
  // in the backlog of a listening socket being closed: the service never read it (the usage count
  // below proves it). A request on a connection that had been answered before was accepted: none may fail.
  const dropped = records.filter((r) => r.outcome.startsWith('ERR') && !r.outcome.endsWith(':first'));
  const refused = records.filter((r) => r.outcome.startsWith('ERR') && r.outcome.endsWith(':first'));

  svc = await startBatteryService({ WORKERS: '2' }, dataDir);
  const month = new Date().toISOString().slice(0, 7);
  const counted = await withServiceDb(svc, async (sql) => (await keyUsage(sql, key.id, month)).requests);
  const expected = challenges + answered.filter((r) => r.outcome === 'VERIFIED' || r.outcome === 'PAYLOAD_ALREADY_USED').length;

  report('graceful restart', `SIGTERM under ${RATE * 2} verifications/s: exit ${code} after ${stoppedMs.toFixed(0)} ms; ` +
    `${answered.length} answered, ${dropped.length} dropped on a keep-alive connection, ` +
    `${refused.length} first requests of new connections refused or reset unread; ${outcomes}; ` +
    `usage after the restart ${counted} (expected ${expected}), replays accepted ${load.replaysAccepted()}`);

  assert.equal(code, 0);
  assert.deepEqual(dropped.map((r) => r.outcome), [], 'no request written on an established connection was lost');
  assert.deepEqual(answered.filter((r) => !['VERIFIED', 'PAYLOAD_ALREADY_USED'].includes(r.outcome)).map((r) => r.outcome), []);
  assert.equal(counted, expected, 'every answered request counted once');
  assert.equal(load.replaysAccepted(), 0);
});
