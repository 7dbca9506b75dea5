// What the audio challenge says: each character of the code as a word of the listener's language,
// twice, so that eSpeak pronounces letter names rather than guessing at a word (a lone "A" would be
// read as the English article). English, German, French and Spanish: the eSpeak voices mespeak ships
// for them (voices/en/en-us.json, de.json, fr.json, es.json). Anything else falls back to English.
import { CODE_ALPHABET } from './code.js';

export const AUDIO_LANGUAGES = ['en', 'de', 'fr', 'es'] as const;
export type AudioLanguage = (typeof AUDIO_LANGUAGES)[number];

/** The mespeak voice file (under node_modules/mespeak/voices/) and its id for speak(). */
export const VOICES: Readonly<Record<AudioLanguage, { readonly file: string; readonly id: string }>> = Object.freeze({
  en: { file: 'en/en-us.json', id: 'en/en-us' },
  de: { file: 'de.json', id: 'de' },
  fr: { file: 'fr.json', id: 'fr' },
  es: { file: 'es.json', id: 'es' },
});

// One spelling per character of CODE_ALPHABET, in its order: ACEFHJKMNPRTWXY234679.
const NAMES: Readonly<Record<AudioLanguage, readonly string[]>> = {
  en: ['ay', 'see', 'ee', 'eff', 'aitch', 'jay', 'kay', 'em', 'en', 'pee', 'ar', 'tee', 'double you', 'ex', 'why',
    'two', 'three', 'four', 'six', 'seven', 'nine'],
  de: ['a', 'tse', 'e', 'eff', 'ha', 'jott', 'ka', 'emm', 'enn', 'pe', 'err', 'te', 'we', 'iks', 'üpsilon',
    'zwei', 'drei', 'vier', 'sechs', 'sieben', 'neun'],
  fr: ['a', 'cé', 'e', 'èfe', 'ache', 'ji', 'ka', 'ème', 'ène', 'pé', 'ère', 'té', 'double vé', 'ixe', 'i grec',
    'deux', 'trois', 'quatre', 'six', 'sept', 'neuf'],
  es: ['a', 'ce', 'e', 'efe', 'hache', 'jota', 'ka', 'eme', 'ene', 'pe', 'erre', 'te', 'uve doble', 'equis', 'i griega',
    'dos', 'tres', 'cuatro', 'seis', 'siete', 'nueve'],
};

/** The language of `?language=` (a BCP 47 tag such as "de-CH" or "fr"); English when unsupported or absent. */
export function audioLanguage(tag: string | undefined): AudioLanguage {
  if (tag === undefined) return 'en';
  const primary = /^([A-Za-z]{2,3})(?:[-_]|$)/.exec(tag)?.[1]?.toLowerCase();
  return (AUDIO_LANGUAGES as readonly string[]).includes(primary ?? '') ? (primary as AudioLanguage) : 'en';
}

/** The words spoken for one pass over `code` (characters outside the alphabet are skipped). */
export function spokenWords(code: string, language: AudioLanguage): string[] {
  const names = NAMES[language];
  const words: string[] = [];
  for (const ch of code) {
    const i = CODE_ALPHABET.indexOf(ch);
    if (i >= 0) words.push(names[i]!);
  }
  return words;
}
