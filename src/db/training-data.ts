// training_data: an account's examples of unwanted text, grouped; the classifier's SIMILARITY rule
// compares each submission with them (src/classifier/similarity.ts).
import { randomBase62 } from '../keys/secrets.js';
import type { Queryable } from './client.js';
import { toDate } from './dialect.js';

export interface TrainingExample {
  readonly id: string;
  readonly accountId: string;
  readonly group: string;
  readonly text: string;
  readonly threshold: number;
  readonly weight: number;
  readonly source: string;
  readonly createdAt: Date;
}

export interface NewTrainingExample {
  readonly accountId: string;
  /** Default 'default'. */
  readonly group?: string;
  readonly text: string;
  /** 0 < threshold ≤ 1; default 0.7. */
  readonly threshold?: number;
  /** 0..10; default 1. */
  readonly weight?: number;
  readonly source?: string;
}

export const TRAINING_LIMITS = Object.freeze({
  maxTextLength: 10_000,
  /** Most examples per account: the similarity index of one account stays small enough to build on the request path. */
  maxPerAccount: 1_000,
  groupPattern: /^[a-z0-9][a-z0-9_.-]{0,63}$/,
});

interface Row { id: string; account_id: string; grp: string; text: string; threshold: number | string; weight: number | string; source: string; created_at: unknown }

const toExample = (r: Row): TrainingExample => Object.freeze({
  id: r.id, accountId: r.account_id, group: r.grp, text: r.text, threshold: Number(r.threshold), weight: Number(r.weight), source: r.source, createdAt: toDate(r.created_at),
});

/** `trn_` + 16 base62. */
export function newTrainingId(): string {
  return `trn_${randomBase62(16)}`;
}

/** Throws RangeError naming the bad field; the caller turns it into its own error. */
export function checkTrainingExample(e: NewTrainingExample): void {
  if (typeof e.text !== 'string' || e.text.trim().length === 0) throw new RangeError('text must be a non-empty string');
  if (e.text.length > TRAINING_LIMITS.maxTextLength) throw new RangeError(`text must be at most ${TRAINING_LIMITS.maxTextLength} characters`);
  if (e.group !== undefined && !TRAINING_LIMITS.groupPattern.test(e.group)) throw new RangeError('group must be 1-64 of a-z 0-9 _ . - starting with a letter or digit');
  if (e.threshold !== undefined && !(Number.isFinite(e.threshold) && e.threshold > 0 && e.threshold <= 1)) throw new RangeError('threshold must be a number in (0, 1]');
  if (e.weight !== undefined && !(Number.isFinite(e.weight) && e.weight >= 0 && e.weight <= 10)) throw new RangeError('weight must be a number from 0 to 10');
}

/** Adds an example; RangeError for bad fields or when the account holds maxPerAccount already. */
export async function addTrainingExample(q: Queryable, e: NewTrainingExample): Promise<TrainingExample> {
  checkTrainingExample(e);
  const [count] = await q<{ n: number | string }[]>`select count(*) as n from training_data where account_id = ${e.accountId}`;
  if (Number(count?.n ?? 0) >= TRAINING_LIMITS.maxPerAccount) throw new RangeError(`an account holds at most ${TRAINING_LIMITS.maxPerAccount} training examples`);
  const id = newTrainingId();
  await q`
    insert into training_data (id, account_id, grp, text, threshold, weight, source, created_at)
    values (${id}, ${e.accountId}, ${e.group ?? 'default'}, ${e.text}, ${e.threshold ?? 0.7}, ${e.weight ?? 1}, ${(e.source ?? '').slice(0, 100)}, ${new Date()})`;
  const [row] = await q<Row[]>`select * from training_data where id = ${id}`;
  return toExample(row!);
}

/** The account's examples, oldest first; only `group`'s when given. */
export async function listTrainingData(q: Queryable, accountId: string, group?: string): Promise<TrainingExample[]> {
  const rows = group === undefined
    ? await q<Row[]>`select * from training_data where account_id = ${accountId} order by created_at, id`
    : await q<Row[]>`select * from training_data where account_id = ${accountId} and grp = ${group} order by created_at, id`;
  return rows.map(toExample);
}

/** Removes one example of the account; false when it has none with that id. */
export async function removeTrainingExample(q: Queryable, accountId: string, id: string): Promise<boolean> {
  const rows = await q`delete from training_data where id = ${id} and account_id = ${accountId}`;
  return rows.count > 0;
}
