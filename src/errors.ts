// The one error catalogue. Every failure a client can see is one of these codes; docs/errors.md
// lists the same codes (test/unit/errors-doc.test.ts keeps them in step).
import { V1_SALT_MAX_LENGTH } from './pow/v1-salt.js';

export const ERRORS = {
  // 4xx: the request
  BAD_REQUEST: { status: 400, message: 'The request is malformed.' },
  INVALID_JSON: { status: 400, message: 'The body is not valid JSON.' },
  INVALID_PARAMETER: { status: 400, message: 'A parameter is missing or has an invalid value.' },
  PARAMS_TOO_LONG: {
    status: 400,
    message: `The params.* values would make the v1 challenge's salt longer than ${V1_SALT_MAX_LENGTH} characters (values count percent-encoded).`,
  },
  INVALID_PAYLOAD: { status: 400, message: 'The payload is not a valid challenge solution or server payload.' },
  INVALID_MONTH: { status: 400, message: 'month must be YYYY-MM.' },
  INVALID_HOSTNAME: { status: 400, message: 'hostname must be a DNS hostname (no IP address, no wildcard).' },
  API_KEY_REQUIRED: { status: 401, message: 'An API key is required.' },
  API_KEY_INVALID: { status: 401, message: 'The API key or its secret is not valid.' },
  AUTHORIZATION_REQUIRED: { status: 401, message: 'Authorization is required.' },
  INVALID_SIGNATURE: { status: 401, message: 'The request signature is not valid.' },
  SIGNATURE_SALT_REUSED: { status: 401, message: 'The signature salt was already used.' },
  INVALID_SIGNATURE_SALT: { status: 401, message: 'X-Hmac-Signature-Salt must be UNIX_SECONDS.RANDOM (RANDOM: 16-100 characters A-Z a-z 0-9 _ -).' },
  SIGNATURE_SALT_EXPIRED: { status: 401, message: 'The signature salt is more than 5 minutes away from the current time.' },
  ALTCHA_REQUIRED: { status: 401, message: 'Solve the machine-to-machine challenge in WWW-Authenticate.' },
  ALTCHA_INVALID: { status: 401, message: 'The machine-to-machine solution is malformed or wrong; solve the new challenge.' },
  ALTCHA_EXPIRED: { status: 401, message: 'The machine-to-machine challenge has expired; solve the new challenge.' },
  ALTCHA_ALREADY_USED: { status: 401, message: 'The machine-to-machine solution was already used; solve the new challenge.' },
  MONITORING_FORBIDDEN: { status: 403, message: 'Monitoring endpoints are not available to this client.' },
  MONITORING_UNAUTHORIZED: { status: 401, message: 'Monitoring endpoints require credentials.' },
  ORIGIN_NOT_ALLOWED: { status: 403, message: 'The request origin is not allowed for this API key.' },
  HOST_NOT_ALLOWED: { status: 403, message: 'The Host header is not allowed.' },
  IP_BLOCKED: { status: 403, message: 'This client is blocked.' },
  COUNTRY_BLOCKED: { status: 403, message: 'Requests from this country are not accepted for this API key.' },
  FORBIDDEN: { status: 403, message: 'Forbidden.' },
  LOGIN_FAILED: { status: 401, message: 'Wrong username or password.' },
  TOTP_REQUIRED: { status: 401, message: 'This user logs in with a one-time code: send totp.' },
  SESSION_REQUIRED: { status: 401, message: 'Log in first: the session is missing, expired or revoked.' },
  CSRF_INVALID: { status: 403, message: 'The X-CSRF-Token header does not match the session.' },
  PASSWORD_CHANGE_REQUIRED: { status: 403, message: 'Change the password first (POST /api/admin/me/password).' },
  LOGIN_DISABLED: { status: 403, message: 'Password login is disabled (PASSWORD_LOGIN_ENABLED=0).' },
  ADMIN_IP_FORBIDDEN: { status: 403, message: 'The admin area is not available to this client (APP_IP_WHITELIST).' },
  NOT_FOUND: { status: 404, message: 'Not found.' },
  CODE_CHALLENGE_NOT_FOUND: { status: 404, message: 'No code challenge has this token (or it was issued to another API key).' },
  CODE_CHALLENGE_EXPIRED: { status: 410, message: 'The code challenge has expired; fetch a new challenge.' },
  CODE_CHALLENGE_SOLVED: { status: 410, message: 'The code challenge was already submitted; fetch a new challenge.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed.' },
  HOSTNAME_TAKEN: { status: 409, message: 'A key already exists for this hostname.' },
  CONFLICT: { status: 409, message: 'The name is taken.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time.' },
  BODY_TOO_LARGE: { status: 413, message: 'The body exceeds the size limit.' },
  URI_TOO_LONG: { status: 414, message: 'The URL is too long.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The body must be application/json.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests.' },
  PLAN_LIMIT_EXCEEDED: { status: 429, message: 'The monthly request limit of the plan is exhausted.' },
  // verification outcomes (also used as `reason` in 200 {verified:false})
  PAYLOAD_ALREADY_USED: { status: 400, message: 'The payload was already used.' },
  CHALLENGE_EXPIRED: { status: 400, message: 'The challenge has expired.' },
  INVALID_SOLUTION: { status: 400, message: 'The solution is not correct.' },
  INCORRECT_CODE: { status: 400, message: 'The code does not match the code challenge (or none was given); the challenge is spent.' },
  // 5xx: us
  POLICY_NOT_ALLOWED: { status: 500, message: 'The challenge policy exceeds the configured limits.' },
  POLICY_INVALID: { status: 500, message: 'The challenge policy of this API key is not valid.' },
  STORE_UNAVAILABLE: { status: 503, message: 'The state store is unavailable; retry.' },
  STORE_FULL: { status: 503, message: 'The state store is full; retry later.' },
  DATABASE_UNAVAILABLE: { status: 503, message: 'The database is unavailable; retry.' },
  NOT_READY: { status: 503, message: 'The service is not ready.' },
  CHALLENGE_POOL_TIMEOUT: { status: 503, message: 'No challenge could be prepared in time; retry.' },
  DERIVATION_BUSY: { status: 503, message: 'Too many key derivations are waiting; retry.' },
  AUDIO_BUSY: { status: 503, message: 'Too many audio challenges are being spoken; retry.' },
  INTERNAL: { status: 500, message: 'Internal error.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * An expected failure: carries a catalogue code; never a stack trace to the client. It captures no
 * stack trace either: these are answers (404, 429, a replayed payload), thrown by the thousand per
 * second under attack, and capturing a stack was a third of the CPU of a 404 in a profile. The code
 * says where it came from; unexpected errors (plain Error) keep their stacks for the log.
 */
export class PalisadeError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly retryAfter: number | undefined;
  /** The explicit detail, when one was given: a 4xx answer carries it as `message`. */
  readonly detail: string | undefined;

  constructor(code: ErrorCode, detail?: string, retryAfter?: number) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(detail ?? ERRORS[code].message);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = 'PalisadeError';
    this.code = code;
    this.statusCode = ERRORS[code].status;
    this.retryAfter = retryAfter;
    this.detail = detail;
  }
}

export function isPalisadeError(err: unknown): err is PalisadeError {
  return err instanceof PalisadeError;
}

/** The JSON body of an error response: `{"error":CODE,"statusCode":N}`. */
export function errorBody(code: ErrorCode): string {
  return ERROR_BODIES[code];
}

/**
 * The body answering `err`: a client error (4xx) with an explicit detail says what was wrong in
 * `message` (`{"error":CODE,"statusCode":N,"message":"…"}`); details are written for the caller and
 * never hold a secret. Server errors keep the bare body.
 */
export function errorBodyOf(err: PalisadeError): string {
  if (err.detail === undefined || err.statusCode >= 500) return ERROR_BODIES[err.code];
  return JSON.stringify({ error: err.code, statusCode: err.statusCode, message: err.detail });
}

const ERROR_BODIES = Object.fromEntries(
  Object.entries(ERRORS).map(([code, e]) => [code, JSON.stringify({ error: code, statusCode: e.status })]),
) as Record<ErrorCode, string>;
