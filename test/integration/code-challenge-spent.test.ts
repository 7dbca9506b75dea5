// The "submitted" marks of code challenges (src/code-challenge/spent.ts) on Redis: reading creates
// nothing, a mark is seen by another connection, and it lasts as long as the claim.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { createSpentMarks } from '../../src/code-challenge/spent.js';
import { openRedisStore } from '../../src/store/redis-store.js';
import { deleteRedisKeys, REDIS_URL, requireService } from '../helpers/services.js';

const skip = !(await requireService('redis'));
const prefix = `palisade-test-${randomBytes(6).toString('hex')}:`;
const logger = { info: () => {}, warn: () => {}, error: () => {} };
after(async () => { if (!skip) await deleteRedisKeys(REDIS_URL, prefix); });

test('Redis: unmarked until marked, seen from another connection, gone with its moment', { skip }, async () => {
  const a = await openRedisStore(REDIS_URL, { keyPrefix: prefix, logger });
  const b = await openRedisStore(REDIS_URL, { keyPrefix: prefix, logger });
  try {
    const marksA = createSpentMarks(a);
    const marksB = createSpentMarks(b);
    const nonce = randomBytes(16).toString('hex');
    for (let i = 0; i < 3; i++) assert.equal(await marksB.isSpent(nonce), false, 'reading creates nothing');
    marksA.mark(nonce, Date.now() + 800);
    // Marking does not wait for Redis (fire and forget); the next read on another connection sees it soon after.
    let seen = false;
    for (let i = 0; i < 20 && !seen; i++) { seen = await marksB.isSpent(nonce); if (!seen) await sleep(20); }
    assert.equal(seen, true);
    await sleep(1_200);
    assert.equal(await marksB.isSpent(nonce), false);
  } finally {
    await a.close();
    await b.close();
  }
});
