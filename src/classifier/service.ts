// What a serving process needs to classify: the language detector, the lists and MX lookups, each
// account's training data (cached) and the writer of spam-flagged submissions.
import { hkdfSync } from 'node:crypto';
import type { Config } from '../config/index.js';
import type { Database } from '../db/client.js';
import { insertSpamSubmissions } from '../db/spam-submissions.js';
import { listTrainingData } from '../db/training-data.js';
import type { Logger } from '../log.js';
import type { ClassifierLists } from './classifier-lists.js';
import type { ClassifierDeps, ClassifierResult } from './classify.js';
import type { MxLookup } from './mx-lookup.js';
import { createSubmissionSink, submissionText, type SubmissionSink, type SubmissionStoreMode } from './submissions.js';
import { loadLanguageDetector, prepareTextAnalysis } from './text/index.js';
import { createTrainingCache, type TrainingCache } from './training-cache.js';

export interface ClassifierService {
  readonly deps: ClassifierDeps;
  readonly training: TrainingCache;
  /** Keeps a BAD classification for review (SPAM_SUBMISSIONS_STORE); never waits. */
  keep(submission: KeptSubmission): void;
  close(): Promise<void>;
}

export interface KeptSubmission {
  readonly accountId: string;
  readonly apiKeyId: string;
  readonly source: 'classifier' | 'verify' | 'eml';
  readonly texts: readonly string[];
  readonly fieldNames: readonly string[];
  readonly result: Pick<ClassifierResult, 'score' | 'reasons' | 'email' | 'location'>;
  /** Already anonymised when ANONYMIZE_IP_ADDRESS says so; null when no IP was analysed. */
  readonly ip: string | null;
}

export async function startClassifier(
  config: Pick<Config, 'SPAM_SUBMISSIONS_STORE' | 'CACHE_DURATION_TRAINING_DATA' | 'secrets'>, db: Database, lists: ClassifierLists,
  mx: MxLookup, logger: Logger,
): Promise<ClassifierService> {
  const detector = await loadLanguageDetector();
  // Built now rather than by the first classification: the text model (~60 ms), the embedded
  // disposable and free-provider lists (~90 ms, 12 MB).
  prepareTextAnalysis();
  lists.disposable();
  lists.freeProviders();
  const mode = config.SPAM_SUBMISSIONS_STORE as SubmissionStoreMode;
  const hashKey = Buffer.from(hkdfSync('sha256', config.secrets.PALISADE_HMAC_SECRET, '', 'palisade spam submissions', 32));
  let dropped = 0;
  const sink: SubmissionSink | null = mode === 'off' ? null : createSubmissionSink((batch) => insertSpamSubmissions(db.sql, batch), {
    onDropped: () => {
      if (dropped++ % 1000 === 0) logger.warn({ dropped }, 'spam submissions dropped: more arrive than the database takes');
    },
    onError: (err) => logger.warn({ err: (err as Error).message }, 'spam submissions not written'),
  });
  const training = createTrainingCache((accountId) => listTrainingData(db.sql, accountId), {
    ttlMs: config.CACHE_DURATION_TRAINING_DATA,
    onError: (err) => logger.warn({ err: (err as Error).message }, 'training data not reloaded; the previous copy stays in use'),
  });
  return {
    deps: { detector, lists, mx },
    training,
    keep(s) {
      if (sink === null) return;
      const { text, textHash } = submissionText(s.texts, mode, hashKey);
      sink.record({
        accountId: s.accountId, apiKeyId: s.apiKeyId, source: s.source, score: s.result.score, reasons: s.result.reasons.slice(0, 50),
        text, textHash, fields: s.fieldNames.slice(0, 200), emailDomain: s.result.email?.domain ?? null, ip: s.ip,
        country: s.result.location?.countryCode ?? null,
      });
    },
    async close() {
      await sink?.close();
    },
  };
}
