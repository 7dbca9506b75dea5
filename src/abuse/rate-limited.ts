// The 429 answer shared by the flood limit and the per-key limits: {"error":"RATE_LIMITED",
// "statusCode":429} with Retry-After in whole seconds until the window resets or the hold ends.
import { errorBody } from '../errors.js';
import type { Reply } from '../http/types.js';
import type { HitResult } from '../store/state-store.js';

const BODY = errorBody('RATE_LIMITED');
/** Replies are built once per Retry-After value up to an hour (a denied flood is a hot path too). */
const CACHED_SECONDS = 3600;
const replies: (Reply | undefined)[] = [];

/** Seconds a refused client should wait: until the window resets, or until the hold ends; at least 1. */
export function retryAfterSeconds(result: HitResult, now: number): number {
  let ms = result.resetMs;
  if (result.blockedUntil > 0 && result.blockedUntil - now > ms) ms = result.blockedUntil - now;
  return ms > 1000 ? Math.ceil(ms / 1000) : 1;
}

export function rateLimitedReply(seconds: number): Reply {
  if (seconds > CACHED_SECONDS) return build(seconds);
  return (replies[seconds] ??= build(seconds));
}

function build(seconds: number): Reply {
  return Object.freeze({ status: 429, headers: Object.freeze({ 'retry-after': String(seconds) }), body: BODY });
}
