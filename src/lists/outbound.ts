// Outbound HTTP for downloaded lists: USER_AGENT, HTTP_PROXY / HTTPS_PROXY / NO_PROXY and
// TLS_EXTRA_CA_CERTS, all from the configuration (never from the environment directly). undici's
// Agent and ProxyAgent do the connection work (CONNECT tunnels, TLS through the proxy); only the
// choice of proxy per URL is ours, so NO_PROXY means exactly what docs/configuration.md says.
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, ProxyAgent, interceptors, type Dispatcher } from 'undici';

export interface OutboundSettings {
  /** USER_AGENT; empty = palisade/<version>. */
  readonly userAgent: string;
  readonly version: string;
  readonly httpProxy: string | null;
  readonly httpsProxy: string | null;
  /** NO_PROXY entries: `*`, a host name (its subdomains too; a leading dot is ignored), an IP, each optionally with :port. */
  readonly noProxy: readonly string[];
  /** TLS_EXTRA_CA_CERTS: a PEM file added to Node's root certificates. */
  readonly caFile: string | null;
}

export interface Outbound {
  readonly userAgent: string;
  dispatcherFor(url: URL): Dispatcher;
  close(): Promise<void>;
}

/** Redirects followed by a download (a list moved to another path or host). */
const MAX_REDIRECTIONS = 5;

export function createOutbound(settings: OutboundSettings): Outbound {
  const ca = settings.caFile === null ? undefined : [...rootCertificates, readFileSync(settings.caFile, 'utf8')];
  const tls = ca === undefined ? {} : { ca };
  const redirect = interceptors.redirect({ maxRedirections: MAX_REDIRECTIONS });
  const direct = new Agent({ connect: tls });
  const viaHttp = settings.httpProxy ? new ProxyAgent({ uri: settings.httpProxy, requestTls: tls, proxyTls: tls }) : null;
  const viaHttps = settings.httpsProxy ? new ProxyAgent({ uri: settings.httpsProxy, requestTls: tls, proxyTls: tls }) : null;
  const composed = new Map<Dispatcher, Dispatcher>();
  const withRedirects = (d: Dispatcher) => {
    let c = composed.get(d);
    if (c === undefined) composed.set(d, c = d.compose(redirect));
    return c;
  };
  const noProxy = settings.noProxy.map((e) => e.trim().toLowerCase()).filter((e) => e !== '');
  return {
    userAgent: settings.userAgent || `palisade/${settings.version}`,
    dispatcherFor(url) {
      const proxy = url.protocol === 'https:' ? viaHttps : viaHttp;
      return withRedirects(proxy !== null && !bypassesProxy(url, noProxy) ? proxy : direct);
    },
    async close() {
      await Promise.all([direct.close(), viaHttp?.close(), viaHttps?.close()]);
    },
  };
}

/** Whether NO_PROXY names the URL's host (and port, when the entry has one). */
export function bypassesProxy(url: URL, entries: readonly string[]): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  for (const entry of entries) {
    if (entry === '*') return true;
    let name = entry;
    let wantPort: string | null = null;
    const m = /^(.*?)(?::(\d+))?$/.exec(entry.startsWith('[') ? entry.replace(/^\[([^\]]+)\]/, '$1') : entry);
    if (m && m[2] !== undefined && !m[1]!.includes(':')) { name = m[1]!; wantPort = m[2]; }
    name = name.replace(/^\*?\./, '');
    if (wantPort !== null && wantPort !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}
