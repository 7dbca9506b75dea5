// The text analysis engine of POST /v1/classifier: analyzeText and what it needs.
export { analyzeText, type TextInput, type TextOptions } from './analyze-text.js';
export { loadLanguageDetector, type LanguageDetector } from './language.js';
export { VOCABULARY_LANGUAGES } from './lexicon.js';
export { prepareTextAnalysis } from './text-model.js';
export { TEXT_RULE_NAMES, TEXT_RULES } from './text-rules.js';
