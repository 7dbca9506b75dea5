// Schemas shared by several routes' descriptions.
import { VERIFY_FAILURES } from '../pow/verify.js';
import type { JsonSchema } from './types.js';

export const KEY_ID: JsonSchema = {
  type: 'string', pattern: '^c?key_[0-9A-Za-z]{24}$', description: 'An API key id.', examples: ['key_1a2B3c4D5e6F7g8H9i0J1k2L'],
};

export const TIMESTAMP: JsonSchema = { type: 'string', format: 'date-time' };

/** Response headers. */
export const NO_STORE = { 'Cache-Control': { description: 'Always `no-store`.', schema: { type: 'string', const: 'no-store' } } };

/** The reason of a failed verification (the `reason` of `{"verified": false}`). */
export const VERIFY_REASONS = VERIFY_FAILURES;

export const CLASSIFICATION: JsonSchema = { type: 'string', enum: ['GOOD', 'NEUTRAL', 'BAD'] };

/** One answer of a `{"verified": false, "reason": …}` route. */
export const VERIFY_FAILED = (reasons: readonly string[]): JsonSchema => ({
  type: 'object',
  required: ['verified', 'reason'],
  properties: { verified: { const: false }, reason: { type: 'string', enum: [...reasons] } },
});
