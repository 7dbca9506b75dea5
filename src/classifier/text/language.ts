// Language detection with eld (Efficient Language Detector, Apache-2.0): 60 languages from a
// byte n-gram database. The extra-small database is used (37 MB of heap, ~250 ms to load; the
// large one needs ~140 MB for a gain of a few tenths of a percent on sentences, per eld's own
// benchmarks). eld reads only the first ~350 bytes of what it is given, so a detection costs the
// same whatever the text's length; the scanner hands it a sample of plain words (no links, codes
// or markup) from the longest of the texts.

export interface LanguageDetector {
  /** ISO 639-1 code of the sample's language, or null when eld finds it unreliable. */
  detect(sample: string): string | null;
}

interface EldResult {
  readonly language: string;
  isReliable(): boolean;
}

let loading: Promise<LanguageDetector> | null = null;

/** Loads eld's database once per process; later calls share the same detector. */
export function loadLanguageDetector(): Promise<LanguageDetector> {
  loading ??= import('eld/extrasmall').then(({ eld }) => {
    const detector = eld.newInstance();
    return {
      detect(sample: string): string | null {
        const result = detector.detect(sample) as EldResult;
        return result.language !== '' && result.isReliable() ? result.language : null;
      },
    };
  });
  return loading;
}
