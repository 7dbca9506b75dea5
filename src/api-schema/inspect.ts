// GET /v1/inspect (docs/intel.md): what the service derives from the calling request.
import type { JsonSchema, RouteSpec } from './types.js';

const nullable = (type: string): JsonSchema => ({ type: [type, 'null'] });
const FLAG: JsonSchema = {
  type: 'object', required: ['value', 'source'],
  properties: { value: { type: 'boolean' }, source: { type: ['string', 'null'], description: '`header`, a threat source, or null.' } },
};

export const INSPECT_RESULT: JsonSchema = {
  type: 'object',
  required: ['ip', 'ipAnonymized', 'location', 'network', 'flags', 'headersTrusted', 'userAgent', 'deviceKey', 'penalty', 'score', 'threats', 'key'],
  properties: {
    ip: { type: 'string', description: 'The client address (anonymized with ANONYMIZE_IP_ADDRESS).' },
    ipAnonymized: { type: 'boolean' },
    location: {
      type: 'object',
      required: ['country', 'region', 'city', 'latitude', 'longitude', 'highRiskCountry', 'source'],
      properties: {
        country: nullable('string'), region: nullable('string'), city: nullable('string'),
        latitude: nullable('number'), longitude: nullable('number'), highRiskCountry: { type: 'boolean' }, source: nullable('string'),
      },
    },
    network: {
      type: 'object', required: ['asn', 'organization', 'source'],
      properties: { asn: nullable('integer'), organization: nullable('string'), source: nullable('string') },
    },
    flags: {
      type: 'object', required: ['hosting', 'proxy', 'tor', 'malicious', 'mobile'],
      properties: { hosting: FLAG, proxy: FLAG, tor: FLAG, malicious: FLAG, mobile: FLAG },
    },
    headersTrusted: { type: 'boolean', description: 'The load balancer\'s x-ip-* headers carried IP_HEADERS_SECRET.' },
    userAgent: {
      type: 'object', required: ['kind', 'browser', 'device', 'commonness'],
      properties: {
        kind: { enum: ['browser', 'bot', 'other', 'none'] }, browser: nullable('string'),
        device: { enum: ['desktop', 'mobile', 'tablet', 'bot', 'unknown'] },
        commonness: { enum: ['common', 'uncommon', 'unknown'] }, share: nullable('number'), rank: nullable('integer'),
      },
    },
    deviceKey: { type: 'string' },
    penalty: { type: 'number' },
    score: { type: 'number' },
    threats: {
      type: 'object', required: ['marks', 'lists'],
      properties: {
        marks: { type: 'array', items: { enum: ['probe', 'malicious', 'bot', 'proxy', 'tor'] } },
        lists: { type: 'array', items: { type: 'string' } },
      },
    },
    key: {
      type: 'object', required: ['countryBlocked', 'unexpectedCountry'],
      properties: { countryBlocked: { type: 'boolean' }, unexpectedCountry: { type: 'boolean' } },
    },
  },
};

export const inspectSpec: RouteSpec = {
  method: 'GET', path: '/v1/inspect', operationId: 'inspect', tag: 'Widget',
  summary: 'What the service sees of this request',
  description: 'Location, network, flags, User-Agent, penalty and score of the calling request (docs/intel.md). It changes nothing: ' +
    'no threat event, no usage. Enabled with INSPECT_ROUTE_ENABLED and IP intelligence.',
  auth: 'browser',
  responses: { 200: { description: 'The signals.', schema: INSPECT_RESULT } },
  errors: ['DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};
