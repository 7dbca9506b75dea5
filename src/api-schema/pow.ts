// Proof of work: the widget's challenge and verification, and the server-side checks of what the
// widget posts (PROTOCOL.md sections 1 to 3).
import { MAX_SUBMITTED_CODE } from '../code-challenge/code.js';
import { MAX_PARAMS, PARAM_NAME_MAX, PARAM_VALUE_MAX } from '../pow/v1-salt.js';
import { KEY_ID, NO_STORE, VERIFY_FAILED, VERIFY_REASONS } from './common.js';
import type { JsonSchema, RouteSpec } from './types.js';

const PARAM_NAME = `^params\\.[A-Za-z0-9_-]{1,${PARAM_NAME_MAX}}$`;

export const CHALLENGE_QUERY: JsonSchema = {
  type: 'object',
  description: `Custom parameters signed into the challenge: \`params.<name>=<value>\`, at most ${MAX_PARAMS} names.`,
  propertyNames: {
    anyOf: [
      { not: { pattern: '^params\\.' } },
      { pattern: PARAM_NAME, not: { enum: ['params.__proto__', 'params.constructor', 'params.prototype'] } },
    ],
  },
  'x-message': `params.<name>: name must be 1-${PARAM_NAME_MAX} of [A-Za-z0-9_-]`,
  patternProperties: {
    '^params\\.': {
      type: 'string',
      pattern: `^[\\x20-\\x7e]{0,${PARAM_VALUE_MAX}}$`,
      description: `At most ${PARAM_VALUE_MAX} printable ASCII characters; signed into the challenge's \`data\` and verificationData.`,
      'x-message': `params.<name>: value must be at most ${PARAM_VALUE_MAX} printable ASCII characters`,
      examples: ['signup-form'],
    },
  },
};

const CHALLENGE_V2: JsonSchema = {
  type: 'object',
  title: 'Challenge (v2)',
  required: ['parameters', 'signature'],
  properties: {
    parameters: {
      type: 'object',
      required: ['algorithm', 'cost', 'data', 'expiresAt', 'keyLength', 'keyPrefix', 'nonce', 'salt'],
      properties: {
        algorithm: { type: 'string', examples: ['PBKDF2/SHA-256'] },
        cost: { type: 'integer', minimum: 1 },
        data: {
          type: 'object', required: ['apiKey'],
          properties: { apiKey: KEY_ID },
          additionalProperties: { type: 'string' },
          description: 'The key and the `params.<name>` values, signed.',
        },
        expiresAt: { type: 'integer', description: 'UNIX seconds.' },
        keyLength: { type: 'integer', minimum: 1 },
        keyPrefix: { type: 'string', pattern: '^[0-9a-f]*$' },
        keySignature: { type: 'string', pattern: '^[0-9a-f]+$' },
        memoryCost: { type: 'integer', minimum: 1 },
        nonce: { type: 'string', pattern: '^[0-9a-f]+$' },
        parallelism: { type: 'integer', minimum: 1 },
        salt: { type: 'string', pattern: '^[0-9a-f]+$' },
      },
      additionalProperties: false,
    },
    signature: { type: 'string', pattern: '^[0-9a-f]+$' },
    configuration: {
      type: 'object', required: ['verifyUrl'],
      properties: { verifyUrl: { type: 'string', description: 'Where the widget posts its solution (POST /v1/verify).' } },
    },
    codeChallenge: {
      type: 'object', required: ['image', 'length'],
      description: 'A code to type besides the proof of work (the key\'s `codeChallenge` policy; docs/code-challenge.md). ' +
        'Its keyed hash is `parameters.data.codeHash`, signed with the challenge.',
      properties: {
        image: { type: 'string', pattern: '^data:image/svg\\+xml;base64,', description: 'The code drawn distorted, about 180×50.' },
        audio: { type: 'string', description: 'GET /v1/challenge/audio with the challenge\'s token, relative to the challenge URL.' },
        length: { type: 'integer', minimum: 4, maximum: 10 },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

const CHALLENGE_V1: JsonSchema = {
  type: 'object',
  title: 'Challenge (v1)',
  required: ['algorithm', 'challenge', 'maxnumber', 'salt', 'signature'],
  properties: {
    algorithm: { type: 'string', enum: ['SHA-256', 'SHA-384', 'SHA-512'] },
    challenge: { type: 'string', pattern: '^[0-9a-f]+$' },
    maxnumber: { type: 'integer', minimum: 1 },
    salt: { type: 'string', description: '`<24 hex>?expires=<unix s>&apiKey=<id>&params.<name>=<value>&…`' },
    signature: { type: 'string', pattern: '^[0-9a-f]+$' },
  },
  additionalProperties: false,
};

export const challengeSpec: RouteSpec = {
  method: 'GET', path: '/v1/challenge', operationId: 'getChallenge', tag: 'Widget',
  summary: 'A proof-of-work challenge',
  description: 'A challenge under the key\'s policy (PROTOCOL.md sections 1 and 2), harder for a penalised client. ' +
    'Keys with a v1 policy get the ALTCHA v1 shape, and the verify URL in the `x-altcha-config` header; ' +
    'so do keys whose widget must send form fields or the time zone (`sentinel`). Counts as one request of the key\'s plan.',
  auth: 'browser',
  query: CHALLENGE_QUERY,
  responses: {
    200: {
      description: 'The challenge.',
      schema: { oneOf: [CHALLENGE_V2, CHALLENGE_V1] },
      headers: {
        ...NO_STORE,
        'x-altcha-config': {
          description: 'JSON `{"verifyUrl": …, "sentinel"?: {"fields": bool, "timeZone": bool}}`, for v1 keys and keys that ask for more than the payload.',
          schema: { type: 'string' },
        },
      },
    },
  },
  errors: ['PARAMS_TOO_LONG', 'IP_BLOCKED', 'COUNTRY_BLOCKED', 'PLAN_LIMIT_EXCEEDED', 'POLICY_INVALID', 'POLICY_NOT_ALLOWED',
    'CHALLENGE_POOL_TIMEOUT', 'DERIVATION_BUSY', 'DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};

export const audioSpec: RouteSpec = {
  method: 'GET', path: '/v1/challenge/audio', operationId: 'getChallengeAudio', tag: 'Widget',
  summary: 'The code of a code challenge, spoken',
  description: 'A WAV of the code spoken twice over noise (docs/code-challenge.md). The widget takes the URL from ' +
    '`codeChallenge.audio`, resolves it against the challenge URL and adds `language`. Only for a valid, unexpired, ' +
    'unsubmitted challenge of this key. Rate-limited by AUDIO_CHALLENGE_RATE_LIMIT; the answer comes no sooner than ' +
    'AUDIO_CHALLENGE_DELAY after the request.',
  auth: 'browser',
  query: {
    type: 'object',
    properties: {
      token: { type: 'string', description: 'The challenge\'s token, from `codeChallenge.audio`.' },
      language: { type: 'string', description: 'en, de, fr or es (a region subtag is ignored); anything else is English.', examples: ['de'] },
    },
  },
  responses: {
    200: {
      description: 'The spoken code.',
      contentType: 'audio/wav',
      schema: { type: 'string', format: 'binary' },
      headers: {
        ...NO_STORE,
        'content-language': { description: 'The language spoken.', schema: { type: 'string', enum: ['en', 'de', 'fr', 'es'] } },
      },
    },
  },
  errors: ['INVALID_PARAMETER', 'CODE_CHALLENGE_NOT_FOUND', 'CODE_CHALLENGE_EXPIRED', 'CODE_CHALLENGE_SOLVED', 'AUDIO_BUSY',
    'IP_BLOCKED', 'COUNTRY_BLOCKED', 'STORE_UNAVAILABLE'],
};

/** VERIFY_ROUTE_DEFAULTS.maxFields. */
export const VERIFY_MAX_FIELDS = 50;
const TIME_ZONE_PATTERN = '^[A-Za-z0-9_+\\-/]{1,64}$';

export const VERIFY_BODY: JsonSchema = {
  type: 'object',
  required: ['payload'],
  'x-error': 'INVALID_PAYLOAD',
  properties: {
    payload: {
      type: 'string', 'x-error': 'INVALID_PAYLOAD',
      description: 'The widget\'s payload: base64 of the solved challenge (v1 or v2). One that does not verify is `{"verified": false}`, not a 400.',
    },
    fields: {
      type: ['object', 'null'],
      description: `The form's fields (a key whose widget sends them: \`sentinel.fields\`), at most ${VERIFY_MAX_FIELDS}; signed into verificationData as a hash.`,
      maxProperties: VERIFY_MAX_FIELDS,
      propertyNames: { maxLength: 100, pattern: '^[^\\ud800-\\udfff]*$' },
      additionalProperties: { type: 'string' },
      'x-message': `fields must map at most ${VERIFY_MAX_FIELDS} names of at most 100 characters (well-formed Unicode) to strings`,
    },
    timeZone: {
      type: ['string', 'null'], pattern: TIME_ZONE_PATTERN, examples: ['Europe/Berlin'],
      'x-message': 'timeZone must be an IANA time zone name',
    },
    code: {
      type: ['string', 'null'], maxLength: MAX_SUBMITTED_CODE, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$',
      description: 'What the person typed for a code challenge (docs/code-challenge.md): compared case-insensitively, spaces ignored; '
        + 'a wrong or missing code is `{"verified": false, "reason": "INCORRECT_CODE"}` and spends the challenge.',
      'x-message': `code must be a string of at most ${MAX_SUBMITTED_CODE} characters without control characters`,
    },
  },
};

const VERIFIED: JsonSchema = {
  type: 'object',
  title: 'Verified',
  required: ['verified', 'payload', 'algorithm', 'apiKey', 'id', 'score', 'signature', 'verificationData'],
  properties: {
    verified: { const: true },
    payload: { type: 'string', description: 'The server payload, base64: what the form posts to its backend.' },
    algorithm: { type: 'string', examples: ['SHA-256'] },
    apiKey: KEY_ID,
    id: { type: 'string' },
    score: { type: 'number' },
    signature: { type: 'string', pattern: '^[0-9a-f]+$' },
    verificationData: { type: 'string', description: 'A query string of the signed facts (classification, score, reasons, …).' },
  },
  additionalProperties: false,
};

export const verifySpec: RouteSpec = {
  method: 'POST', path: '/v1/verify', operationId: 'verify', tag: 'Widget',
  summary: 'Verify a solved challenge',
  description: 'The widget posts its solution; a verified one is answered with a signed server payload for the form\'s backend. ' +
    'Each challenge is accepted once: a second attempt is `PAYLOAD_ALREADY_USED`.',
  auth: 'browser',
  body: VERIFY_BODY,
  responses: {
    200: {
      description: 'Verified (with the server payload), or not (with the reason).',
      schema: { oneOf: [VERIFIED, VERIFY_FAILED([...VERIFY_REASONS, 'BAD_CLASSIFICATION'])] },
    },
  },
  errors: ['INVALID_PAYLOAD', 'IP_BLOCKED', 'COUNTRY_BLOCKED', 'PLAN_LIMIT_EXCEEDED', 'DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};

export const VERIFY_SIGNATURE_BODY: JsonSchema = {
  type: 'object',
  required: ['payload'],
  'x-message': 'the body must be a JSON object',
  properties: {
    payload: {
      type: ['string', 'object'],
      description: 'The server payload as the form received it (base64), or already decoded.',
      'x-message': 'payload must be a server payload, base64 or decoded',
    },
    secret: {
      type: 'string', maxLength: 256, 'x-message': 'secret must be a string of at most 256 characters',
      description: 'The payload key\'s secret: when given, it must be that key\'s (it proves the caller owns it).',
    },
  },
};

export const verifySignatureSpec: RouteSpec = {
  method: 'POST', path: '/v1/verify/signature', operationId: 'verifySignature', tag: 'Server',
  summary: 'Check a server payload online',
  description: 'As altcha-lib\'s `verifyServer` calls it. Each server payload is accepted once.',
  auth: 'none',
  body: VERIFY_SIGNATURE_BODY,
  invalid: 'INVALID_PAYLOAD',
  responses: {
    200: {
      description: 'Whether the server payload holds, with its verificationData as an object.',
      schema: {
        type: 'object',
        required: ['verified', 'apiKey', 'verificationData'],
        properties: {
          verified: { type: 'boolean' },
          apiKey: { type: 'string' },
          verificationData: { type: ['object', 'null'] },
          reason: { type: 'string', enum: [...VERIFY_REASONS, 'API_KEY_INVALID'] },
        },
        additionalProperties: false,
      },
    },
  },
  errors: ['INVALID_PAYLOAD', 'DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};

export const CHALLENGE_VERIFY_BODY: JsonSchema = {
  type: 'object',
  required: ['payload'],
  'x-error': 'INVALID_PAYLOAD',
  'x-message': 'the body must be a JSON object',
  properties: {
    payload: {
      type: 'string', 'x-error': 'INVALID_PAYLOAD', 'x-message': 'payload must be a string',
      description: 'A widget payload (v1 or v2) or a server payload, base64.',
    },
    apiKey: {
      type: 'string', 'x-message': 'apiKey must be a string',
      description: 'The key that issued the challenge, when not the authorising one (same account only).',
    },
  },
};

export const challengeVerifySpec: RouteSpec = {
  method: 'POST', path: '/challenge/verify', operationId: 'challengeVerify', tag: 'Server',
  summary: 'Verify a payload from the backend',
  description: 'A widget payload counts as a request of the issuing key\'s plan; a server payload was counted when /v1/verify issued it. ' +
    'Each payload is accepted once.',
  auth: 'server',
  body: CHALLENGE_VERIFY_BODY,
  responses: {
    200: {
      description: 'Verified, or not with the reason.',
      schema: {
        oneOf: [
          { type: 'object', required: ['verified'], properties: { verified: { const: true } }, additionalProperties: false },
          VERIFY_FAILED(VERIFY_REASONS),
        ],
      },
    },
  },
  errors: ['INVALID_PAYLOAD', 'PLAN_LIMIT_EXCEEDED', 'DATABASE_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STORE_FULL'],
};

