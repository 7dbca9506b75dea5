// The verify scenarios' request feed (bench/lib/feed-request.cjs): each body is handed out once,
// in order, and past the end requests go to GET /.live instead of replaying a payload (a replay
// earns the load generator's address a penalty and then a block for the rest of the invocation).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { buildFeed } from '../../bench/lib/payloads.js';
import { FEED_MODULE } from '../../bench/lib/load.js';

interface Req { method: string; path: string; body?: Buffer | string | undefined }
const feedModule = createRequire(import.meta.url)(FEED_MODULE) as ((r: Req) => Req) & { attach(f: unknown): void };

test('bench feed: bodies in order, once each, then GET /.live without a body', () => {
  const feed = buildFeed(['{"payload":"a"}', '{"payload":"bb"}']);
  feedModule.attach(feed);
  const take = () => feedModule({ method: 'POST', path: '/v1/verify?apiKey=k', body: undefined });
  const first = take();
  assert.equal(first.method, 'POST');
  assert.equal(first.path, '/v1/verify?apiKey=k');
  assert.equal(String(first.body), '{"payload":"a"}');
  assert.equal(String(take().body), '{"payload":"bb"}');
  for (let i = 0; i < 3; i++) {
    const past = take();
    assert.deepEqual([past.method, past.path, past.body], ['GET', '/.live', undefined]);
  }
  assert.equal(new Int32Array(feed.next)[0], 5, 'every claim is counted, so the runner sees the overrun');
});
