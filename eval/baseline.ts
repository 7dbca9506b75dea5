// A deliberately small word-list scorer that exists only so the harness has something to run before
// the real classifier is wired into eval/classifier.ts. It is no reference point for the engine: a
// few spam words in seven languages, links, markup and SQL fragments, nothing tuned.
import type { ClassifierInput, ClassifierVerdict } from './lib/evaluate.js';

const WORDS = new RegExp(
  '\\b(viagra|cialis|pharmacy|casino|jackpot|free spins|bonus|payday|bitcoin|crypto|backlinks?|seo|porn|xxx|' +
  'lottery|winner|inheritance|unsubscribe|click here|apotheke|kredit|gewinn|pharmacie|crédit|gagnant|farmacia|' +
  'préstamo|ganador|prestito|vincitore|empréstimo|apostas|lening|gratis)\\b',
  'giu',
);

export function baseline(input: ClassifierInput): ClassifierVerdict {
  const text = input.texts.join('\n');
  const words = text.match(WORDS)?.length ?? 0;
  const links = text.match(/https?:\/\//gi)?.length ?? 0;
  const markup = /<a\s+href|\[url[=\]]|union\s+select|'\s*or\s+'?1'?\s*=\s*'?1/i.test(text) ? 3 : 0;
  const score = words + Math.max(0, links - 1) + markup;
  return { classification: score >= 4 ? 'BAD' : score >= 2 ? 'NEUTRAL' : 'GOOD', score };
}
