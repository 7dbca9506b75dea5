// A key's code-challenge settings, stored in its challenge policy next to the proof-of-work fields
// (src/pow/policy.ts validates them when the policy is set; docs/code-challenge.md):
//   codeChallenge   "never" (default): proof of work alone; "always": every challenge asks for a
//                   code; "auto": only when the client's risk score reaches codeThreshold
//   codeLength      characters of the code, MIN_CODE_LENGTH to MAX_CODE_LENGTH; default 5
//   codeThreshold   the risk score (src/abuse/score.ts, 0 to 3) from which "auto" asks; default 1,
//                   where NEUTRAL begins: a clean client scores 0 and never sees a code
import { PalisadeError } from '../errors.js';
import { MAX_CODE_LENGTH, MIN_CODE_LENGTH } from './code.js';

export const CODE_CHALLENGE_MODES = ['never', 'auto', 'always'] as const;
export type CodeChallengeMode = (typeof CODE_CHALLENGE_MODES)[number];

export interface CodePolicy {
  readonly mode: CodeChallengeMode;
  readonly length: number;
  readonly threshold: number;
}

export const CODE_POLICY_DEFAULTS: CodePolicy = Object.freeze({ mode: 'never', length: 5, threshold: 1 });

export const CODE_POLICY_FIELDS = ['codeChallenge', 'codeLength', 'codeThreshold'] as const;

/** The policy's code-challenge settings (the defaults when it has none); POLICY_INVALID naming what is wrong. */
export function parseCodePolicy(stored: Readonly<Record<string, unknown>> | null): CodePolicy {
  if (stored === null || (stored.codeChallenge === undefined && stored.codeLength === undefined && stored.codeThreshold === undefined)) {
    return CODE_POLICY_DEFAULTS;
  }
  const mode = stored.codeChallenge ?? CODE_POLICY_DEFAULTS.mode;
  if (typeof mode !== 'string' || !(CODE_CHALLENGE_MODES as readonly string[]).includes(mode)) {
    invalid(`codeChallenge must be one of ${CODE_CHALLENGE_MODES.join(', ')}`);
  }
  const length = stored.codeLength ?? CODE_POLICY_DEFAULTS.length;
  if (typeof length !== 'number' || !Number.isInteger(length) || length < MIN_CODE_LENGTH || length > MAX_CODE_LENGTH) {
    invalid(`codeLength must be an integer in [${MIN_CODE_LENGTH}, ${MAX_CODE_LENGTH}]`);
  }
  const threshold = stored.codeThreshold ?? CODE_POLICY_DEFAULTS.threshold;
  if (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < 0 || threshold > 3) {
    invalid('codeThreshold must be a number in [0, 3] (the risk score of src/abuse/score.ts)');
  }
  if (mode !== 'never' && stored.version === 1) invalid('codeChallenge applies to version 2 policies (the v1 payload cannot carry its hash)');
  return Object.freeze({ mode: mode as CodeChallengeMode, length, threshold });
}

function invalid(detail: string): never {
  throw new PalisadeError('POLICY_INVALID', `challenge policy: ${detail}`);
}
