// Spam classification (docs/classifier.md): POST /v1/classifier and the training data API.
import { RULE_NAMES } from '../classifier/classify.js';
import { CLASSIFIER_REQUEST_LIMITS as L } from '../classifier/request.js';
import { VOCABULARY_LANGUAGES } from '../classifier/text/index.js';
import { TRAINING_LIMITS } from '../db/training-data.js';
import { COUNTRY_LISTS } from '../intel/countries.js';
import { CLASSIFICATION, NO_STORE, TIMESTAMP } from './common.js';
import type { JsonSchema, RouteSpec } from './types.js';

/** A string, or null or false for none. */
const optional = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }, { const: false }] });
const stringList = (name: string, max: number, item: JsonSchema = {}): JsonSchema => ({
  type: ['array', 'null'], maxItems: max, items: { type: 'string', maxLength: 100, ...item },
  'x-message': `${name} must be an array of at most ${max} short strings`,
});
const countries = (name: string): JsonSchema => stringList(name, L.maxListEntries, {
  pattern: `^(?:[A-Za-z]{2}|list:(?:${Object.keys(COUNTRY_LISTS).join('|')}))$`,
  description: 'An ISO 3166-1 alpha-2 code (any case; a code no country has is refused) or `list:<name>`.',
  examples: ['de', 'list:eu'],
});

export const CLASSIFIER_BODY: JsonSchema = {
  type: 'object',
  'x-message': 'the body must be a JSON object',
  description: 'Every field is optional; a block of the answer is null when its input was absent. Unknown fields are ignored.',
  properties: {
    text: {
      anyOf: [
        { type: 'string' },
        { type: 'array', maxItems: L.maxTexts, items: { type: 'string' } },
        { type: 'null' },
      ],
      description: 'Text to classify: one string or several.',
      'x-message': `text must be a string or an array of at most ${L.maxTexts} strings`,
      examples: ['Hello, I would like to know more about your pricing.'],
    },
    fields: {
      type: ['object', 'null'], maxProperties: L.maxFields,
      propertyNames: { maxLength: L.maxFieldName },
      additionalProperties: { type: 'string' },
      description: 'Form fields by name; their values are classified as text.',
      'x-message': `fields must map at most ${L.maxFields} names of at most ${L.maxFieldName} characters to strings`,
    },
    email: { ...optional({ type: 'string', maxLength: L.maxEmail }), 'x-message': `email must be a string of at most ${L.maxEmail} characters`, examples: ['jane@example.com'] },
    ipAddress: {
      anyOf: [{ const: 'auto' }, { type: 'string', format: 'ipv4' }, { type: 'string', format: 'ipv6' }, { type: 'null' }, { const: false }],
      description: '`"auto"`: the requester\'s own address (and the location headers of a trusted load balancer); an address; or false for no IP analysis.',
      'x-message': 'ipAddress must be "auto", an IPv4 or IPv6 address, or false',
      examples: ['auto'],
    },
    timeZone: {
      ...optional({ type: 'string', pattern: '^[A-Za-z0-9_+\\-/]{1,64}$' }),
      'x-message': 'timeZone must be an IANA time zone name', examples: ['Europe/Berlin'],
    },
    expectedLanguages: stringList('expectedLanguages', L.maxListEntries, {
      pattern: '^[A-Za-z]{2}(?:-|$)', description: 'ISO 639-1 codes; `en-GB` counts as `en`.', examples: ['en'],
    }),
    expectedCountries: countries('expectedCountries'),
    blockedCountries: countries('blockedCountries'),
    disableRules: {
      type: ['array', 'null'], maxItems: 1000, items: { type: 'string', enum: [...RULE_NAMES].sort() },
      description: 'Rules not to run (docs/classifier.md lists them).',
      'x-message': 'disableRules must name known rules',
    },
    classifier: {
      ...optional({ type: 'string', enum: [...VOCABULARY_LANGUAGES] }),
      description: 'The language model to apply, whatever the detected language.',
      'x-message': `classifier must be one of ${VOCABULARY_LANGUAGES.join(', ')}`,
    },
    userAgent: {
      ...optional({ type: 'string', maxLength: L.maxUserAgent }),
      description: 'A User-Agent to judge (the device block).',
      'x-message': `userAgent must be a string of at most ${L.maxUserAgent} characters`,
    },
  },
};

const RULES: JsonSchema = {
  type: 'object',
  additionalProperties: { type: 'object', required: ['score'], properties: { score: { type: 'number' } } },
};
const block = (title: string, properties: Record<string, JsonSchema>): JsonSchema => ({
  type: ['object', 'null'],
  title,
  required: ['rules', 'score', 'time', ...Object.keys(properties)],
  properties: { rules: RULES, score: { type: 'number' }, time: { type: 'number' }, ...properties },
});
const nullableString: JsonSchema = { type: ['string', 'null'] };

export const CLASSIFIER_RESULT: JsonSchema = {
  type: 'object',
  required: ['classification', 'score', 'reasons', 'text', 'email', 'ip', 'location', 'device', 'similarity', 'rateLimit', 'time'],
  properties: {
    classification: CLASSIFICATION,
    score: { type: 'number', description: 'The sum of the blocks\' scores: higher means more likely spam.' },
    reasons: { type: 'array', items: { type: 'string' }, description: 'The rules that fired.' },
    text: block('Text', { language: nullableString, classifier: nullableString }),
    email: block('E-mail', { domain: nullableString }),
    ip: block('IP', { asn: { type: ['integer', 'null'] }, organization: nullableString }),
    location: block('Location', { countryCode: nullableString, timeZone: nullableString }),
    device: block('Device', {
      kind: { enum: ['browser', 'bot', 'other', 'none'] }, browser: nullableString,
      device: { enum: ['desktop', 'mobile', 'tablet', 'bot', 'unknown'] },
    }),
    similarity: block('Similarity', {
      matches: {
        type: 'array',
        items: { type: 'object', required: ['id', 'similarity'], properties: { id: { type: 'string' }, similarity: { type: 'number' } } },
      },
    }),
    rateLimit: { type: 'null', description: 'Always null: a rate limit answers 429 first.' },
    time: { type: 'number', description: 'Milliseconds spent classifying.' },
  },
};

export const classifierSpec: RouteSpec = {
  method: 'POST', path: '/v1/classifier', operationId: 'classify', tag: 'Classifier',
  summary: 'Classify a submission',
  description: 'Text, form fields, an e-mail address, an IP and its location, a User-Agent, and the similarity to the account\'s training data ' +
    '(docs/classifier.md). Counts as one request of the key\'s plan. Enabled with the classifier and IP intelligence.',
  auth: 'server',
  body: CLASSIFIER_BODY,
  bodyLimit: 'CLASSIFIER_BODY_LIMIT',
  responses: { 200: { description: 'The classification.', schema: CLASSIFIER_RESULT, headers: NO_STORE } },
  errors: ['INVALID_PARAMETER', 'PLAN_LIMIT_EXCEEDED', 'POLICY_INVALID', 'DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};

const GROUP: JsonSchema = {
  type: 'string', pattern: TRAINING_LIMITS.groupPattern.source, examples: ['crypto'],
  'x-message': 'group must be 1-64 of a-z 0-9 _ . - starting with a letter or digit',
};
const TRAINING_ID: JsonSchema = {
  type: 'string', pattern: '^trn_[0-9A-Za-z]{16}$', 'x-message': 'id must be a training example id (trn_…)', examples: ['trn_0123456789abcdef'],
};
const EXAMPLE: JsonSchema = {
  type: 'object',
  required: ['id', 'group', 'text', 'threshold', 'weight', 'source', 'createdAt'],
  properties: {
    id: TRAINING_ID, group: { type: 'string' }, text: { type: 'string' },
    threshold: { type: 'number' }, weight: { type: 'number' }, source: { type: 'string' }, createdAt: TIMESTAMP,
  },
  additionalProperties: false,
};

export const TRAINING_LIST_QUERY: JsonSchema = { type: 'object', properties: { group: GROUP } };
export const TRAINING_REMOVE_QUERY: JsonSchema = { type: 'object', required: ['id'], properties: { id: TRAINING_ID } };
export const TRAINING_ADD_BODY: JsonSchema = {
  type: 'object',
  'x-message': 'the body must be a JSON object',
  required: ['text'],
  properties: {
    text: {
      type: 'string', minLength: 1, maxLength: TRAINING_LIMITS.maxTextLength, pattern: '\\S',
      'x-message': `text must be a string, non-empty, of at most ${TRAINING_LIMITS.maxTextLength} characters`,
      examples: ['Earn passive income by reselling our crypto trading signals'],
    },
    group: GROUP,
    threshold: {
      type: 'number', exclusiveMinimum: 0, maximum: 1, 'x-message': 'threshold must be a number in (0, 1]',
      description: 'The similarity from which the example matches. Default 0.7.',
    },
    weight: {
      type: 'number', minimum: 0, maximum: 10, 'x-message': 'weight must be a number from 0 to 10',
      description: 'Scales the SIMILARITY rule\'s score. Default 1.',
    },
  },
  additionalProperties: false,
};

export const trainingListSpec: RouteSpec = {
  method: 'GET', path: '/v1/training', operationId: 'listTraining', tag: 'Classifier',
  summary: 'List the training data', description: 'The account\'s examples, optionally of one group.',
  auth: 'server', query: TRAINING_LIST_QUERY,
  responses: {
    200: {
      description: 'The examples.', headers: NO_STORE,
      schema: { type: 'object', required: ['examples'], properties: { examples: { type: 'array', items: EXAMPLE } }, additionalProperties: false },
    },
  },
  errors: ['INVALID_PARAMETER', 'DATABASE_UNAVAILABLE'],
};

export const trainingAddSpec: RouteSpec = {
  method: 'POST', path: '/v1/training', operationId: 'addTraining', tag: 'Classifier',
  summary: 'Add a training example',
  description: `The SIMILARITY rule compares submissions with the account's examples (at most ${TRAINING_LIMITS.maxPerAccount}). ` +
    'A change applies at once in the worker that made it and within CACHE_DURATION_TRAINING_DATA elsewhere.',
  auth: 'server', body: TRAINING_ADD_BODY,
  responses: { 201: { description: 'The example added.', schema: EXAMPLE, headers: NO_STORE } },
  errors: ['INVALID_PARAMETER', 'DATABASE_UNAVAILABLE'],
};

export const trainingRemoveSpec: RouteSpec = {
  method: 'DELETE', path: '/v1/training', operationId: 'removeTraining', tag: 'Classifier',
  summary: 'Remove a training example', description: 'An example of another account is answered as unknown.',
  auth: 'server', query: TRAINING_REMOVE_QUERY,
  responses: {
    200: {
      description: 'Removed.', headers: NO_STORE,
      schema: { type: 'object', required: ['id', 'removed'], properties: { id: TRAINING_ID, removed: { const: true } }, additionalProperties: false },
    },
  },
  errors: ['INVALID_PARAMETER', 'NOT_FOUND', 'DATABASE_UNAVAILABLE'],
};
