// spam_submissions: submissions classified BAD, kept for review (SPAM_SUBMISSIONS_STORE says whether
// with their text or only its keyed hash) until DELETE_SPAM_SUBMISSIONS_IN; the CLI promotes them
// to training data.
import { randomBase62 } from '../keys/secrets.js';
import type { Queryable } from './client.js';
import { toDate } from './dialect.js';
import { deleteOlderThan, RETENTION_BATCH } from './request-logs.js';

export interface SpamSubmission {
  readonly id: string;
  readonly time: Date;
  readonly accountId: string;
  readonly apiKeyId: string;
  /** 'classifier', 'verify' or 'eml'. */
  readonly source: string;
  readonly score: number;
  readonly reasons: readonly string[];
  /** null when only the hash is kept. */
  readonly text: string | null;
  readonly textHash: string;
  readonly fields: readonly string[];
  readonly emailDomain: string | null;
  readonly ip: string | null;
  readonly country: string | null;
}

export type NewSpamSubmission = Omit<SpamSubmission, 'id' | 'time'> & { readonly time?: Date };

interface Row {
  id: string; time: unknown; account_id: string; api_key_id: string; source: string; score: number | string; reasons: string;
  text: string | null; text_hash: string; fields: string; email_domain: string | null; ip: string | null; country: string | null;
}

const split = (s: string): readonly string[] => (s === '' ? [] : s.split(','));
const toSubmission = (r: Row): SpamSubmission => Object.freeze({
  id: r.id, time: toDate(r.time), accountId: r.account_id, apiKeyId: r.api_key_id, source: r.source, score: Number(r.score),
  reasons: split(r.reasons), text: r.text, textHash: r.text_hash, fields: split(r.fields), emailDomain: r.email_domain,
  ip: r.ip, country: r.country,
});

/** `sub_` + 16 base62. */
export function newSubmissionId(): string {
  return `sub_${randomBase62(16)}`;
}

/** Inserts a batch in one statement. */
export async function insertSpamSubmissions(q: Queryable, batch: readonly NewSpamSubmission[]): Promise<void> {
  if (batch.length === 0) return;
  const rows = batch.map((s) => [
    newSubmissionId(), s.time ?? new Date(), s.accountId, s.apiKeyId, s.source, s.score, s.reasons.join(','), s.text,
    s.textHash, s.fields.join(','), s.emailDomain, s.ip, s.country,
  ]);
  const columns = {
    id: 'text', time: 'timestamp', account_id: 'text', api_key_id: 'text', source: 'text', score: 'real', reasons: 'text',
    text: 'text', text_hash: 'text', fields: 'text', email_domain: 'text', ip: 'text', country: 'text',
  } as const;
  for (const statement of q.dialect.insertRows('spam_submissions', columns, rows)) await q.run(statement);
}

export interface SubmissionQuery {
  readonly accountId?: string;
  /** Most rows, newest first; default 50, at most 1000. */
  readonly limit?: number;
}

export async function listSpamSubmissions(q: Queryable, query: SubmissionQuery = {}): Promise<SpamSubmission[]> {
  const limit = Math.min(1000, Math.max(1, query.limit ?? 50));
  const rows = query.accountId === undefined
    ? await q<Row[]>`select * from spam_submissions order by time desc, id limit ${limit}`
    : await q<Row[]>`select * from spam_submissions where account_id = ${query.accountId} order by time desc, id limit ${limit}`;
  return rows.map(toSubmission);
}

export async function getSpamSubmission(q: Queryable, id: string): Promise<SpamSubmission | null> {
  const [row] = await q<Row[]>`select * from spam_submissions where id = ${id}`;
  return row === undefined ? null : toSubmission(row);
}

/** DELETE_SPAM_SUBMISSIONS_IN: deletes rows older than `ageMs`, `batch` at a time; returns how many. */
export function deleteOldSpamSubmissions(q: Queryable, ageMs: number, now = Date.now(), batch = RETENTION_BATCH): Promise<number> {
  return deleteOlderThan(q, 'spam_submissions', 'time', ageMs, now, batch);
}
