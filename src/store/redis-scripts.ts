// The Lua scripts of the Redis state store (redis-store.ts), each atomic on the server. Windows and
// penalty additions are clocked by the server's TIME, so every node agrees on window boundaries;
// claims, hits and counts take a whole event-loop turn's keys at once (redis-batch.ts).
import type { RedisClient } from './redis-client.js';
import { STORE_LIMITS, type HitResult } from './state-store.js';

// Window state in one string "held:expiry:count" (expiry: the window's end, or the held-until
// while held; epoch ms). The same rules as native/shm-table.cc Table::Hit. One hit per key, in
// order (two hits on one key in a batch count twice); ARGV holds limit, window, hold per key; the
// reply is five numbers per key.
const HITS_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local shed = ARGV[#ARGV] == '1'
local out = {}
local skipped, created = 0, 0
for i = 1, #KEYS do
  local limit, win, hold = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
  local held, expiry, count = 0, 0, 0
  local v = redis.call('GET', KEYS[i])
  if v then
    local h, e, c = string.match(v, '^(%d):(%d+):(%d+)$')
    if h then held, expiry, count = tonumber(h), tonumber(e), tonumber(c) end
  end
  if expiry <= now then
    held, count, expiry = 0, 0, (math.floor(now / win) + 1) * win
  end
  count = math.min(count + 1, ${STORE_LIMITS.maxRuleCount + 1})
  local allowed = 0
  if held == 0 and count <= limit then allowed = 1 end
  if held == 0 and count > limit and hold > 0 then
    held, expiry = 1, math.max(expiry, now + hold)
  end
  if v or not shed then
    if not v then created = created + 1 end
    redis.call('SET', KEYS[i], string.format('%d:%d:%d', held, expiry, count), 'PX', string.format('%d', expiry - now))
  else
    skipped = skipped + 1
  end
  local remaining, blocked = 0, 0
  if allowed == 1 then remaining = limit - count end
  if held == 1 then blocked = expiry end
  local o = 5 * (i - 1)
  out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = allowed, remaining, expiry - now, blocked, count
end
out[#out + 1] = skipped
out[#out + 1] = created
return out
`;

const PEEK_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit, win = tonumber(ARGV[1]), tonumber(ARGV[2])
local held, expiry, count = 0, 0, 0
local v = redis.call('GET', KEYS[1])
if v then
  local h, e, c = string.match(v, '^(%d):(%d+):(%d+)$')
  if h then held, expiry, count = tonumber(h), tonumber(e), tonumber(c) end
end
if expiry <= now then
  return {1, limit, (math.floor(now / win) + 1) * win - now, 0, 0}
end
local allowed, remaining, blocked = 0, 0, 0
if held == 0 and count < limit then allowed, remaining = 1, limit - count end
if held == 1 then blocked = expiry end
return {allowed, remaining, expiry - now, blocked, count}
`;

// One `SET key 1 <PX ttl | PXAT until> NX` per key, in order (the first of two claims of one id in
// a batch wins); ARGV holds the expiry option and its value per key.
const CLAIMS_LUA = `
local out = {}
for i = 1, #KEYS do
  if redis.call('SET', KEYS[i], '1', ARGV[2 * i - 1], ARGV[2 * i], 'NX') then out[i] = 1 else out[i] = 0 end
end
return out
`;

// Counters (countUpTo): a decimal count, PXAT fixed at creation. ARGV holds limit, seed (-1: none)
// and the expiry moment per key; the reply is two numbers per key: allowed (1, 0, or -1 when the
// counter is absent and no seed was given) and the count after.
const COUNTS_LUA = `
local out = {}
for i = 1, #KEYS do
  local limit, seed = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1])
  local count = tonumber(redis.call('GET', KEYS[i]))
  if count == nil and seed >= 0 then
    count = seed
    redis.call('SET', KEYS[i], ARGV[3 * i - 1], 'PXAT', ARGV[3 * i])
  end
  if count == nil then
    out[2 * i - 1], out[2 * i] = -1, 0
  elseif count < limit then
    out[2 * i - 1], out[2 * i] = 1, redis.call('INCR', KEYS[i])
  else
    out[2 * i - 1], out[2 * i] = 0, count
  end
end
return out
`;

// ARGV[3] '1' while shedding: an absent key is not created. Reply: {score, 0 updated | 1 created | 2 not stored}.
const PENALTY_LUA = `
local v = redis.call('GET', KEYS[1])
local s = math.min((tonumber(v) or 0) + tonumber(ARGV[1]), ${STORE_LIMITS.maxPenalty})
if not v and ARGV[3] == '1' then return {s, 2} end
redis.call('SET', KEYS[1], string.format('%d', s), 'PX', ARGV[2])
if v then return {s, 0} end
return {s, 1}
`;

export type Reply5 = [number, number, number, number, number];

export interface ScriptCommands {
  palisadeHits(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
  palisadePeek(key: string, limit: number, windowMs: number): Promise<Reply5>;
  palisadePenalty(key: string, n: number, ttlMs: number, shed: string): Promise<[number, number]>;
  palisadeClaims(numberOfKeys: number, ...keysThenTtls: (string | number)[]): Promise<number[]>;
  palisadeCounts(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
}

/** Defines the scripts as commands of `client` (ScriptCommands). */
export function defineScripts(client: RedisClient): void {
  client.defineCommand('palisadeHits', { lua: HITS_LUA });
  client.defineCommand('palisadePeek', { numberOfKeys: 1, lua: PEEK_LUA, readOnly: true });
  client.defineCommand('palisadePenalty', { numberOfKeys: 1, lua: PENALTY_LUA });
  client.defineCommand('palisadeClaims', { lua: CLAIMS_LUA });
  client.defineCommand('palisadeCounts', { lua: COUNTS_LUA });
}

/** A peek's reply as a HitResult. */
export function toHitResult(r: Reply5): HitResult {
  return { allowed: r[0] === 1, remaining: r[1], resetMs: r[2], blockedUntil: r[3], count: r[4] };
}
