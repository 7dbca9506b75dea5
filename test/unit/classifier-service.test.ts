// The training-data cache (CACHE_DURATION_TRAINING_DATA) and the writer of spam submissions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NewSpamSubmission } from '../../src/db/spam-submissions.js';
import { createSubmissionSink, MAX_SUBMISSION_TEXT, submissionText } from '../../src/classifier/submissions.js';
import { createTrainingCache } from '../../src/classifier/training-cache.js';
import type { TrainingExample } from '../../src/classifier/similarity.js';

const example = (id: string): TrainingExample => ({ id, text: `example text number ${id}`, threshold: 0.7, weight: 1 });

test('training cache: one load per account and period; the old index serves while the next loads; invalidate forgets', async () => {
  let now = 0;
  const loads: string[] = [];
  let release: (() => void) | null = null;
  const cache = createTrainingCache(async (accountId) => {
    loads.push(accountId);
    if (loads.length === 3) await new Promise<void>((r) => { release = r; });
    return loads.length === 1 ? [example('a')] : [example('a'), example('b')];
  }, { ttlMs: 1000, now: () => now });
  const first = cache.index('acc_1');
  assert.ok(first instanceof Promise);
  assert.equal((await first).size, 1);
  assert.equal((cache.index('acc_1') as { size: number }).size, 1, 'cached: no Promise');
  assert.deepEqual(loads, ['acc_1']);
  now = 1000;
  // Expired: the old index answers while the new one loads.
  assert.equal((cache.index('acc_1') as { size: number }).size, 1);
  await new Promise((r) => setImmediate(r));
  assert.equal((cache.index('acc_1') as { size: number }).size, 2);
  assert.deepEqual(loads, ['acc_1', 'acc_1']);
  cache.invalidate('acc_1');
  const reloading = cache.index('acc_1');
  assert.ok(reloading instanceof Promise);
  release!();
  assert.equal((await reloading).size, 2);
});

test('training cache: a failed first load is not cached; the least recently used account goes first', async () => {
  let fail = true;
  const cache = createTrainingCache(async () => {
    if (fail) throw new Error('database down');
    return [example('x')];
  }, { maxAccounts: 2 });
  await assert.rejects(Promise.resolve(cache.index('a')), /database down/);
  fail = false;
  assert.equal((await cache.index('a')).size, 1);
  await cache.index('b');
  cache.index('a');
  await cache.index('c');
  assert.ok(!(cache.index('a') instanceof Promise), 'a was used last: kept');
  assert.ok(cache.index('b') instanceof Promise, 'b was evicted');
});

const sub = (text: string): NewSpamSubmission => ({
  accountId: 'acc', apiKeyId: 'key', source: 'classifier', score: 5, reasons: [], text, textHash: 'h', fields: [], emailDomain: null, ip: null, country: null,
});

test('submission sink: batches of maxBatch, a bounded queue that drops and counts, a failed write reported', async () => {
  const batches: number[] = [];
  let dropped = 0;
  const errors: unknown[] = [];
  let failNext = false;
  const sink = createSubmissionSink(async (batch) => {
    if (failNext) { failNext = false; throw new Error('insert failed'); }
    batches.push(batch.length);
  }, { maxBatch: 3, maxQueue: 5, flushMs: 60_000, onDropped: () => dropped++, onError: (e) => errors.push(e) });
  for (let i = 0; i < 7; i++) sink.record(sub(`t${i}`));
  assert.equal(dropped, 2);
  await sink.flush();
  assert.deepEqual(batches, [3, 2]);
  failNext = true;
  sink.record(sub('x'));
  await sink.flush();
  assert.equal(errors.length, 1);
  await sink.close();
  assert.equal(sink.record(sub('late')), false);
  assert.equal(dropped, 3);
});

test('submission text: kept (cut to 10,000 characters) or hashed only; the hash is keyed', () => {
  const key = Buffer.alloc(32, 1);
  const long = 'x'.repeat(MAX_SUBMISSION_TEXT + 50);
  const kept = submissionText(['a', long], 'text', key);
  assert.equal(kept.text!.length, MAX_SUBMISSION_TEXT);
  assert.match(kept.textHash, /^[0-9a-f]{64}$/);
  const hashed = submissionText(['a', long], 'hash', key);
  assert.deepEqual(hashed, { text: null, textHash: kept.textHash });
  assert.notEqual(submissionText(['a', long], 'hash', Buffer.alloc(32, 2)).textHash, kept.textHash);
});
