// The classification of a parsed message: classify() over its subject and body (the text block),
// its From address (the e-mail block), the sender's IP from the Received chain (the ip and location
// blocks) and the account's training data (similarity), then the message block (message-rules.ts)
// on top. Each rule counts by mail's weight (RULE_WEIGHTS.mail in sources.ts: some text rules,
// written for forms, fire on legitimate mail as often as on spam). The total is the sum of every
// block's score; the key's bands (mail's by default, SOURCE_BANDS.mail) decide GOOD, NEUTRAL or BAD.
import { round2 } from '../block.js';
import { classify, type ClassifierDeps, type ClassifierResult, type ClassifyInput } from '../classify.js';
import { band } from '../policy.js';
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
  const disabled = input.disabled ?? new Set<string>();
  const from = m.from?.address ?? '';
  const classified = await classify({ ...input, texts: messageTexts(m), email: from === '' ? null : from }, deps);
  const base: ClassifierResult = {
    ...classified, text: weighed(classified.text), email: weighed(classified.email), ip: weighed(classified.ip),
    location: weighed(classified.location), device: weighed(classified.device), similarity: weighed(classified.similarity),
  };
  const reasons = classified.reasons.filter((name) => ruleScore(base, name) > 0);
  const message = weighBlock(analyzeMessage(m, auth, disabled), WEIGHTS);
  let total = message.score;
  for (const b of [base.text, base.email, base.ip, base.location, base.device, base.similarity]) if (b !== null) total += b.score;
  const fired: [string, number][] = reasons.map((name) => [name, ruleScore(base, name)]);
  for (const name in message.rules) {
    const s = message.rules[name]!.score;
    if (s > 0) fired.push([name, s]);
  }
  fired.sort((a, b) => b[1] - a[1]);
  const score = Math.max(0, round2(total));
  return {
    ...base, classification: band(score, input.bands ?? SOURCE_BANDS.mail), score, reasons: fired.map((f) => f[0]), message,
    time: round2(performance.now() - started),
  };
}

const WEIGHTS = RULE_WEIGHTS.mail;

function weighed<B extends Block>(block: B | null): B | null {
  return block === null ? null : weighBlock(block, WEIGHTS);
}

function ruleScore(r: ClassifierResult, name: string): number {
  for (const b of [r.text, r.email, r.ip, r.location, r.device, r.similarity]) {
    const rule = b?.rules[name];
    if (rule !== undefined) return rule.score;
  }
  return 0;
}
