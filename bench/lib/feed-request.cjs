// autocannon setupRequest for S2/S3: every request takes the next pre-solved payload body from a
// feed shared by all load-generator threads (a SharedArrayBuffer of bodies, their offsets and a
// claim counter), so each payload is sent exactly once across threads. CommonJS because autocannon
// require()s it inside its worker threads; the runner passes the feed as opts.benchFeed, which
// reaches each worker through workerData (SharedArrayBuffers are shared, not copied).
'use strict';
const { isMainThread, workerData } = require('node:worker_threads');

let bytes = null;
let offsets = null;
let next = null;
let count = 0;

/** feed: { data, offsets, next: SharedArrayBuffer, count: number } (bench/lib/payloads.ts). */
function attach(feed) {
  bytes = Buffer.from(feed.data);
  offsets = new Int32Array(feed.offsets);
  next = new Int32Array(feed.next);
  count = feed.count;
}

function setupRequest(request) {
  // Past the end the last body is sent again; the runner sees the overrun in `next` and retries
  // the run with a larger feed, so no measured run ever contains a replay.
  const i = Math.min(Atomics.add(next, 0, 1), count - 1);
  request.body = bytes.subarray(offsets[i], offsets[i + 1]);
  return request;
}

if (!isMainThread && workerData && workerData.opts && workerData.opts.benchFeed) attach(workerData.opts.benchFeed);

module.exports = setupRequest;
module.exports.attach = attach;
