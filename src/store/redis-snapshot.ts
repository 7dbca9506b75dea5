// Snapshots of the state in Redis (SNAPSHOTS_REDIS_SCHEDULE): every key under the store's prefix
// (used challenges, rate-limit windows, penalties, counters) with its value as DUMP gives it and
// its absolute expiry, as gzip'd JSON lines; a restore puts back each key whose expiry has not
// passed (RESTORE … ABSTTL REPLACE), so a restored claim still refuses its payload and nothing
// lives longer than it would have. The shared-memory store of a single node is a file in DATA_DIR:
// it has no scheduled snapshot (configuration refuses the schedule without REDIS_URL).
//
// File: line 1 {"palisade":"snapshot","format":1,"kind":"redis","prefix":…,"createdAt":…}, then
// one [key (base64), value (base64 DUMP), expires at (epoch ms, 0 = never)] per key.
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { createRedisClient, masters, type RedisClient } from './redis-client.js';

export const REDIS_SNAPSHOT_PREFIX = 'palisade:';

export interface RedisSnapshotHeader {
  readonly palisade: 'snapshot';
  readonly format: 1;
  readonly kind: 'redis';
  readonly prefix: string;
  readonly createdAt: string;
}

function connectTo(url: string): RedisClient {
  return createRedisClient(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
}

/** Every key under `prefix`: SCAN on each master (a cluster's keys are spread over them), DUMP through the client. */
async function* lines(client: RedisClient, prefix: string, now: number, count: { keys: number }): AsyncGenerator<string> {
  const header: RedisSnapshotHeader = { palisade: 'snapshot', format: 1, kind: 'redis', prefix, createdAt: new Date(now).toISOString() };
  yield `${JSON.stringify(header)}\n`;
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  for (const node of masters(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scanBuffer(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = String(next);
      for (const key of keys) {
        const [[, value], [, pttl]] = (await client.multi().dumpBuffer(key).pttl(key).exec()) as [[unknown, Buffer | null], [unknown, number]];
        if (value === null || pttl === -2) continue; // gone between SCAN and DUMP
        count.keys++;
        yield `${JSON.stringify([key.toString('base64'), value.toString('base64'), pttl < 0 ? 0 : now + pttl])}\n`;
      }
    } while (cursor !== '0');
  }
}

/** Writes every key under `prefix` of the Redis at `url` to `file`. */
export async function writeRedisSnapshot(url: string, file: string, now = Date.now(), prefix = REDIS_SNAPSHOT_PREFIX): Promise<{ keys: number }> {
  const client = connectTo(url);
  const count = { keys: 0 };
  try {
    await client.connect();
    await pipeline(Readable.from(lines(client, prefix, now, count)), createGzip(), createWriteStream(file, { mode: 0o600, flags: 'wx' }));
  } finally {
    client.disconnect();
  }
  return count;
}

/** Is `file` a Redis state snapshot (by its first line)? */
export async function isRedisSnapshot(file: string): Promise<boolean> {
  const rl = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  try {
    for await (const line of rl) {
      const header = JSON.parse(line) as Partial<RedisSnapshotHeader>;
      return header.palisade === 'snapshot' && header.kind === 'redis';
    }
    return false;
  } catch {
    return false;
  } finally {
    rl.close();
  }
}

/** Puts back every key of the snapshot whose expiry has not passed; returns how many were restored and skipped. */
export async function restoreRedisSnapshot(url: string, file: string, now = Date.now()): Promise<{ header: RedisSnapshotHeader; restored: number; expired: number }> {
  const rl = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  const it = rl[Symbol.asyncIterator]();
  const first = await it.next();
  const header = (first.done ? null : JSON.parse(first.value)) as RedisSnapshotHeader | null;
  if (header === null || header.palisade !== 'snapshot' || header.format !== 1 || header.kind !== 'redis') {
    rl.close();
    throw new Error(`${file} is not a Palisade Redis snapshot`);
  }
  const client = connectTo(url);
  let restored = 0;
  let expired = 0;
  try {
    await client.connect();
    for (let next = await it.next(); !next.done; next = await it.next()) {
      if (next.value === '') continue;
      const [key, value, expiresAt] = JSON.parse(next.value) as [string, string, number];
      if (expiresAt !== 0 && expiresAt <= now) { expired++; continue; }
      const k = Buffer.from(key, 'base64');
      const v = Buffer.from(value, 'base64');
      if (expiresAt === 0) await client.restore(k, 0, v, 'REPLACE');
      else await client.call('RESTORE', k, String(expiresAt), v, 'REPLACE', 'ABSTTL');
      restored++;
    }
  } finally {
    rl.close();
    client.disconnect();
  }
  return { header, restored, expired };
}
