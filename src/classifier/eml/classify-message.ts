// The classification of a parsed message: classify() over its subject and body (the text block),
// its From address (the e-mail block), the sender's IP from the Received chain (the ip and location
// blocks) and the account's training data (similarity), then the message block (message-rules.ts)
// on top. Each rule counts by mail's weight (RULE_WEIGHTS.mail in sources.ts: some text rules,
// written for forms, fire on legitimate mail as often as on spam). The total is the sum of every
// block's score; the key's bands (mail's by default, SOURCE_BANDS.mail) decide GOOD, NEUTRAL or BAD.
import { classifyBlocks, combine, type ClassifierDeps, type ClassifierResult, type ClassifyInput } from '../classify.js';
import { RULE_WEIGHTS, SOURCE_BANDS, weighBlock } from '../sources.js';
import type { Block } from '../types.js';
import type { Authentication } from './authenticate.js';
import { analyzeMessage } from './message-rules.js';
import type { ParsedMessage } from './parse-message.js';

export interface MessageClassification extends Omit<ClassifierResult, 'time'> {
  readonly message: Block;
  readonly time: number;
}

/** Characters of body text classified: the text rules are linear, but a 5 MB body says no more than its start. */
export const MAX_CLASSIFIED_CHARS = 100_000;

export function messageTexts(m: ParsedMessage): string[] {
  // The text derived from HTML carries the link targets the text rules look at.
  const body = m.htmlText ?? m.text ?? '';
  return [m.subject ?? '', body.length > MAX_CLASSIFIED_CHARS ? body.slice(0, MAX_CLASSIFIED_CHARS) : body];
}

export async function classifyMessage(
  m: ParsedMessage, auth: Authentication | null, input: Omit<ClassifyInput, 'texts' | 'email'>, deps: ClassifierDeps,
): Promise<MessageClassification> {
  const started = performance.now();
  const from = m.from?.address ?? '';
  const blocks = await classifyBlocks({ ...input, weights: WEIGHTS, texts: messageTexts(m), email: from === '' ? null : from }, deps);
  const message = weighBlock(analyzeMessage(m, auth, input.disabled ?? new Set<string>()), WEIGHTS);
  return { ...combine(blocks, input.bands ?? SOURCE_BANDS.mail, started, message), message };
}

const WEIGHTS = RULE_WEIGHTS.mail;
