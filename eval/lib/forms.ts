// The multilingual form-submission set written for Palisade: eval/forms/<language>.jsonl, one message
// per line (eval/README.md describes how it was made and what each family holds).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Label } from './metrics.js';

export const FORM_LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl'] as const;
export type FormLanguage = (typeof FORM_LANGUAGES)[number];

export const HAM_FAMILIES = ['legit-support', 'legit-sales', 'legit-short', 'legit-booking', 'legit-lookalike'] as const;
export const SPAM_FAMILIES = [
  'pharmacy', 'casino', 'loans', 'crypto', 'seo', 'outreach', 'adult', 'phishing', 'scam', 'gibberish', 'injection',
] as const;
export type FormFamily = (typeof HAM_FAMILIES)[number] | (typeof SPAM_FAMILIES)[number];

export const FORM_SOURCE = 'written for Palisade';

export interface FormMessage {
  readonly id: string;
  readonly language: FormLanguage;
  readonly text: string;
  readonly label: Label;
  readonly family: FormFamily;
  readonly email: string | null;
  readonly source: string;
}

/** The directory of the .jsonl files, beside this module's source (dist/eval/lib → eval/forms). */
export function formsDir(): string {
  return fileURLToPath(new URL('../../../eval/forms/', import.meta.url));
}

/** Every message of every language, in file order; throws on the first line that breaks the format. */
export function loadForms(dir: string = formsDir()): FormMessage[] {
  const out: FormMessage[] = [];
  for (const language of FORM_LANGUAGES) {
    const lines = readFileSync(join(dir, `${language}.jsonl`), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const where = `${language}.jsonl:${i + 1}`;
      const problem = formLineProblem(line);
      if (problem) throw new Error(`${where}: ${problem}`);
      const row = JSON.parse(line) as { text: string; label: Label; family: FormFamily; email?: string; source: string };
      out.push({
        id: where, language, text: row.text, label: row.label, family: row.family, email: row.email ?? null, source: row.source,
      });
    });
  }
  return out;
}

const KEYS = new Set(['text', 'label', 'family', 'email', 'source']);

/** What is wrong with one line of a forms file, or null when it is a valid message. */
export function formLineProblem(line: string): string | null {
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return 'not an object';
  const r = row as Record<string, unknown>;
  const extra = Object.keys(r).find((k) => !KEYS.has(k));
  if (extra !== undefined) return `unknown key ${extra}`;
  if (typeof r.text !== 'string' || r.text.trim() === '') return 'text must be a non-empty string';
  if (r.label !== 'ham' && r.label !== 'spam') return 'label must be ham or spam';
  const families: readonly string[] = r.label === 'ham' ? HAM_FAMILIES : SPAM_FAMILIES;
  if (typeof r.family !== 'string' || !families.includes(r.family)) return `family ${String(r.family)} is not a ${r.label} family`;
  if (r.email !== undefined && (typeof r.email !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(r.email))) {
    return 'email must be an address';
  }
  if (typeof r.source !== 'string' || r.source.trim() === '') return 'source must be named';
  return null;
}
