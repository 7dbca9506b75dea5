// S6: POST /v1/classifier with 10 KB of text and every signal on (bench/scenarios/s6-body.ts):
// the key's secret as `Authorization: Bearer`, the text rules and language detection, the e-mail
// rules with an MX lookup, the IP, location and device blocks, and the similarity to the account's
// training data. The MX query goes to a DNS server on loopback that the runner starts (the
// test helper built with dns-packet); each worker asks it once and then answers from its cache, as
// a service does for a domain it sees often. Beside L (the same bytes to a hello world) and B (a
// Fastify cluster classifying the text with a naive-Bayes package, the ecosystem's usual way).
// The aim of the classifier issue: 5 × ALTCHA's published 932 req/s for 10 KB on a laptop.
import { startDnsServer } from '../../test/helpers/dns-server.js';
import { S6_BODY, S6_EMAIL_DOMAIN } from './s6-body.js';
import type { Scenario } from './scenario.js';

/** ALTCHA's published rate for the classifier with 10 KB of text (a laptop), and the aim: 5 × it. */
export const ALTCHA_CLASSIFIER_10KB = 932;

export const S6: Scenario = {
  id: 'S6',
  title: 'POST /v1/classifier (10 KB of text, every signal on)',
  endpoint: 'classifier',
  key: 'default',
  body: S6_BODY,
  configs: ['production', 'bare'],
  baselines: ['L', 'B'],
  async services() {
    const dns = await startDnsServer();
    dns.zones.set(S6_EMAIL_DOMAIN, { kind: 'records', mx: [{ preference: 10, exchange: `mx1.${S6_EMAIL_DOMAIN}` }] });
    return {
      env: { DNS_SERVERS: dns.server },
      check: () => ((dns.queries.get(`${S6_EMAIL_DOMAIN} MX`) ?? 0) > 0 ? null : `the DNS server on loopback saw no MX query for ${S6_EMAIL_DOMAIN}`),
      close: () => dns.close(),
    };
  },
  checks: [
    { kind: 'rps', config: 'production', min: 5 * ALTCHA_CLASSIFIER_10KB, why: '5 × ALTCHA\'s 932 req/s' },
    { kind: 'rps', config: 'bare', min: 5 * ALTCHA_CLASSIFIER_10KB, why: '5 × ALTCHA\'s 932 req/s' },
  ],
};
