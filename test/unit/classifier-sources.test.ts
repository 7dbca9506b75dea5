// The per-source tables (src/classifier/sources.ts) and how a key's bands resolve against them
// (src/classifier/policy.ts): a band the key sets wins for every source, an unset one is the
// source's default.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RULE_NAMES } from '../../src/classifier/classify.js';
import { KeyPolicies } from '../../src/classifier/key-policies.js';
import { band, bandsOf, DEFAULT_CLASSIFICATION_POLICY, parseClassificationPolicy } from '../../src/classifier/policy.js';
import { RULE_WEIGHTS, SOURCE_BANDS, SOURCES, weighBlock } from '../../src/classifier/sources.js';
import type { Block } from '../../src/classifier/types.js';
import type { ApiKey } from '../../src/keys/types.js';

const parse = (classification: Record<string, unknown>) => parseClassificationPolicy({ classification }, RULE_NAMES);

describe('the per-source tables', () => {
  test('forms: BAD from 3, NEUTRAL from 1, every rule at weight 1; mail: BAD from 2, NEUTRAL from 1.25, LINKS half, REPETITION and PROFANITY nothing', () => {
    assert.deepEqual(SOURCES, ['form', 'mail']);
    assert.deepEqual(SOURCE_BANDS, { form: { neutralScore: 1, badScore: 3 }, mail: { neutralScore: 1.25, badScore: 2 } });
    assert.deepEqual(RULE_WEIGHTS, { form: {}, mail: { LINKS: 0.5, REPETITION: 0, PROFANITY: 0 } });
  });

  test('every weighted rule is a rule, every weight in [0, 1], every source a band with neutralScore ≤ badScore', () => {
    for (const source of SOURCES) {
      for (const [name, weight] of Object.entries(RULE_WEIGHTS[source])) {
        assert.ok(RULE_NAMES.has(name), `${source}: ${name}`);
        assert.ok(weight >= 0 && weight <= 1, `${source}: ${name} ${weight}`);
      }
      assert.ok(SOURCE_BANDS[source].neutralScore <= SOURCE_BANDS[source].badScore, source);
    }
  });

  test('weighBlock multiplies the weighted rules that fired and sums the block again; an untouched block is returned as is', () => {
    const block: Block = { rules: { LINKS: { score: 1.5 }, PROFANITY: { score: 1 }, REPETITION: { score: 0 }, CAPS: { score: 0.7 } }, score: 3.2, time: 0.1 };
    assert.deepEqual(weighBlock(block, RULE_WEIGHTS.mail), {
      rules: { LINKS: { score: 0.75 }, PROFANITY: { score: 0 }, REPETITION: { score: 0 }, CAPS: { score: 0.7 } }, score: 1.45, time: 0.1,
    });
    assert.equal(weighBlock(block, RULE_WEIGHTS.form), block);
    const quiet: Block = { rules: { LINKS: { score: 0 }, CAPS: { score: 0.7 } }, score: 0.7, time: 0 };
    assert.equal(weighBlock(quiet, RULE_WEIGHTS.mail), quiet);
    assert.deepEqual(block.rules.LINKS, { score: 1.5 }, 'the input is not changed');
  });
});

describe("a key's bands", () => {
  test('a key without a policy or without a classification object: bands unset, each source its defaults', () => {
    assert.equal(parseClassificationPolicy(null, RULE_NAMES), DEFAULT_CLASSIFICATION_POLICY);
    assert.equal(parseClassificationPolicy({ maxNumber: 1000 }, RULE_NAMES), DEFAULT_CLASSIFICATION_POLICY);
    assert.equal(DEFAULT_CLASSIFICATION_POLICY.neutralScore, null);
    assert.equal(DEFAULT_CLASSIFICATION_POLICY.badScore, null);
    assert.deepEqual(DEFAULT_CLASSIFICATION_POLICY.bands, { form: { neutralScore: 1, badScore: 3 }, mail: { neutralScore: 1.25, badScore: 2 } });
    const keys = new KeyPolicies();
    assert.equal(keys.classification({ challengePolicy: null } as ApiKey).bands.mail, SOURCE_BANDS.mail);
  });

  test('a classification object that sets no band keeps them unset: the source defaults, not the form defaults filled in', () => {
    const p = parse({ fields: true, disableRules: ['LINKS'] });
    assert.deepEqual([p.neutralScore, p.badScore], [null, null]);
    assert.equal(p.bands.form, SOURCE_BANDS.form);
    assert.equal(p.bands.mail, SOURCE_BANDS.mail);
  });

  test('bands the key sets win for forms and mail alike', () => {
    const p = parse({ neutralScore: 1, badScore: 3 });
    assert.deepEqual([p.neutralScore, p.badScore], [1, 3]);
    assert.deepEqual(p.bands, { form: { neutralScore: 1, badScore: 3 }, mail: { neutralScore: 1, badScore: 3 } });
    assert.deepEqual(parse({ neutralScore: 40, badScore: 50 }).bands.mail, { neutralScore: 40, badScore: 50 });
  });

  test('one band set: kept for every source; the other is the source default, moved onto it when they would cross', () => {
    assert.deepEqual(parse({ badScore: 2.5 }).bands, { form: { neutralScore: 1, badScore: 2.5 }, mail: { neutralScore: 1.25, badScore: 2.5 } });
    assert.deepEqual(parse({ badScore: 1.1 }).bands, { form: { neutralScore: 1, badScore: 1.1 }, mail: { neutralScore: 1.1, badScore: 1.1 } });
    assert.deepEqual(parse({ badScore: 0.8 }).bands, { form: { neutralScore: 0.8, badScore: 0.8 }, mail: { neutralScore: 0.8, badScore: 0.8 } });
    assert.deepEqual(parse({ neutralScore: 1.5 }).bands, { form: { neutralScore: 1.5, badScore: 3 }, mail: { neutralScore: 1.5, badScore: 2 } });
    assert.deepEqual(parse({ neutralScore: 2.5 }).bands, { form: { neutralScore: 2.5, badScore: 3 }, mail: { neutralScore: 2.5, badScore: 2.5 } });
    const p = parse({ neutralScore: 2.5 });
    assert.deepEqual([p.neutralScore, p.badScore], [2.5, null]);
  });

  test('both set and crossing, or out of range: POLICY_INVALID', () => {
    assert.throws(() => parse({ neutralScore: 3, badScore: 2 }), { code: 'POLICY_INVALID', message: /badScore must not be below neutralScore/ });
    assert.throws(() => parse({ badScore: 0 }), { code: 'POLICY_INVALID', message: /badScore must be a number in \(0, 100\]/ });
    assert.throws(() => parse({ neutralScore: null }), { code: 'POLICY_INVALID', message: /neutralScore must be a number/ });
  });

  test('bandsOf and band: GOOD below neutralScore, NEUTRAL up to badScore, BAD from it', () => {
    assert.equal(bandsOf(null, null, 'mail'), SOURCE_BANDS.mail);
    const mail = SOURCE_BANDS.mail;
    const form = SOURCE_BANDS.form;
    assert.deepEqual([1.2, 1.25, 1.99, 2, 2.99, 3].map((s) => band(s, mail)), ['GOOD', 'NEUTRAL', 'NEUTRAL', 'BAD', 'BAD', 'BAD']);
    assert.deepEqual([0.99, 1, 1.25, 2, 2.99, 3].map((s) => band(s, form)), ['GOOD', 'NEUTRAL', 'NEUTRAL', 'NEUTRAL', 'NEUTRAL', 'BAD']);
  });
});
