// API keys: usage reports and free keys behind the machine-to-machine challenge.
import { KEY_ID, NO_STORE } from './common.js';
import type { JsonSchema, RouteSpec } from './types.js';

const MONTH_PATTERN = '^(?:\\d{4}-(?:0[1-9]|1[0-2]))?$';

export const USAGE_QUERY: JsonSchema = {
  type: 'object',
  properties: {
    Month: {
      type: 'string', pattern: MONTH_PATTERN, 'x-error': 'INVALID_MONTH', 'x-message': 'Month must be YYYY-MM',
      description: 'YYYY-MM in the service\'s time zone (TZ); default (or empty) the current month. The spec\'s name; wins over month.',
      examples: ['2026-11'],
    },
    month: {
      type: 'string', pattern: MONTH_PATTERN, 'x-error': 'INVALID_MONTH', 'x-message': 'month must be YYYY-MM',
      description: 'The same as Month, accepted as well.', examples: ['2026-11'],
    },
  },
};

const COUNT_STRING: JsonSchema = { type: 'string', pattern: '^\\d+$', description: 'A decimal count (a 64-bit counter).' };

export const usageSpec: RouteSpec = {
  method: 'GET', path: '/usage', operationId: 'getUsage', tag: 'Server',
  summary: 'Usage of the key and its account',
  description: 'Usage of the authorising key and its account in a month (spec 4.4, PROTOCOL.md section 4). ' +
    'What workers have not written to the database yet (about a second) is not in it.',
  auth: 'server', query: USAGE_QUERY, invalid: 'INVALID_MONTH',
  responses: {
    200: {
      description: 'The month\'s counts.',
      schema: {
        type: 'object',
        required: ['classifications', 'referrers', 'requests', 'plan'],
        properties: {
          classifications: {
            type: 'object', required: ['BAD', 'GOOD', 'NEUTRAL'],
            properties: { BAD: COUNT_STRING, GOOD: COUNT_STRING, NEUTRAL: COUNT_STRING }, additionalProperties: false,
          },
          referrers: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 }, description: 'Requests by origin.' },
          requests: {
            type: 'object', required: ['account', 'apiKey'],
            properties: {
              account: { type: 'integer', minimum: 0, description: 'Every key of the account.' },
              apiKey: { type: 'integer', minimum: 0 },
            },
            additionalProperties: false,
          },
          plan: {
            type: 'object', required: ['name', 'requestLimit'],
            properties: { name: { type: 'string' }, requestLimit: { type: 'integer', minimum: -1, description: '-1: unlimited (0 is a plan of no requests).' } },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
  },
  errors: ['INVALID_MONTH', 'DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};

export const API_KEY_GENERATE_BODY: JsonSchema = {
  type: 'object',
  required: ['hostname'],
  'x-error': 'INVALID_HOSTNAME',
  'x-message': 'the body must be a JSON object',
  properties: {
    hostname: {
      type: 'string', minLength: 1, maxLength: 253, examples: ['example.com'],
      'x-message': 'hostname must be a DNS hostname (no IP address, no wildcard)',
      description: 'A DNS hostname (no IP address, no wildcard; international names are accepted). One free key per hostname.',
    },
  },
};

const WWW_AUTHENTICATE = {
  'WWW-Authenticate': {
    description: 'A new machine-to-machine challenge: `Altcha algorithm=SHA-256, challenge=…, maxnumber=…, salt=…, signature=…`.',
    schema: { type: 'string' },
  },
};

export const apiKeyGenerateSpec: RouteSpec = {
  method: 'POST', path: '/api_key/generate', operationId: 'generateApiKey', tag: 'Keys',
  summary: 'A free API key for a hostname',
  description: 'Behind the machine-to-machine challenge (spec 4.2, PROTOCOL.md section 5): a request without a solution is answered 401 ' +
    'with a challenge in `WWW-Authenticate`; solve it and send `Authorization: Altcha <base64 solution>` (or in the header that ' +
    '`X-Altcha-Authorization-Header` names). Each solution is accepted once. The hostname is checked first: a typo costs no solution.',
  auth: 'm2m', body: API_KEY_GENERATE_BODY, invalid: 'INVALID_HOSTNAME',
  responses: {
    200: {
      description: 'The new key and its secret (shown once).', headers: NO_STORE,
      schema: {
        type: 'object', required: ['apiKey', 'hostname', 'secret'],
        properties: {
          apiKey: KEY_ID, hostname: { type: 'string' },
          secret: { type: 'string', pattern: '^c?sec_[0-9A-Za-z]{32}$', description: 'For server-side calls: keep it secret.' },
        },
        additionalProperties: false,
      },
    },
    401: {
      description: 'No, a wrong, an expired or a used solution (`ALTCHA_REQUIRED`, `ALTCHA_INVALID`, `ALTCHA_EXPIRED`, `ALTCHA_ALREADY_USED`), with a new challenge.',
      headers: WWW_AUTHENTICATE,
    },
  },
  errors: ['INVALID_HOSTNAME', 'HOSTNAME_TAKEN', 'ALTCHA_REQUIRED', 'ALTCHA_INVALID', 'ALTCHA_EXPIRED', 'ALTCHA_ALREADY_USED',
    'DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};
