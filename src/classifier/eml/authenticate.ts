// SPF, DKIM, DMARC and ARC of a message (X-Authenticate: true), by mailauth with our own resolver:
// DNS_SERVERS, DNS_TIMEOUT per query, at most MAX_QUERIES queries per message and AUTH_DEADLINE_FACTOR
// × DNS_TIMEOUT in all, so a message with a thousand DKIM signatures or an SPF record that fans out
// costs bounded time. Past the deadline every check not finished answers temperror.
//
// mailauth's main module is not loaded: since 7.x it requires BIMI's HTTP client (undici 8), which
// needs Node 22.19 and throws on load under Node 20. Its DKIM, SPF, DMARC and ARC modules do not, and
// are composed here as its authenticate() composes them (BIMI is not part of the answer).
import { Resolver } from 'node:dns/promises';
import { createRequire } from 'node:module';

export interface AuthCheck {
  readonly result: string;
  readonly comment: string;
}

export interface Authentication {
  readonly SPF: AuthCheck & { readonly domain: string | null; readonly clientIp: string | null };
  readonly DKIM: readonly (AuthCheck & { readonly signingDomain: string | null; readonly selector: string | null; readonly aligned: boolean })[];
  readonly DMARC: AuthCheck & { readonly domain: string | null; readonly policy: string | null };
  readonly ARC: AuthCheck & { readonly i: number | null };
}

export interface AuthenticatorOptions {
  /** DNS servers (`ip`, `ip:port`); default: the system's. */
  readonly servers?: readonly string[];
  /** One query's timeout in ms; default 1500. */
  readonly timeoutMs?: number;
  /** The authserv-id in comments; default 'palisade'. */
  readonly mta?: string;
}

export interface Authenticator {
  authenticate(raw: Buffer, client: { readonly ip: string | null; readonly helo: string | null }): Promise<Authentication>;
  close(): void;
}

/** DNS queries one message may cause (SPF alone may take 10 plus its void lookups). */
const MAX_QUERIES = 40;
const AUTH_DEADLINE_FACTOR = 3;

type Resolve = (name: string, rrtype: string) => Promise<unknown>;
interface MailauthModules {
  dkimVerify(input: Buffer, opts: { resolver: Resolve }): Promise<DkimOutput>;
  spf(opts: { ip: string; helo?: string; sender: string; mta: string; resolver: Resolve }): Promise<SpfOutput>;
  arc(chain: unknown, opts: { resolver: Resolve; ip?: string }): Promise<ArcOutput>;
  evaluateDmarc(opts: Record<string, unknown>): Promise<{ response?: DmarcOutput | false; reason?: string }>;
}
interface Status { result: string; comment?: string; aligned?: string | false }
interface DkimOutput {
  headerFrom?: string[];
  fromFields?: unknown;
  envelopeFrom?: string | false;
  arc?: unknown;
  results?: { id?: string; signingDomain?: string; selector?: string; status: Status }[];
}
interface SpfOutput { domain?: string; 'client-ip'?: string; status: Status }
interface ArcOutput { i?: number | false; status: Status }
interface DmarcOutput { domain?: string; policy?: string; status: Status & { header?: { from?: string } } }

let modules: MailauthModules | null = null;
function mailauth(): MailauthModules {
  if (modules === null) {
    const require = createRequire(import.meta.url);
    modules = {
      dkimVerify: require('mailauth/lib/dkim/verify').dkimVerify,
      spf: require('mailauth/lib/spf').spf,
      arc: require('mailauth/lib/arc').arc,
      evaluateDmarc: require('mailauth/lib/dmarc').evaluateDmarc,
    };
  }
  return modules;
}

export function createAuthenticator(options: AuthenticatorOptions = {}): Authenticator {
  const timeoutMs = options.timeoutMs ?? 1500;
  const mta = options.mta ?? 'palisade';
  const resolvers = new Set<Resolver>();
  return {
    async authenticate(raw, client) {
      const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
      if (options.servers !== undefined && options.servers.length > 0) resolver.setServers([...options.servers]);
      resolvers.add(resolver);
      let queries = 0;
      const resolve: Resolve = (name, rrtype) => {
        if (++queries > MAX_QUERIES) return Promise.reject(Object.assign(new Error('DNS query budget spent'), { code: 'ETIMEOUT' }));
        return resolver.resolve(name, rrtype);
      };
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<null>((done) => { timer = setTimeout(() => done(null), timeoutMs * AUTH_DEADLINE_FACTOR); });
      try {
        const checks = run(raw, client, resolve, mta);
        checks.catch(() => {});
        const result = await Promise.race([checks, deadline]);
        return result ?? timedOut(client.ip);
      } catch (err) {
        return failed(client.ip, (err as Error).message);
      } finally {
        clearTimeout(timer);
        resolver.cancel();
        resolvers.delete(resolver);
      }
    },
    close() {
      for (const r of resolvers) r.cancel();
      resolvers.clear();
    },
  };
}

async function run(raw: Buffer, client: { ip: string | null; helo: string | null }, resolver: Resolve, mta: string): Promise<Authentication> {
  const m = mailauth();
  const dkim = await m.dkimVerify(raw, { resolver });
  const sender = (typeof dkim.envelopeFrom === 'string' && dkim.envelopeFrom !== '' ? dkim.envelopeFrom : dkim.headerFrom?.[0]) ?? '';
  let spf: SpfOutput | null = null;
  if (client.ip !== null && sender !== '') {
    spf = await m.spf({ ip: client.ip, helo: client.helo ?? `[${client.ip}]`, sender, mta, resolver });
  }
  const arc = await m.arc(dkim.arc, { resolver, ...(client.ip === null ? {} : { ip: client.ip }) });
  let dmarc: DmarcOutput | null = null;
  let dmarcReason: string | null = null;
  if (dkim.headerFrom !== undefined && dkim.headerFrom.length > 0) {
    const evaluated = await m.evaluateDmarc({
      headerFrom: dkim.headerFrom, fromFields: dkim.fromFields,
      spfDomains: spf !== null && spf.status.result === 'pass' && spf.domain ? [spf.domain] : [],
      dkimDomains: (dkim.results ?? []).filter((r) => r.status.result === 'pass').map((r) => ({
        id: r.id, domain: r.signingDomain, aligned: r.status.aligned, underSized: false,
      })),
      arcResult: arc, resolver,
    });
    dmarc = evaluated.response || null;
    dmarcReason = evaluated.reason ?? null;
  }
  return {
    SPF: spf === null
      ? { result: 'none', comment: client.ip === null ? 'no sender IP in the Received chain' : 'no envelope sender', domain: null, clientIp: client.ip }
      : { result: spf.status.result, comment: spf.status.comment ?? '', domain: spf.domain ?? null, clientIp: client.ip },
    DKIM: (dkim.results ?? []).slice(0, 50).map((r) => ({
      result: r.status.result, comment: r.status.comment ?? '', signingDomain: r.signingDomain ?? null, selector: r.selector ?? null,
      aligned: Boolean(r.status.aligned),
    })),
    DMARC: dmarc === null
      ? { result: 'none', comment: dmarcReason ?? 'no From domain', domain: null, policy: null }
      : { result: dmarc.status.result, comment: dmarc.status.comment ?? '', domain: dmarc.status.header?.from ?? dmarc.domain ?? null, policy: dmarc.policy ?? null },
    ARC: { result: arc.status.result, comment: arc.status.comment ?? '', i: typeof arc.i === 'number' && arc.i > 0 ? arc.i : null },
  };
}

function timedOut(ip: string | null): Authentication {
  return failed(ip, 'DNS answers did not arrive in time');
}

function failed(ip: string | null, comment: string): Authentication {
  const c = { result: 'temperror', comment };
  return {
    SPF: { ...c, domain: null, clientIp: ip }, DKIM: [], DMARC: { ...c, domain: null, policy: null }, ARC: { ...c, i: null },
  };
}
