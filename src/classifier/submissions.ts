// Spam-flagged submissions on their way to the database (src/db/spam-submissions.ts): queued by the
// request that classified them, written in batches off the request path. Under a flood of spam the
// queue is bounded: past maxQueue a submission is dropped and counted, never waited for.
import { createHmac } from 'node:crypto';
import type { NewSpamSubmission } from '../db/spam-submissions.js';

/** SPAM_SUBMISSIONS_STORE: what a kept submission holds of its text. */
export const SUBMISSION_STORE_MODES = ['text', 'hash', 'off'] as const;
export type SubmissionStoreMode = (typeof SUBMISSION_STORE_MODES)[number];

/** Characters of text kept with a submission (SPAM_SUBMISSIONS_STORE=text). */
export const MAX_SUBMISSION_TEXT = 10_000;

export interface SubmissionSink {
  /** Queues one submission; false when it was dropped (the queue is full, or the sink closed). */
  record(s: NewSpamSubmission): boolean;
  /** Writes what is queued. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface SubmissionSinkOptions {
  /** Default 1000 ms. */
  readonly flushMs?: number;
  /** Rows per INSERT; default 500. */
  readonly maxBatch?: number;
  /** Default 5000. */
  readonly maxQueue?: number;
  readonly onDropped?: () => void;
  readonly onError?: (err: unknown) => void;
}

const DEFAULTS = Object.freeze({ flushMs: 1000, maxBatch: 500, maxQueue: 5000 });

export function createSubmissionSink(write: (batch: readonly NewSpamSubmission[]) => Promise<void>, options: SubmissionSinkOptions = {}): SubmissionSink {
  const o = { ...DEFAULTS, ...options };
  let queue: NewSpamSubmission[] = [];
  let writing: Promise<void> | null = null;
  let closed = false;
  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      const batch = queue.slice(0, o.maxBatch);
      queue = queue.slice(batch.length);
      try {
        await write(batch);
      } catch (err) {
        // A database outage loses the batch rather than holding memory without bound: the
        // submissions are a review aid; the classification itself was already answered.
        o.onError?.(err);
      }
    }
  };
  const flush = (): Promise<void> => {
    writing ??= drain().finally(() => { writing = null; });
    return writing;
  };
  const timer = setInterval(() => { if (queue.length > 0) void flush(); }, o.flushMs);
  timer.unref();
  return {
    record(s) {
      if (closed || queue.length >= o.maxQueue) {
        o.onDropped?.();
        return false;
      }
      queue.push(s);
      return true;
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
    },
  };
}

/**
 * What a submission keeps of its texts: the joined text (at most MAX_SUBMISSION_TEXT characters)
 * with mode 'text', and always the hex HMAC-SHA-256 of the whole joined text under `hashKey`, so
 * that repeated submissions can be told apart without keeping what they said.
 */
export function submissionText(texts: readonly string[], mode: SubmissionStoreMode, hashKey: Buffer): { text: string | null; textHash: string } {
  const joined = texts.join('\n');
  const textHash = createHmac('sha256', hashKey).update(joined).digest('hex');
  return { text: mode === 'text' ? joined.slice(0, MAX_SUBMISSION_TEXT) : null, textHash };
}
