// Operational endpoints (spec 4.1, src/routes/ops.ts) and the API documentation itself.
import { TIMESTAMP } from './common.js';
import type { JsonSchema, RouteSpec } from './types.js';

const STAMP = { timestamp: TIMESTAMP, version: { type: 'string' } };
const CHECK: JsonSchema = {
  type: 'object', required: ['ok'],
  properties: { ok: { type: 'boolean' }, kind: { type: 'string' }, latencyMs: { type: 'number' }, error: { type: 'string' } },
};

export const liveSpec: RouteSpec = {
  method: 'GET', path: '/.live', operationId: 'live', tag: 'Operations',
  summary: 'Liveness', description: 'The process answers.', auth: 'monitoring',
  responses: {
    200: {
      description: 'Alive.',
      schema: { type: 'object', required: ['status', 'timestamp', 'version'], properties: { status: { const: 'ok' }, ...STAMP }, additionalProperties: false },
    },
  },
  errors: [],
};

export const readySpec: RouteSpec = {
  method: 'GET', path: '/.ready', operationId: 'ready', tag: 'Operations',
  summary: 'Readiness', description: 'Ready to serve: the state store answers, the instance is not draining, no worker crash loop.', auth: 'monitoring',
  responses: {
    200: {
      description: 'Ready.',
      schema: { type: 'object', required: ['ready', 'timestamp', 'version'], properties: { ready: { const: true }, ...STAMP }, additionalProperties: false },
    },
    503: {
      description: 'Not ready, with the reasons.',
      schema: {
        type: 'object', required: ['error', 'statusCode', 'ready', 'reasons', 'timestamp', 'version'],
        properties: {
          error: { const: 'NOT_READY' }, statusCode: { const: 503 }, ready: { const: false },
          reasons: { type: 'array', items: { type: 'string' } }, ...STAMP,
        },
        additionalProperties: false,
      },
    },
  },
  errors: [],
};

const HEALTH: JsonSchema = {
  type: 'object', required: ['status', 'checks', 'timestamp', 'version'],
  properties: {
    status: { enum: ['healthy', 'unhealthy'] },
    checks: { type: 'object', required: ['database', 'redis'], properties: { database: CHECK, redis: { ...CHECK, description: 'The state store (Redis or shared memory).' } } },
    node: { type: 'string', description: 'NODE_NAME, when set.' },
    ...STAMP,
  },
  additionalProperties: false,
};

export const healthSpec: RouteSpec = {
  method: 'GET', path: '/.health', operationId: 'health', tag: 'Operations',
  summary: 'Health of the database and the state store', description: 'Each check with its latency.', auth: 'monitoring',
  responses: { 200: { description: 'Healthy.', schema: HEALTH }, 503: { description: 'A check failed.', schema: HEALTH } },
  errors: [],
};

export const metricsSpec: RouteSpec = {
  method: 'GET', path: '/.metrics', operationId: 'metrics', tag: 'Operations',
  summary: 'Prometheus metrics', description: 'The whole node\'s metrics, aggregated across workers.', auth: 'monitoring',
  responses: { 200: { description: 'Prometheus text exposition format.', contentType: 'text/plain; version=0.0.4; charset=utf-8', schema: { type: 'string' } } },
  errors: [],
};

export const logsSpec: RouteSpec = {
  method: 'GET', path: '/.logs', operationId: 'logs', tag: 'Operations',
  summary: 'Live log stream',
  description: 'Every process\'s log lines as they are written, until the client goes away; a reader that does not keep up is dropped.',
  auth: 'monitoring',
  query: {
    type: 'object',
    properties: { format: { type: 'string', description: '`json`: one JSON record a line (application/x-ndjson); anything else: plain text lines.', examples: ['json'] } },
  },
  responses: { 200: { description: 'A stream of lines.', contentType: 'text/plain; charset=utf-8', schema: { type: 'string' } } },
  errors: [],
};

export const securityTxtSpec: RouteSpec = {
  method: 'GET', path: '/.well-known/security.txt', operationId: 'securityTxt', tag: 'Operations',
  summary: 'security.txt (RFC 9116)', description: 'SECURITY_TXT; 404 when it is 0.', auth: 'none',
  responses: { 200: { description: 'The text.', contentType: 'text/plain; charset=utf-8', schema: { type: 'string' } } },
  errors: ['NOT_FOUND'],
};

export const docsPageSpec: RouteSpec = {
  method: 'GET', path: '/v1/docs', operationId: 'docsPage', tag: 'Documentation',
  summary: 'This documentation', description: 'An interactive page (Swagger UI, served from this service: nothing from elsewhere). API_DOCS_ENABLED.',
  auth: 'none',
  responses: { 200: { description: 'The page.', contentType: 'text/html; charset=utf-8', schema: { type: 'string' } } },
  errors: [],
};

export const docsDocumentSpec: RouteSpec = {
  method: 'GET', path: '/v1/docs/openapi.json', operationId: 'openApiDocument', tag: 'Documentation',
  summary: 'The OpenAPI 3.1 document', description: 'This document: the routes enabled in this instance. API_DOCS_ENABLED.',
  auth: 'none',
  responses: { 200: { description: 'OpenAPI 3.1.', schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } } } } },
  errors: [],
};
