// Classification inside POST /v1/verify: when a key's policy asks the widget for the form's fields
// and time zone (x-altcha-config sentinel.fields / sentinel.timeZone), the fields' values are
// classified and the result joins the abuse assessment in the signed verificationData.
//
// The abuse assessment already weighs the client's IP (penalty, threat marks, high-risk country,
// the key's country rules), so here only what it cannot see counts: the text rules, the
// similarity to the account's training data, and a time zone that disagrees with the IP's
// country. score = abuse score + classification score; reasons and bands likewise.
import type { Intel } from '../intel/intel.js';
import { anonymizeIp } from '../ip.js';
import type { AssessInput, Assessment } from '../routes/verify.js';
import { classify, type ClassifierResult } from './classify.js';
import type { KeyPolicies } from './key-policies.js';
import { band } from './policy.js';
import type { ClassifierService } from './service.js';

export interface VerifyClassificationDeps {
  readonly classifier: ClassifierService;
  readonly intel: Intel;
  readonly policies: KeyPolicies;
  readonly anonymizeIp: boolean;
}

/** Rules whose facts the abuse assessment weighs already. */
const WEIGHED_BY_ABUSE: ReadonlySet<string> = new Set(['BLOCKED_COUNTRY', 'UNEXPECTED_COUNTRY', 'HIGH_RISK_COUNTRY']);

/**
 * Wraps the abuse assessment. Keys without classification settings, and requests without fields
 * or a time zone, get the abuse assessment itself: nothing is allocated for them.
 */
export function withClassification(
  assess: (input: AssessInput) => Assessment | Promise<Assessment>, deps: VerifyClassificationDeps,
): (input: AssessInput) => Assessment | Promise<Assessment> {
  return (input) => {
    const base = assess(input);
    const policy = deps.policies.classification(input.key);
    if ((!policy.fields && !policy.timeZone) || (input.fields === null && input.timeZone === null)) return base;
    const texts = input.fields === null || !policy.fields ? [] : Object.values(input.fields);
    const timeZone = policy.timeZone ? input.timeZone : null;
    let disabled = WEIGHED_BY_ABUSE;
    if (policy.disableRules.size > 0) disabled = new Set([...WEIGHED_BY_ABUSE, ...policy.disableRules]);
    const { req, key } = input;
    const training = texts.length === 0 ? null : deps.classifier.training.index(key.accountId);
    const classified = Promise.resolve(training).then((similarity) => classify({
      texts, expectedLanguages: policy.expectedLanguages, timeZone, ip: deps.intel.signals(req.ip, req.headers), ipRules: false,
      similarity, disabled, bands: policy.bands.form,
    }, deps.classifier.deps));
    return Promise.all([base, classified]).then(([abuse, result]) => {
      const score = Math.round((abuse.score + result.score) * 100) / 100;
      const classification = band(score, policy.bands.form);
      if (result.classification === 'BAD' || classification === 'BAD') {
        deps.classifier.keep({
          accountId: key.accountId, apiKeyId: key.id, source: 'verify', texts, fieldNames: input.fields === null ? [] : Object.keys(input.fields),
          result: { ...result, score }, ip: deps.anonymizeIp ? anonymizeIp(req.ip) : req.ip,
        });
      }
      const reasons = abuse.reasons.length === 0 ? result.reasons : [...abuse.reasons, ...result.reasons];
      return {
        score, reasons, classification, extra: { ...abuse.extra, ...signedFacts(result) },
        ...(policy.blockBad && classification === 'BAD' ? { refuse: 'BAD_CLASSIFICATION' as const } : {}),
      };
    });
  };
}

/** verificationData entries of the classification (PROTOCOL.md section 3: nested names). */
function signedFacts(result: ClassifierResult): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  if (result.text !== null) {
    out['text.score'] = result.text.score;
    if (result.text.language !== null) out['text.language'] = result.text.language;
  }
  if (result.similarity !== null) out['similarity.score'] = result.similarity.score;
  if (result.location !== null) out['location.score'] = result.location.score;
  return out;
}
