// Whether a domain can receive mail, by DNS (node:dns/promises, c-ares): its MX records, and
// without any its A/AAAA records (the implicit MX of RFC 5321 section 5.1). The verdicts:
//   mx        MX records that name a host
//   implicit  no MX, but an A or AAAA record: mail goes to that address
//   no_mail   a null MX (RFC 7505: one MX whose exchange is ".") or neither MX nor A nor AAAA
//   nxdomain  the domain does not exist
//   unknown   no answer in time, SERVFAIL, refused, too many lookups under way: nothing known
// A lookup never takes longer than `timeoutMs` as a whole (MX and the A/AAAA fallback together).
// Verdicts are cached per domain: found ones for `positiveTtlMs`, nxdomain/no_mail for
// `negativeTtlMs`, unknown briefly (`failureTtlMs`, so a domain whose servers never answer does
// not make every request wait again), the least recently used dropped past `cacheSize`. Concurrent
// lookups of one domain share one query.
import { Resolver } from 'node:dns/promises';

export type MxVerdict = 'mx' | 'implicit' | 'no_mail' | 'nxdomain' | 'unknown';

export interface MxLookupOptions {
  /** DNS servers: `ip`, `ip:port` or `[ipv6]:port`. Default [] = the system's (/etc/resolv.conf). */
  readonly servers?: readonly string[];
  /** The whole lookup's deadline (ms). Default 1500. */
  readonly timeoutMs?: number;
  /** How long mx/implicit is cached (ms). Default 1 h. */
  readonly positiveTtlMs?: number;
  /** How long nxdomain/no_mail is cached (ms). Default 15 min. */
  readonly negativeTtlMs?: number;
  /** How long unknown is cached (ms). Default 30 s. */
  readonly failureTtlMs?: number;
  /** Most domains cached. Default 10,000 (about 1 MB). */
  readonly cacheSize?: number;
  /** Most lookups under way at once; past it a new domain is unknown at once. Default 256. */
  readonly maxInFlight?: number;
  /** Epoch-ms clock. Default Date.now. */
  readonly now?: () => number;
}

export const MX_LOOKUP_DEFAULTS = {
  servers: [] as readonly string[], timeoutMs: 1500, positiveTtlMs: 3_600_000, negativeTtlMs: 900_000,
  failureTtlMs: 30_000, cacheSize: 10_000, maxInFlight: 256,
} as const;

export interface MxLookupStats {
  /** Lookups sent to DNS (one per domain not cached, however many queries it took). */
  readonly lookups: number;
  /** Answers from the cache, by verdict kind. */
  readonly positiveHits: number;
  readonly negativeHits: number;
  readonly failureHits: number;
  /** Callers that joined a lookup already under way. */
  readonly joined: number;
  /** Domains cached now. */
  readonly cached: number;
}

export interface MxLookup {
  /** `domain`: lower-case ASCII, as normalizeDomain gives it. */
  lookup(domain: string): Promise<MxVerdict>;
  stats(): MxLookupStats;
  /** Cancels lookups under way (they resolve unknown) and empties the cache. */
  close(): void;
}

interface CacheEntry {
  readonly verdict: MxVerdict;
  readonly expires: number;
}

export function createMxLookup(options: MxLookupOptions = {}): MxLookup {
  const o = { ...MX_LOOKUP_DEFAULTS, ...options };
  const now = options.now ?? Date.now;
  // The deadline is kept here, not by c-ares (whose timeouts are adaptive: 1500 ms gave up after
  // 2 s in a test). Its own is twice as long, so an answer that misses the deadline still arrives
  // and is cached for the next request; one try, since the deadline covers the whole lookup.
  const resolver = new Resolver({ timeout: o.timeoutMs * 2, tries: 1 });
  if (o.servers.length > 0) resolver.setServers([...o.servers]);
  const cache = new Map<string, CacheEntry>();
  const inFlight = new Map<string, Promise<MxVerdict>>();
  let lookups = 0;
  let positiveHits = 0;
  let negativeHits = 0;
  let failureHits = 0;
  let joined = 0;

  const remember = (domain: string, verdict: MxVerdict) => {
    const ttl = verdict === 'unknown' ? o.failureTtlMs : verdict === 'mx' || verdict === 'implicit' ? o.positiveTtlMs : o.negativeTtlMs;
    cache.delete(domain);
    cache.set(domain, { verdict, expires: now() + ttl });
    // Map keeps insertion order and a hit re-inserts: the first key is the least recently used.
    if (cache.size > o.cacheSize) cache.delete(cache.keys().next().value as string);
  };

  const ask = async (domain: string): Promise<MxVerdict> => {
    const name = `${domain}.`; // absolute: no search-list suffixes
    try {
      const records = await resolver.resolveMx(name);
      if (records.some((r) => r.exchange !== '' && r.exchange !== '.')) return 'mx';
      if (records.length > 0) return 'no_mail';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND') return 'nxdomain';
      if (code !== 'ENODATA') return 'unknown';
    }
    const [a, aaaa] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    if ((a.status === 'fulfilled' && a.value.length > 0) || (aaaa.status === 'fulfilled' && aaaa.value.length > 0)) return 'implicit';
    const codes = [a, aaaa].map((r) => (r.status === 'rejected' ? (r.reason as NodeJS.ErrnoException).code : 'ENODATA'));
    if (codes.every((c) => c === 'ENODATA')) return 'no_mail';
    if (codes.includes('ENOTFOUND') && codes.every((c) => c === 'ENOTFOUND' || c === 'ENODATA')) return 'nxdomain';
    return 'unknown';
  };

  const run = (domain: string): Promise<MxVerdict> => {
    lookups++;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<MxVerdict>((resolve) => {
      timer = setTimeout(() => resolve('unknown'), o.timeoutMs);
      timer.unref();
    });
    const answer = ask(domain).catch((): MxVerdict => 'unknown');
    // An answer arriving after the deadline still fills the cache for the next request.
    void answer.then((verdict) => { if (verdict !== 'unknown') remember(domain, verdict); });
    return Promise.race([answer, deadline]).then((verdict) => {
      clearTimeout(timer);
      remember(domain, verdict);
      return verdict;
    });
  };

  return {
    lookup(domain) {
      const hit = cache.get(domain);
      if (hit !== undefined) {
        if (hit.expires > now()) {
          cache.delete(domain);
          cache.set(domain, hit);
          if (hit.verdict === 'unknown') failureHits++;
          else if (hit.verdict === 'mx' || hit.verdict === 'implicit') positiveHits++;
          else negativeHits++;
          return Promise.resolve(hit.verdict);
        }
        cache.delete(domain);
      }
      const pending = inFlight.get(domain);
      if (pending !== undefined) {
        joined++;
        return pending;
      }
      if (inFlight.size >= o.maxInFlight) return Promise.resolve('unknown');
      const p = run(domain).finally(() => inFlight.delete(domain));
      inFlight.set(domain, p);
      return p;
    },
    stats() {
      return { lookups, positiveHits, negativeHits, failureHits, joined, cached: cache.size };
    },
    close() {
      resolver.cancel();
      cache.clear();
    },
  };
}
