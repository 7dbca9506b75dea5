// The one place the evaluation takes its classifier from. Until the engine's classify() exists this
// runs the word-list baseline; wiring in the engine replaces the body of this file and nothing else.
// The engine should run offline here (no DNS look-ups for the e-mail rules): the corpus's senders
// are from 2002, and figures must not depend on the network of the day.
import { baseline } from './baseline.js';
import type { Classifier } from './lib/evaluate.js';

export const classifierName = 'word-list baseline (eval/baseline.ts), a stand-in until the engine is wired in';

export const classifier: Classifier = baseline;
