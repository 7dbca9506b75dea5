// The shapes of classification (POST /v1/classifier, classification inside /v1/verify, POST
// /v1/eml): one block per analysed dimension, each a set of named rules with a score, as ALTCHA
// Sentinel answers them (SENTINEL-NOTES.md section 1.3). A rule's score is 0 when it did not fire;
// the block's score is the sum of its rules' scores, and the total is the sum of the blocks'.
// Higher means more likely spam.

export type Classification = 'GOOD' | 'NEUTRAL' | 'BAD';

export const DIMENSIONS = ['text', 'email', 'ip', 'location', 'device', 'similarity', 'message'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export interface RuleScore {
  readonly score: number;
}

export interface Block {
  /** Every rule that ran, by name, with its score (0 when it did not fire). */
  readonly rules: Readonly<Record<string, RuleScore>>;
  /** Sum of the rules' scores, rounded to two decimals. */
  readonly score: number;
  /** Milliseconds spent on this block, two decimals. */
  readonly time: number;
}

export interface TextBlock extends Block {
  /** ISO 639-1 code of the detected language, or null when the text is too short to tell. */
  readonly language: string | null;
  /** The language model whose vocabularies were applied ('en', …; the request's `classifier` wins). */
  readonly classifier: string | null;
}

export interface EmailBlock extends Block {
  /** Lower-case domain of the address, or null when it has none. */
  readonly domain: string | null;
}

export interface SimilarityMatch {
  /** Training example id. */
  readonly id: string;
  /** Cosine similarity 0..1, three decimals. */
  readonly similarity: number;
}

export interface SimilarityBlock extends Block {
  /** The examples at or above their threshold, best first (at most 10). */
  readonly matches: readonly SimilarityMatch[];
}

/** A rule a dimension may fire: its name, its default score and what it means (docs/classifier.md). */
export interface RuleDefinition {
  readonly name: string;
  readonly dimension: Dimension;
  /** The score when the rule fires at full strength. Negative scores vouch for the input. */
  readonly score: number;
  readonly description: string;
}

/** A phishing list lookup (the text rules' URL_PHISHING). */
export interface PhishingEntry {
  readonly id: string;
  readonly target: string | null;
  readonly submittedAt: number | null;
}

export interface PhishingMatcher {
  /** The list entry for the URL (normalised, matched by URL, then by registrable domain), or null. */
  match(url: string): PhishingEntry | null;
}
