// The compiled checks of src/api-schema/validate.ts: which code and message a refused value gets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileCheck, queryCheck, queryObject } from '../../src/api-schema/validate.js';
import { trainingAddSpec } from '../../src/api-schema/classifier.js';
import { usageSpec } from '../../src/api-schema/keys.js';
import type { JsonSchema } from '../../src/api-schema/types.js';

const SCHEMA: JsonSchema = {
  type: 'object',
  'x-error': 'INVALID_PAYLOAD',
  'x-message': 'the body must be a JSON object',
  required: ['payload'],
  properties: {
    payload: { type: 'string', 'x-error': 'INVALID_PAYLOAD', 'x-message': 'payload must be a string' },
    tags: { type: 'array', maxItems: 2, items: { type: 'string', maxLength: 3 }, 'x-message': 'tags must be at most 2 short strings' },
    size: { type: 'integer', minimum: 1 },
  },
  additionalProperties: false,
};

function refusal(check: (v: unknown) => void, value: unknown): { code: string; message: string } {
  try {
    check(value);
  } catch (err) {
    const e = err as { code: string; message: string };
    return { code: e.code, message: e.message };
  }
  return assert.fail(`accepted ${JSON.stringify(value)}`);
}

test('a refused value: the deepest x-error and x-message on its way, the root only for the whole body', () => {
  const check = compileCheck(SCHEMA, 'INVALID_PARAMETER', 'the body');
  assert.doesNotThrow(() => check({ payload: 'p', tags: ['a'], size: 2 }));
  assert.deepEqual(refusal(check, []), { code: 'INVALID_PAYLOAD', message: 'the body must be a JSON object' });
  assert.deepEqual(refusal(check, {}), { code: 'INVALID_PAYLOAD', message: 'payload must be a string' });
  assert.deepEqual(refusal(check, { payload: 1 }), { code: 'INVALID_PAYLOAD', message: 'payload must be a string' });
  // Inside the body, the root's code does not apply: the route's does.
  assert.deepEqual(refusal(check, { payload: 'p', tags: 'a' }), { code: 'INVALID_PARAMETER', message: 'tags must be at most 2 short strings' });
  // An array item without annotations of its own takes its array's.
  assert.deepEqual(refusal(check, { payload: 'p', tags: ['abcd'] }), { code: 'INVALID_PARAMETER', message: 'tags must be at most 2 short strings' });
  // No annotation: ajv's words, naming the field.
  assert.deepEqual(refusal(check, { payload: 'p', size: 0 }), { code: 'INVALID_PARAMETER', message: 'size must be >= 1' });
  assert.deepEqual(refusal(check, { payload: 'p', ['x'.repeat(100)]: 1 }), { code: 'INVALID_PARAMETER', message: `unknown field "${'x'.repeat(40)}"` });
});

test('lengths count UTF-16 code units, as String.length does', () => {
  const check = compileCheck({ type: 'string', maxLength: 2 }, 'INVALID_PARAMETER', 'x');
  assert.doesNotThrow(() => check('ab'));
  assert.throws(() => check('\ud83d\ude00a'), { code: 'INVALID_PARAMETER' });
});

test('queries: the first value of a name wins, __proto__ is a name like any other', () => {
  const q = new URLSearchParams('month=2026-01&month=nope&__proto__=x');
  const o = queryObject(q);
  assert.equal(o.month, '2026-01');
  assert.equal(o.__proto__, 'x');
  assert.equal(Object.getPrototypeOf(o), null);
  const check = queryCheck(usageSpec);
  assert.doesNotThrow(() => check(q));
  assert.deepEqual(refusal((v) => check(v as URLSearchParams), new URLSearchParams('month=2026-13')), { code: 'INVALID_MONTH', message: 'month must be YYYY-MM' });
});

test('training: the messages the route answers come from the schema', () => {
  const check = compileCheck(trainingAddSpec.body!, 'INVALID_PARAMETER', 'the body');
  assert.deepEqual(refusal(check, {}), { code: 'INVALID_PARAMETER', message: 'text must be a string, non-empty, of at most 10000 characters' });
  assert.equal(refusal(check, { text: ' \n\t' }).message, 'text must be a string, non-empty, of at most 10000 characters');
  assert.equal(refusal(check, { text: 'x', threshold: 0 }).message, 'threshold must be a number in (0, 1]');
  assert.equal(refusal(check, { text: 'x', group: 'Bad' }).message, 'group must be 1-64 of a-z 0-9 _ . - starting with a letter or digit');
  assert.equal(refusal(check, { text: 'x', __proto__x: 1 }).message, 'unknown field "__proto__x"');
  assert.doesNotThrow(() => check({ text: 'x', group: 'a.b-c_d', threshold: 1, weight: 0 }));
});
