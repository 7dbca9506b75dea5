// POST /v1/classifier (server-side, API-key authorised; docs/classifier.md): classifies text, form
// fields, an e-mail address, an IP and its location, a User-Agent and the similarity to the
// account's training data. 200 {classification, score, reasons, text, email, ip, location, device,
// similarity, rateLimit, time}; a block is null when its input was absent.
import { classify, RULE_NAMES, type ClassifierResult } from '../classifier/classify.js';
import type { CountryLists } from '../classifier/network-rules.js';
import { KeyPolicies } from '../classifier/key-policies.js';
import { parseClassifierRequest, type ClassifierRequest } from '../classifier/request.js';
import type { ClassifierService } from '../classifier/service.js';
import { VOCABULARY_LANGUAGES } from '../classifier/text/index.js';
import type { Handler, RequestContext, Reply } from '../http/types.js';
import { json } from '../http/types.js';
import type { Intel } from '../intel/intel.js';
import { anonymizeIp } from '../ip.js';
import type { ApiKey } from '../keys/types.js';
import type { Classification } from '../usage/usage-buffer.js';

export interface ClassifierRouteDeps {
  /** Authorises the server-side request and charges the plan (the key's rate rule included). */
  readonly authorize: (req: RequestContext) => Promise<ApiKey>;
  readonly classifier: ClassifierService;
  readonly intel: Intel;
  /** The abuse penalty the address has earned with this service. */
  readonly penalty: (ip: string) => number | Promise<number>;
  readonly countUsage: (req: RequestContext, key: ApiKey, classification: Classification | null, origin: string | null) => void;
  readonly anonymizeIp: boolean;
}

const PARSE_OPTIONS = { ruleNames: RULE_NAMES, classifiers: new Set(VOCABULARY_LANGUAGES) };
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export function classifierRoute(deps: ClassifierRouteDeps): Handler {
  const policies = new KeyPolicies();
  return async (req: RequestContext): Promise<Reply> => {
    const key = await deps.authorize(req);
    const body = parseClassifierRequest(req.json(), PARSE_OPTIONS);
    const result = await classifyRequest(req, key, body, deps, policies);
    deps.countUsage(req, key, result.classification, null);
    if (result.classification === 'BAD') {
      const ip = body.ipAddress === null ? null : body.ipAddress === 'auto' ? req.ip : body.ipAddress;
      deps.classifier.keep({
        accountId: key.accountId, apiKeyId: key.id, source: 'classifier', texts: body.texts, fieldNames: body.fieldNames, result,
        ip: ip === null ? null : deps.anonymizeIp ? anonymizeIp(ip) : ip,
      });
    }
    return json(result, 200, { 'cache-control': 'no-store' });
  };
}

async function classifyRequest(
  req: RequestContext, key: ApiKey, body: ClassifierRequest, deps: ClassifierRouteDeps, policies: KeyPolicies,
): Promise<ClassifierResult> {
  const policy = policies.classification(key);
  const keyCountries = policies.countries(key);
  const auto = body.ipAddress === 'auto';
  const ip = auto ? req.ip : body.ipAddress;
  // The x-ip-* headers of a trusted load balancer describe the requester only.
  const signals = ip === null ? null : deps.intel.signals(ip, auto ? req.headers : NO_HEADERS);
  const penalty = ip === null ? 0 : await deps.penalty(ip);
  const userAgent = body.userAgent !== null
    ? deps.intel.userAgent({ 'user-agent': body.userAgent })
    : auto ? deps.intel.userAgent(req.headers) : null;
  const countries: CountryLists = {
    expected: body.expectedCountries ?? keyCountries?.expected ?? null,
    blocked: body.blockedCountries ?? keyCountries?.blocked ?? null,
  };
  let disabled = body.disableRules;
  if (policy.disableRules.size > 0) disabled = new Set([...disabled, ...policy.disableRules]);
  const training = body.texts.length === 0 ? null : await deps.classifier.training.index(key.accountId);
  return classify({
    texts: body.texts, expectedLanguages: body.expectedLanguages ?? policy.expectedLanguages, classifier: body.classifier,
    email: body.email, ip: signals, penalty, timeZone: body.timeZone, countries, userAgent, similarity: training, disabled,
    bands: policy.bands.form,
  }, deps.classifier.deps);
}
