// A cached key's classification settings and country rules, parsed once per policy object (keys
// are cached per worker, so their policy objects are stable).
import type { ApiKey } from '../keys/types.js';
import { parseCountryRules, type CountryRules } from '../intel/key-countries.js';
import { RULE_NAMES } from './classify.js';
import { DEFAULT_CLASSIFICATION_POLICY, parseClassificationPolicy, type ClassificationPolicy } from './policy.js';

/** Each cached key's parsed settings, once per policy object. */
export class KeyPolicies {
  readonly #classification = new WeakMap<object, ClassificationPolicy>();
  readonly #countries = new WeakMap<object, CountryRules | null>();

  classification(key: ApiKey): ClassificationPolicy {
    const stored = key.challengePolicy;
    if (stored === null) return DEFAULT_CLASSIFICATION_POLICY;
    let p = this.#classification.get(stored);
    if (p === undefined) this.#classification.set(stored, (p = parseClassificationPolicy(stored, RULE_NAMES)));
    return p;
  }

  countries(key: ApiKey): CountryRules | null {
    const stored = key.challengePolicy;
    if (stored === null) return null;
    if (!this.#countries.has(stored)) this.#countries.set(stored, parseCountryRules(stored));
    return this.#countries.get(stored)!;
  }
}
