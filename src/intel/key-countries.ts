// A key's country rules, stored in its challenge policy (src/pow/policy.ts validates them):
//   blockedCountries   challenge and verify from these countries are refused, 403 COUNTRY_BLOCKED
//   expectedCountries  a client located elsewhere gets a penalty raise (INTEL_RAISES.unexpectedCountry)
// Each is an array of ISO 3166-1 alpha-2 codes (any case) and named lists (`list:eu`,
// `list:sanctioned`; countries.json). A client whose country is unknown is neither blocked nor
// unexpected: a rule cannot tell, and refusing every unlocated client would refuse private networks.
import { PalisadeError } from '../errors.js';
import { expandCountries } from './countries.js';
import { INTEL_RAISES } from './intel.js';

export interface CountryRules {
  readonly expected: ReadonlySet<string> | null;
  readonly blocked: ReadonlySet<string> | null;
}

export const COUNTRY_RULE_FIELDS = ['expectedCountries', 'blockedCountries'] as const;

/** The rules of a stored policy (null when it has none); throws POLICY_INVALID naming bad entries. */
export function parseCountryRules(stored: Readonly<Record<string, unknown>> | null): CountryRules | null {
  if (stored === null) return null;
  const expected = field(stored, 'expectedCountries');
  const blocked = field(stored, 'blockedCountries');
  return expected === null && blocked === null ? null : Object.freeze({ expected, blocked });
}

function field(s: Readonly<Record<string, unknown>>, name: string): ReadonlySet<string> | null {
  const v = s[name];
  if (v === undefined) return null;
  if (!Array.isArray(v) || v.length > 300) {
    throw new PalisadeError('POLICY_INVALID', `challenge policy: ${name} must be an array of at most 300 country codes or list:<name>`);
  }
  const bad: string[] = [];
  const set = expandCountries(v, bad);
  if (bad.length > 0) {
    const shown = bad.slice(0, 10).map((b) => JSON.stringify(b.slice(0, 20))).join(', ');
    throw new PalisadeError('POLICY_INVALID', `challenge policy: ${name}: unknown country codes or lists: ${shown}`);
  }
  return set;
}

/** Throws COUNTRY_BLOCKED for a blocked country; the raise for an unexpected one, else 0. */
export function checkCountry(rules: CountryRules | null, country: string | null): number {
  if (rules === null || country === null) return 0;
  if (rules.blocked?.has(country)) throw new PalisadeError('COUNTRY_BLOCKED');
  if (rules.expected !== null && !rules.expected.has(country)) return INTEL_RAISES.unexpectedCountry;
  return 0;
}
