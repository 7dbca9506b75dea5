// The nesting bound every client JSON text passes before JSON.parse: counting the brackets first
// must never change the answer of the character scan.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { nestsDeeper } from '../../src/json-depth.js';

/** The plain scan, without the count that may skip it. */
function reference(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === '[' || c === '{') {
      if (++depth > max) return true;
    } else if (c === ']' || c === '}') {
      depth--;
    }
  }
  return false;
}

test('nestsDeeper agrees with the character scan on texts of brackets, quotes and escapes', () => {
  const text = fc.array(fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ','), { maxLength: 80 }).map((cs) => cs.join(''));
  fc.assert(fc.property(text, fc.nat(8), (t, max) => nestsDeeper(t, max) === reference(t, max)), { numRuns: 5000 });
});

test('nestsDeeper: brackets in strings do not count; exactly max levels pass, one more does not', () => {
  assert.equal(nestsDeeper('[[[1]]]', 3), false);
  assert.equal(nestsDeeper('[[[[1]]]]', 3), true);
  assert.equal(nestsDeeper('{"a":"[[[[[[[[{{{{"}', 1), false);
  assert.equal(nestsDeeper('{"a":"\\"[[[["}', 1), false);
  assert.equal(nestsDeeper('{"a":"\\\\"[[[[}', 1), true); // the escaped backslash ends the string
  assert.equal(nestsDeeper('[][][][][][][]', 1), false); // many brackets, never deep
  assert.equal(nestsDeeper('', 0), false);
  assert.equal(nestsDeeper('{', 0), true);
});
