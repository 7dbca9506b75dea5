// REDIS_URL's three forms: one server (redis://, rediss://), a Redis Cluster
// (redis+cluster://host:port,host:port, any reachable subset of its nodes) and Redis Sentinel
// (redis+sentinel://host:port,host:port/master-name). User and password are written as in redis://
// and authenticate to the Redis servers that hold data (a cluster's nodes, the sentinels' master and
// its replicas); sentinels themselves are asked without them. The rediss+ forms use TLS.
// Problems name the part that is wrong, never the password.

export interface RedisHost {
  readonly host: string;
  readonly port: number;
}

export type RedisTarget =
  | { readonly kind: 'server'; readonly url: string }
  | { readonly kind: 'cluster'; readonly nodes: readonly RedisHost[]; readonly username?: string; readonly password?: string; readonly tls: boolean }
  | {
    readonly kind: 'sentinel';
    readonly sentinels: readonly RedisHost[];
    readonly masterName: string;
    readonly db: number;
    readonly username?: string;
    readonly password?: string;
    readonly tls: boolean;
  };

const DEFAULT_PORT = { cluster: 6379, sentinel: 26379 } as const;
/** More seed nodes or sentinels than any deployment lists; a longer list is a mistake. */
const MAX_HOSTS = 64;
const MASTER_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** The URL's form, or an Error whose message says what is wrong (without the password). */
export function parseRedisUrl(url: string): RedisTarget | Error {
  const text = url.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') return { kind: 'server', url: text };
  const kind = scheme === 'redis+cluster' || scheme === 'rediss+cluster' ? 'cluster'
    : scheme === 'redis+sentinel' || scheme === 'rediss+sentinel' ? 'sentinel' : null;
  if (kind === null) {
    return new Error('REDIS_URL must start with redis://, rediss://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://');
  }
  const tls = scheme!.startsWith('rediss');
  let rest = text.slice(scheme!.length + 3);
  if (/[?#]/.test(rest)) return new Error('REDIS_URL: no ?parameters are read in this form (a sentinel\'s database goes after the master name: /mymaster/0)');
  let username: string | undefined;
  let password: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const auth = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = auth.indexOf(':');
    try {
      username = decodeURIComponent(colon >= 0 ? auth.slice(0, colon) : auth) || undefined;
      password = colon >= 0 ? decodeURIComponent(auth.slice(colon + 1)) : undefined;
    } catch {
      return new Error('REDIS_URL: the user or password is not percent-encoded correctly');
    }
  }
  const slash = rest.indexOf('/');
  const hostList = slash >= 0 ? rest.slice(0, slash) : rest;
  const path = slash >= 0 ? rest.slice(slash + 1) : '';
  const hosts: RedisHost[] = [];
  for (const item of hostList.split(',')) {
    const host = parseHost(item, DEFAULT_PORT[kind]);
    if (host instanceof Error) return host;
    hosts.push(host);
  }
  if (hosts.length > MAX_HOSTS) return new Error(`REDIS_URL: at most ${MAX_HOSTS} hosts`);
  if (kind === 'cluster') {
    if (path !== '') return new Error('REDIS_URL: a Redis Cluster has no database number or name after the hosts');
    return { kind, nodes: hosts, tls, ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}) };
  }
  const [masterName = '', dbPart, ...more] = path.split('/');
  if (more.length > 0) return new Error('REDIS_URL: after the hosts only /master-name and an optional /database number');
  if (!MASTER_NAME.test(masterName)) return new Error('REDIS_URL: redis+sentinel:// needs the master name after the hosts (redis+sentinel://host:26379,host:26379/mymaster)');
  if (dbPart !== undefined && !/^\d{1,2}$/.test(dbPart)) return new Error('REDIS_URL: the database after the master name must be a number');
  const db = Number(dbPart ?? 0);
  return {
    kind, sentinels: hosts, masterName, db, tls,
    ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}),
  };
}

function parseHost(item: string, defaultPort: number): RedisHost | Error {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+))(?::(\d{1,5}))?$/.exec(item.trim());
  if (m === null) return new Error(`REDIS_URL: "${item.trim().slice(0, 100)}" is not host:port (IPv6 addresses go in brackets: [::1]:6379)`);
  const port = m[3] === undefined ? defaultPort : Number(m[3]);
  if (port < 1 || port > 65535) return new Error(`REDIS_URL: port ${m[3]} is out of range`);
  return { host: m[1] ?? m[2]!, port };
}

/** Configuration problems of REDIS_URL (empty: none set, or a valid one). */
export function redisUrlProblems(url: unknown): string[] {
  if (typeof url !== 'string' || url.trim() === '') return [];
  const target = parseRedisUrl(url);
  return target instanceof Error ? [target.message] : [];
}

/**
 * REDIS_CLAIM_REPLICAS's `auto`: 1 for a cluster or a Sentinel-watched master (whose failover
 * promotes a replica, which must already hold every used challenge), 0 for one server.
 */
export function defaultClaimReplicas(url: string): number {
  const target = parseRedisUrl(url);
  return !(target instanceof Error) && target.kind !== 'server' ? 1 : 0;
}
