// Outbound connections (list downloads): CA certificates and proxies; outgoing e-mail, AI provider
// and licence settings accepted for compatibility.
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseList } from '../parse.js';
import { type Check, list, ms, oneOf, optional, type Parser, v } from './variable.js';

const dnsServers: Parser<string[]> = (s) => {
  const servers = parseList(s);
  const bad = servers.filter((server) => {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/.exec(server) ?? /^([0-9a-fA-F:]+)$/.exec(server);
    if (m === null) return true;
    const ip = m[1] ?? m[2]!;
    return isIP(ip) === 0 || (m[3] !== undefined && (Number(m[3]) < 1 || Number(m[3]) > 65535));
  });
  if (bad.length > 0) throw new Error(`not ip, ip:port or [ipv6]:port: ${bad.join(', ')}`);
  return servers;
};

export const OUTBOUND_VARIABLES = {
  TLS_EXTRA_CA_CERTS: v('Outbound', '', optional, 'Extra trusted CA bundle (PEM file) for outbound requests (list downloads), added to Node\'s root certificates.'),
  HTTP_PROXY: v('Outbound', '', optional, 'Proxy for outbound http:// requests (list downloads), e.g. http://user:pass@proxy:3128; tunnelled with CONNECT.', true),
  HTTPS_PROXY: v('Outbound', '', optional, 'Proxy for outbound https:// requests (list downloads); tunnelled with CONNECT.', true),
  NO_PROXY: v('Outbound', 'localhost,127.0.0.1,::1,0.0.0.0', list, 'Hosts that bypass the proxy: * (all), a host name (its subdomains too), or an IP, each optionally with :port.'),
  DNS_SERVERS: v('Outbound', '', dnsServers, 'DNS servers for the e-mail MX check (comma-separated ip, ip:port or [ipv6]:port); empty = the system resolvers (/etc/resolv.conf).'),
  DNS_TIMEOUT: v('Outbound', '1500ms', ms, 'Deadline of one MX check (MX, then A/AAAA when there is no MX); past it the MX rule does not fire. Answers are cached per domain: found 1 h, non-existent or without mail host 15 min, no answer 30 s (10,000 domains per process).'),
  SMTP_URL: v('Outbound', '', optional, 'Outgoing email (not used yet).', true),
  AI_PROVIDER: v('Outbound', '', (s) => (s === '' ? null : oneOf('anthropic', 'azure', 'google', 'mistral', 'ollama', 'openai')(s)), 'AI provider for security rules (not used yet).'),
  LICENSE_KEY: v('Outbound', '', optional, 'License key (Palisade needs none; accepted for compatibility).', true),
  LICENSE_JSON: v('Outbound', '', optional, 'Full license contents (accepted for compatibility).', true),
} as const;

export const checkOutbound: Check = (out) =>
  typeof out.TLS_EXTRA_CA_CERTS === 'string' && !existsSync(out.TLS_EXTRA_CA_CERTS)
    ? [`TLS_EXTRA_CA_CERTS: file ${out.TLS_EXTRA_CA_CERTS} does not exist`]
    : [];
