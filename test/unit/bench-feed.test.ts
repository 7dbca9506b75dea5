// The verify scenarios' request feed (bench/lib/feed-request.cjs): each body is handed out once,
// in order, and past the end requests go to GET /.live instead of replaying a payload (a replay
// earns the load generator's address a penalty and then a block for the rest of the invocation);
// a repeating feed (L's stand-in body) sends its body every time, in both generators.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { buildFeed } from '../../bench/lib/payloads.js';
import { FEED_MODULE } from '../../bench/lib/load.js';
import { requestSource } from '../../bench/lib/paced.js';

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

test('bench feed: a repeating feed (L\'s stand-in body) sends its last body every time, never GET /.live', () => {
  const feed = buildFeed(['{"payload":"L"}'], true);
  feedModule.attach(feed);
  for (let i = 0; i < 4; i++) {
    const r = feedModule({ method: 'POST', path: '/v1/verify?apiKey=k', body: undefined });
    assert.deepEqual([r.method, r.path, String(r.body)], ['POST', '/v1/verify?apiKey=k', '{"payload":"L"}']);
  }
});

test('bench feed: the paced generator hands out the same requests (once each, then GET /.live; a repeating feed again and again)', () => {
  const spec = (feed: ReturnType<typeof buildFeed>) =>
    ({ method: 'POST', path: '/v1/verify?apiKey=k', headers: { 'content-type': 'application/json' }, feed }) as const;
  const once = requestSource(spec(buildFeed(['{"payload":"a"}'])), '127.0.0.1:8080');
  assert.equal(once().toString('latin1'),
    'POST /v1/verify?apiKey=k HTTP/1.1\r\nhost: 127.0.0.1:8080\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n{"payload":"a"}');
  assert.equal(once().toString('latin1'), 'GET /.live HTTP/1.1\r\nhost: 127.0.0.1:8080\r\n\r\n');
  const repeating = requestSource(spec(buildFeed(['{"payload":"L"}'], true)), '127.0.0.1:8080');
  for (let i = 0; i < 4; i++) {
    assert.equal(repeating().toString('latin1'),
      'POST /v1/verify?apiKey=k HTTP/1.1\r\nhost: 127.0.0.1:8080\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n{"payload":"L"}');
  }
});
