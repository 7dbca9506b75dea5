// Runs the text analysis with one rule enabled, so each rule is tested alone.
import assert from 'node:assert/strict';
import { analyzeText, TEXT_RULE_NAMES, type TextInput, type TextOptions } from '../../src/classifier/text/index.js';
import type { PhishingEntry, PhishingMatcher, TextBlock } from '../../src/classifier/types.js';

/** The disabled set that leaves only `names` running. */
export function only(...names: string[]): Set<string> {
  return new Set(TEXT_RULE_NAMES.filter((n) => !names.includes(n)));
}

/** The score of `rule` alone for `text` (one text or several fields). */
export function ruleScore(rule: string, text: string | readonly string[], input: Partial<TextInput> = {}, options: Partial<TextOptions> = {}): number {
  const block = analyze(text, input, { ...options, disabled: only(rule) });
  assert.deepEqual(Object.keys(block.rules), [rule]);
  return block.rules[rule]!.score;
}

export function analyze(text: string | readonly string[], input: Partial<TextInput> = {}, options: Partial<TextOptions> = {}): TextBlock {
  const texts = typeof text === 'string' ? [text] : text;
  return analyzeText({ ...input, texts }, { disabled: new Set(), ...options });
}

/** The rules that fired, with their scores. */
export function fired(block: TextBlock): Record<string, number> {
  return Object.fromEntries(Object.entries(block.rules).filter(([, r]) => r.score !== 0).map(([name, r]) => [name, r.score]));
}

/** A phishing list that knows the given hosts (as the real matcher would find them in a URL). */
export function fakePhishing(hosts: readonly string[]): PhishingMatcher & { readonly asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    match(url: string): PhishingEntry | null {
      asked.push(url);
      const host = new URL(url).hostname;
      return hosts.includes(host) ? { id: `p-${host}`, target: 'Bank', submittedAt: null } : null;
    },
  };
}
