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
let repeat = false;

/** feed: { data, offsets, next: SharedArrayBuffer, count: number, repeat?: boolean } (bench/lib/payloads.ts). */
function attach(feed) {
  bytes = Buffer.from(feed.data);
  offsets = new Int32Array(feed.offsets);
  next = new Int32Array(feed.next);
  count = feed.count;
  repeat = feed.repeat === true;
}

/** Sent past the end of the feed: harmless to every target (a replay would earn Palisade's penalty). */
const PAST_THE_END = '/.live';

/**
 * Claims the next request of a feed: the index of its body, or -1 past the end. Past the end the
 * runner sees the overrun in `claims` and retries the run with a larger feed, so no measured run
 * ever contains those requests; they go to PAST_THE_END, not to the verify route: replays would
 * mark the load generator's address as abusive and block it for the rest of the invocation. A
 * repeating feed (L's stand-in body in the verify scenarios) sends its last body again and again.
 * The paced generator (paced.ts) claims through this function too.
 */
function claim(claims, feedCount, feedRepeats) {
  const i = Atomics.add(claims, 0, 1);
  if (i < feedCount) return i;
  return feedRepeats ? feedCount - 1 : -1;
}

function setupRequest(request) {
  const i = claim(next, count, repeat);
  if (i < 0) {
    request.method = 'GET';
    request.path = PAST_THE_END;
    request.body = undefined;
    return request;
  }
  request.body = bytes.subarray(offsets[i], offsets[i + 1]);
  return request;
}

if (!isMainThread && workerData && workerData.opts && workerData.opts.benchFeed) attach(workerData.opts.benchFeed);

module.exports = setupRequest;
module.exports.attach = attach;
module.exports.claim = claim;
module.exports.PAST_THE_END = PAST_THE_END;
