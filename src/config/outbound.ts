// Outbound connections (list downloads): CA certificates and proxies; outgoing e-mail, AI provider
// and licence settings accepted for compatibility.
import { existsSync } from 'node:fs';
import { type Check, list, oneOf, optional, v } from './variable.js';

export const OUTBOUND_VARIABLES = {
  TLS_EXTRA_CA_CERTS: v('Outbound', '', optional, 'Extra trusted CA bundle (PEM file) for outbound requests (list downloads), added to Node\'s root certificates.'),
  HTTP_PROXY: v('Outbound', '', optional, 'Proxy for outbound http:// requests (list downloads), e.g. http://user:pass@proxy:3128; tunnelled with CONNECT.', true),
  HTTPS_PROXY: v('Outbound', '', optional, 'Proxy for outbound https:// requests (list downloads); tunnelled with CONNECT.', true),
  NO_PROXY: v('Outbound', 'localhost,127.0.0.1,::1,0.0.0.0', list, 'Hosts that bypass the proxy: * (all), a host name (its subdomains too), or an IP, each optionally with :port.'),
  SMTP_URL: v('Outbound', '', optional, 'Outgoing email (not used yet).', true),
  AI_PROVIDER: v('Outbound', '', (s) => (s === '' ? null : oneOf('anthropic', 'azure', 'google', 'mistral', 'ollama', 'openai')(s)), 'AI provider for security rules (not used yet).'),
  LICENSE_KEY: v('Outbound', '', optional, 'License key (Palisade needs none; accepted for compatibility).', true),
  LICENSE_JSON: v('Outbound', '', optional, 'Full license contents (accepted for compatibility).', true),
} as const;

export const checkOutbound: Check = (out) =>
  typeof out.TLS_EXTRA_CA_CERTS === 'string' && !existsSync(out.TLS_EXTRA_CA_CERTS)
    ? [`TLS_EXTRA_CA_CERTS: file ${out.TLS_EXTRA_CA_CERTS} does not exist`]
    : [];
