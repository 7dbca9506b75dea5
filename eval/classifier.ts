// The one place the evaluation takes its classifier from: the engine's classify() with the
// default bands, the embedded lists and no DNS (the corpus's senders are from 2002, and figures
// must not depend on the network of the day), no IP, no training data.
import { classify, type ClassifierDeps } from '../src/classifier/classify.js';
import { embeddedDisposableDomains, embeddedFreeProviders } from '../src/classifier/email-domains.js';
import { PhishingList } from '../src/classifier/phishing-list.js';
import { loadLanguageDetector } from '../src/classifier/text/index.js';
import type { Classifier } from './lib/evaluate.js';

export const classifierName = 'classify() (src/classifier/classify.ts): text and e-mail rules, embedded lists, no DNS';

const detector = await loadLanguageDetector();
const disposable = embeddedDisposableDomains();
const freeProviders = embeddedFreeProviders();
const phishing = PhishingList.EMPTY;
const deps: ClassifierDeps = { detector, mx: null, lists: { disposable: () => disposable, freeProviders: () => freeProviders, phishing: () => phishing } };

export const classifier: Classifier = (input) => classify({
  texts: input.texts, email: input.email ?? null, expectedLanguages: input.expectedLanguages ?? null,
}, deps);
