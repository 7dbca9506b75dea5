// A key's country rules live in its challenge policy: resolvePolicy validates them (so a bad one is
// refused when it is set), naming every unknown code or list; checkCountry blocks or raises.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PalisadeError } from '../../src/errors.js';
import { checkCountry, parseCountryRules } from '../../src/intel/key-countries.js';
import { resolvePolicy } from '../../src/pow/policy.js';
import { COUNTRY_LISTS } from '../../src/intel/countries.js';

const limits = { maxMemoryBytes: 128 * 1024 * 1024 };

test('valid country rules pass, in any case and with named lists', () => {
  assert.doesNotThrow(() => resolvePolicy({ expectedCountries: ['us', 'CA', 'list:eu'], blockedCountries: ['list:sanctioned', 'xk'] }, limits));
  const rules = parseCountryRules({ expectedCountries: ['us', 'list:eu'], blockedCountries: ['list:sanctioned'] })!;
  assert.equal(rules.expected!.size, 28);
  assert.deepEqual([...rules.blocked!].sort(), [...COUNTRY_LISTS.sanctioned!].sort());
  assert.equal(parseCountryRules({ cost: 5 }), null);
});

test('unknown codes and lists are refused with POLICY_INVALID naming them', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ blockedCountries: ['us', 'XX', 'usa'] }, /blockedCountries: unknown country codes or lists: "XX", "usa"/],
    [{ expectedCountries: ['list:nope'] }, /expectedCountries: unknown country codes or lists: "list:nope"/],
    [{ expectedCountries: [1, null] }, /"1", "null"/],
    [{ expectedCountries: 'us' }, /expectedCountries must be an array/],
    [{ blockedCountries: Array(301).fill('us') }, /at most 300/],
  ];
  for (const [policy, message] of cases) {
    assert.throws(() => resolvePolicy(policy, limits), (err: unknown) => err instanceof PalisadeError && err.code === 'POLICY_INVALID' && message.test(err.message), JSON.stringify(policy).slice(0, 60));
  }
});

test('checkCountry: blocked throws COUNTRY_BLOCKED, unexpected raises 1, unknown country neither', () => {
  const rules = parseCountryRules({ expectedCountries: ['US', 'list:eu'], blockedCountries: ['RU'] });
  assert.throws(() => checkCountry(rules, 'RU'), (err: unknown) => err instanceof PalisadeError && err.code === 'COUNTRY_BLOCKED' && err.statusCode === 403);
  assert.equal(checkCountry(rules, 'US'), 0);
  assert.equal(checkCountry(rules, 'FR'), 0);
  assert.equal(checkCountry(rules, 'AU'), 1);
  assert.equal(checkCountry(rules, null), 0);
  assert.equal(checkCountry(null, 'RU'), 0);
});
