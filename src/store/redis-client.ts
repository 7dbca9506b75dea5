// The ioredis client for each REDIS_URL form (redis-url.ts): one server, a Redis Cluster or a
// master found through Redis Sentinel. The state store (redis-store.ts) and the Redis snapshots
// (redis-snapshot.ts) build their clients here, and reach every master through masters() for what
// each server answers for itself (INFO, CONFIG, SCAN).
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { parseRedisUrl, type RedisTarget } from './redis-url.js';

export type RedisClient = Redis | Cluster;

/** Connection settings shared by every form (ioredis's names). */
export interface RedisClientOptions {
  keyPrefix?: string;
  commandTimeout?: number;
  connectTimeout?: number;
  maxRetriesPerRequest?: number;
  enableOfflineQueue: boolean;
}

/** A cluster gives up on a command after this many redirections or retries (ioredis default 16). */
const CLUSTER_MAX_REDIRECTIONS = 6;
/** Wait before a command retries after TRYAGAIN (a slot being migrated). */
const CLUSTER_RETRY_DELAY_MS = 100;

/** `url` parsed; throws with the URL's problem (configuration has refused a bad one before). */
export function redisTarget(url: string): RedisTarget {
  const target = parseRedisUrl(url);
  if (target instanceof Error) throw target;
  return target;
}

/** A client for `url`, not connected yet (lazyConnect): call connect(). */
export function createRedisClient(url: string, o: RedisClientOptions): RedisClient {
  const target = redisTarget(url);
  const common: RedisOptions = {
    lazyConnect: true,
    ...(o.commandTimeout !== undefined ? { commandTimeout: o.commandTimeout } : {}),
    ...(o.connectTimeout !== undefined ? { connectTimeout: o.connectTimeout } : {}),
    ...(o.maxRetriesPerRequest !== undefined ? { maxRetriesPerRequest: o.maxRetriesPerRequest } : {}),
  };
  switch (target.kind) {
    case 'server':
      return new Redis(target.url, { ...common, ...prefix(o), enableOfflineQueue: o.enableOfflineQueue });
    case 'sentinel':
      return new Redis({
        ...common,
        ...prefix(o),
        enableOfflineQueue: o.enableOfflineQueue,
        sentinels: target.sentinels.map((h) => ({ ...h })),
        name: target.masterName,
        role: 'master',
        db: target.db,
        // Subscribe to +switch-master, so a promotion is followed at once rather than at the old
        // master's connection error.
        failoverDetector: true,
        ...(target.username !== undefined ? { username: target.username } : {}),
        ...(target.password !== undefined ? { password: target.password } : {}),
        ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
      });
    case 'cluster': {
      const options: ClusterOptions = {
        ...prefix(o),
        lazyConnect: true,
        enableOfflineQueue: o.enableOfflineQueue,
        scaleReads: 'master',
        maxRedirections: CLUSTER_MAX_REDIRECTIONS,
        // A command whose node went away, or sent while the cluster is down, fails at once (503)
        // rather than being sent again later: a claims pipeline sent again would carry its WAIT to
        // whichever master owns the slot by then, which may have fewer replicas and block on them.
        retryDelayOnFailover: 0,
        retryDelayOnClusterDown: 0,
        retryDelayOnTryAgain: CLUSTER_RETRY_DELAY_MS,
        ...(o.connectTimeout !== undefined ? { slotsRefreshTimeout: Math.min(o.connectTimeout, 2000) } : {}),
        // Slots are read again every second, and at once after a failed command (redis-store.ts).
        slotsRefreshInterval: 1000,
        redisOptions: {
          ...common,
          ...(target.username !== undefined ? { username: target.username } : {}),
          ...(target.password !== undefined ? { password: target.password } : {}),
          ...(target.tls ? { tls: {} } : {}),
        },
      };
      return new Cluster(target.nodes.map((h) => ({ ...h })), options);
    }
  }
}

function prefix(o: RedisClientOptions): { keyPrefix?: string } {
  return o.keyPrefix !== undefined ? { keyPrefix: o.keyPrefix } : {};
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/**
 * The servers that hold data: every master of a cluster (as the client last learnt the slots), or
 * the one server. Commands on them are not prefixed by the client's keyPrefix for keyless commands
 * alone; SCAN patterns must carry the prefix.
 */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

/** The cluster slot of a key as stored (prefix included); 0 for every key of one server. */
export function slotOf(client: RedisClient, storedKey: string): number {
  return isCluster(client) ? keySlot(storedKey) : 0;
}

const CRC16 = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  CRC16[i] = crc & 0xffff;
}

/**
 * Redis Cluster's slot of `key`: CRC16-XMODEM of its UTF-8 bytes modulo 16384, over the hash tag
 * alone when the key has one (the bytes between the first `{` and the next `}`, when not empty).
 */
export function keySlot(key: string): number {
  let bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ byte) & 0xff]!;
  return crc % 16384;
}
