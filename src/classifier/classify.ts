// classify(): one classification from every dimension that has input (docs/classifier.md). Each
// dimension is a block of named rules; the total score is the sum of the blocks' scores, and the
// key's bands (policy.ts) turn it into GOOD, NEUTRAL or BAD. `reasons` names the rules that
// raised the score, highest first.
import type { IpSignals, UserAgentSignals } from '../intel/intel.js';
import { round2 } from './block.js';
import type { ClassifierLists } from './classifier-lists.js';
import { MESSAGE_RULES } from './eml/message-rules.js';
import { analyzeEmail, EMAIL_RULES } from './email.js';
import type { MxLookup } from './mx-lookup.js';
import {
  analyzeDevice, analyzeIp, analyzeLocation, DEVICE_RULES, IP_RULES, LOCATION_RULES, type CountryLists, type DeviceBlock, type IpBlock,
  type LocationBlock,
} from './network-rules.js';
import { band } from './policy.js';
import { analyzeSimilarity, SIMILARITY_RULES, type SimilarityIndex } from './similarity.js';
import { SOURCE_BANDS, weighBlock, type Bands } from './sources.js';
import { analyzeText, TEXT_RULES, type LanguageDetector } from './text/index.js';
import type { Block, Classification, EmailBlock, RuleDefinition, SimilarityBlock, TextBlock } from './types.js';

/** Every rule of every dimension, in the order docs/classifier.md lists them (the message rules apply to POST /v1/eml only). */
export const ALL_RULES: readonly RuleDefinition[] = Object.freeze([
  ...TEXT_RULES, ...EMAIL_RULES, ...IP_RULES, ...LOCATION_RULES, ...DEVICE_RULES, ...SIMILARITY_RULES, ...MESSAGE_RULES,
]);
export const RULE_NAMES: ReadonlySet<string> = new Set(ALL_RULES.map((r) => r.name));

export interface ClassifierDeps {
  /** The language detector (text/language.ts); null = no language detection. */
  readonly detector: LanguageDetector | null;
  readonly lists: Pick<ClassifierLists, 'disposable' | 'freeProviders' | 'phishing'>;
  /** MX checks; null = the MX rule does not run. */
  readonly mx: MxLookup | null;
}

export interface ClassifyInput {
  /** Texts and field values; the text block is null when none has a character. */
  readonly texts: readonly string[];
  readonly expectedLanguages?: readonly string[] | null;
  readonly classifier?: string | null;
  readonly email?: string | null;
  /** IP intelligence of the sender's address; null = no ip block (and no IP location). */
  readonly ip?: IpSignals | null;
  /** false: `ip` locates the sender but the ip block is left out (its facts are weighed elsewhere). Default true. */
  readonly ipRules?: boolean;
  /** The abuse penalty of the address when it is the requester's own; default 0. */
  readonly penalty?: number;
  readonly timeZone?: string | null;
  readonly countries?: CountryLists;
  /** The sender's User-Agent verdict; null = no device block. */
  readonly userAgent?: UserAgentSignals | null;
  /** The account's training data; null = no similarity block. */
  readonly similarity?: SimilarityIndex | null;
  readonly disabled?: ReadonlySet<string>;
  /** The key's bands; default the form's (SOURCE_BANDS.form). */
  readonly bands?: Bands;
  /** The source's rule weights (RULE_WEIGHTS in sources.ts); default the form's: every rule counts in full. */
  readonly weights?: Readonly<Record<string, number>>;
}

export interface ClassifierResult {
  readonly classification: Classification;
  readonly score: number;
  readonly reasons: readonly string[];
  readonly text: TextBlock | null;
  readonly email: EmailBlock | null;
  readonly ip: IpBlock | null;
  readonly location: LocationBlock | null;
  readonly device: DeviceBlock | null;
  readonly similarity: SimilarityBlock | null;
  /** Always null: rate limits answer 429 before classification (kept for ALTCHA's response shape). */
  readonly rateLimit: null;
  /** Milliseconds spent classifying, two decimals. */
  readonly time: number;
}

const NONE: ReadonlySet<string> = new Set();
const NO_COUNTRIES: CountryLists = Object.freeze({ expected: null, blocked: null });

export async function classify(input: ClassifyInput, deps: ClassifierDeps): Promise<ClassifierResult> {
  const started = performance.now();
  return combine(await classifyBlocks(input, deps), input.bands ?? SOURCE_BANDS.form, started);
}

export type Blocks = Pick<ClassifierResult, 'text' | 'email' | 'ip' | 'location' | 'device' | 'similarity'>;

/** Every dimension's block (null where its input is absent), each rule counted by `input.weights`. */
export async function classifyBlocks(input: ClassifyInput, deps: ClassifierDeps): Promise<Blocks> {
  const disabled = input.disabled ?? NONE;
  // The MX lookup is the only wait: it starts first and the synchronous rules run meanwhile.
  const emailing = input.email == null ? null : analyzeEmail(input.email, {
    disposable: deps.lists.disposable(), freeProviders: deps.lists.freeProviders(), mx: deps.mx,
  }, { disabled });
  const hasText = input.texts.some((t) => t.length > 0);
  const text = hasText ? analyzeText(
    { texts: input.texts, expectedLanguages: input.expectedLanguages ?? null, classifier: input.classifier ?? null },
    { disabled, phishing: deps.lists.phishing(), detector: deps.detector },
  ) : null;
  const similarity = hasText && input.similarity != null && input.similarity.size > 0
    ? analyzeSimilarity(input.similarity, input.texts, { disabled })
    : null;
  const ip = input.ip == null || input.ipRules === false ? null : analyzeIp(input.ip, input.penalty ?? 0, disabled);
  const location = analyzeLocation(input.ip ?? null, input.timeZone ?? null, input.countries ?? NO_COUNTRIES, disabled);
  const device = input.userAgent == null ? null : analyzeDevice(input.userAgent, disabled);
  const email = emailing === null ? null : await emailing;
  const blocks: Blocks = { text, email, ip, location, device, similarity };
  const weights = input.weights;
  if (weights === undefined) return blocks;
  const weigh = <B extends Block>(b: B | null): B | null => (b === null ? null : weighBlock(b, weights));
  return {
    text: weigh(text), email: weigh(email), ip: weigh(ip), location: weigh(location), device: weigh(device), similarity: weigh(similarity),
  };
}

/** The total, the classification and the reasons of the blocks, and of `extra` (the message block of /v1/eml) when given. */
export function combine(blocks: Blocks, bands: Bands, started: number, extra: Block | null = null): ClassifierResult {
  let total = 0;
  const fired: [string, number][] = [];
  for (const block of [blocks.text, blocks.email, blocks.ip, blocks.location, blocks.device, blocks.similarity, extra] as (Block | null)[]) {
    if (block === null) continue;
    total += block.score;
    for (const name in block.rules) {
      const s = block.rules[name]!.score;
      if (s > 0) fired.push([name, s]);
    }
  }
  fired.sort((a, b) => b[1] - a[1]);
  const score = Math.max(0, round2(total));
  return {
    classification: band(score, bands), score, reasons: fired.map((f) => f[0]), ...blocks, rateLimit: null,
    time: round2(performance.now() - started),
  };
}
