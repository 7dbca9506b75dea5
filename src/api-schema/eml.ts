// POST /v1/eml: a raw message in, its parse, authentication and classification out (docs/eml.md).
// The body is no JSON: its media types are listed and the option headers described; the route
// reads them itself (src/classifier/eml/options.ts).
import { CLASSIFIER_RESULT } from './classifier.js';
import { NO_STORE } from './common.js';
import type { JsonSchema, RouteSpec } from './types.js';

const ADDRESS: JsonSchema = {
  type: 'object', properties: { name: { type: 'string' }, address: { type: 'string' } },
  description: 'A mailbox as parsed (postal-mime).',
};

const AUTH_RESULT: JsonSchema = {
  type: 'object', required: ['result'],
  properties: { result: { type: 'string', examples: ['pass', 'fail', 'none', 'softfail', 'neutral', 'temperror', 'permerror'] }, comment: { type: 'string' } },
};

const EML_RESULT: JsonSchema = {
  type: 'object',
  required: ['classification'],
  properties: {
    from: { oneOf: [ADDRESS, { type: 'null' }] },
    to: { type: 'array', items: ADDRESS },
    cc: { type: 'array', items: ADDRESS },
    replyTo: { type: 'array', items: ADDRESS },
    subject: { type: ['string', 'null'] },
    date: { type: ['string', 'null'] },
    messageId: { type: ['string', 'null'] },
    headers: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: { type: 'string' } } } },
    text: { type: ['string', 'null'] },
    html: { type: ['string', 'null'] },
    attachments: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          filename: { type: ['string', 'null'] }, contentType: { type: 'string' }, size: { type: 'integer', minimum: 0 },
          sha256: { type: ['string', 'null'] }, content: { type: ['string', 'null'], description: 'base64; null past X-Attachments-Size-Limit.' },
          contentUri: { type: 'string', description: 'With X-Attachments-Upload: where the bytes were stored.' },
        },
      },
    },
    authentication: {
      type: ['object', 'null'],
      description: 'With X-Authenticate: 1.',
      properties: { SPF: AUTH_RESULT, DKIM: { type: 'array', items: AUTH_RESULT }, DMARC: AUTH_RESULT, ARC: AUTH_RESULT },
    },
    classification: { ...CLASSIFIER_RESULT, description: 'The same blocks as POST /v1/classifier, plus the message rules.' },
  },
};

export const emlSpec: RouteSpec = {
  method: 'POST', path: '/v1/eml', operationId: 'analyzeEml', tag: 'Server',
  summary: 'Parse, authenticate and classify an e-mail message',
  description: 'The body is a raw RFC 5322 message. Answers its parse (addresses, subject, date, headers, text, HTML and the text '
    + 'derived from it, attachments with their SHA-256), SPF/DKIM/DMARC/ARC results when `X-Authenticate` asks, and a '
    + 'classification with the sender\'s IP from the trusted Received chain. Counted in usage; BAD messages are kept for review. '
    + 'Structure past the documented bounds is cut, reported in `limit`, and scored by STRUCTURE_LIMIT (docs/eml.md).',
  auth: 'server',
  rawBody: { contentTypes: ['message/rfc822', 'application/octet-stream', 'text/plain'], description: 'The raw message.' },
  bodyLimit: 'EML_BODY_LIMIT (5 MB)',
  headers: {
    'X-Authenticate': { description: '1 or true: check SPF, DKIM, DMARC and ARC (DNS within DNS_TIMEOUT). Default off.', schema: { type: 'string' } },
    'X-Attachments-Size-Limit': { description: 'Largest attachment returned decoded, in bytes (default 5000000); larger ones are reported, not decoded.', schema: { type: 'string', pattern: '^\\d{1,10}$' } },
    'X-Attachments-Upload': { description: '1 or true: store attachments under STORAGE_LOCAL_DIR (STORAGE_PROVIDER=local) and answer contentUri instead of content.', schema: { type: 'string' } },
    'X-Disable-Rules': { description: 'Comma-separated rule names not to run; an unknown name is 400 naming it.', schema: { type: 'string' } },
  },
  responses: { 200: { description: 'The parsed message and its classification.', schema: EML_RESULT, headers: NO_STORE } },
  errors: ['INVALID_PARAMETER', 'PLAN_LIMIT_EXCEEDED', 'DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};
