// Reading what the service recorded, and the classifier's data: usage per key and account, the
// dashboard's counts per hour and day, request logs (paged and filtered, within REQUEST_LOGS_TTL),
// the audit log, training data and spam submissions.
import { listAudit } from '../db/audit-log.js';
import { queryRequestLogs, type RequestLogQuery, requestStats, type StoredRequestLog } from '../db/request-logs.js';
import { getSpamSubmission, listSpamSubmissions, type SpamSubmission } from '../db/spam-submissions.js';
import { addTrainingExample, listTrainingData, removeTrainingExample, type TrainingExample } from '../db/training-data.js';
import { accountRequests, keyUsage, monthSummary } from '../db/usage.js';
import { createMonthClock, isMonth } from '../usage/month.js';
import { type AdminContext, audit, invalid, notFound, transaction } from './context.js';

export function currentMonth(ctx: AdminContext): string {
  return createMonthClock(ctx.settings.TZ || undefined)();
}

function checkedMonth(ctx: AdminContext, month: string | undefined): string {
  const m = month ?? currentMonth(ctx);
  if (!isMonth(m)) invalid('month is YYYY-MM');
  return m;
}

export async function usageOfKey(ctx: AdminContext, keyId: string, accountId: string, month?: string) {
  const m = checkedMonth(ctx, month);
  const usage = await keyUsage(ctx.sql, keyId, m);
  return { month: m, requests: { apiKey: usage.requests, account: await accountRequests(ctx.sql, accountId, m) }, classifications: usage.classifications, referrers: usage.referrers };
}

/** The month's totals of every key of the account (or of all accounts), with the top referrers. */
export async function usageSummary(ctx: AdminContext, accountId: string | undefined, month?: string) {
  const m = checkedMonth(ctx, month);
  return { month: m, ...(await monthSummary(ctx.sql, m, accountId)) };
}

/** Counts per hour (the last `span` hours) or per day (the last `span` days) from the request logs. */
export async function stats(ctx: AdminContext, f: { accountId?: string; apiKeyId?: string; unit: 'hour' | 'day'; span: number }) {
  const unitMs = f.unit === 'day' ? 86_400_000 : 3_600_000;
  const now = Date.now();
  const since = new Date(Math.floor(now / unitMs) * unitMs - (f.span - 1) * unitMs);
  const rows = await requestStats(ctx.sql, { ...f, since });
  const byBucket = new Map(rows.map((r) => [r.bucket, r]));
  const series = [];
  for (let t = since.getTime(); t <= now; t += unitMs) {
    series.push(byBucket.get(t) ?? { bucket: t, requests: 0, verifications: 0, failures: 0, good: 0, neutral: 0, bad: 0 });
  }
  return { unit: f.unit, since: since.toISOString(), series };
}

export function logView(r: StoredRequestLog) {
  return {
    id: r.id, time: new Date(r.time).toISOString(), apiKeyId: r.apiKeyId, accountId: r.accountId, ip: r.ip, method: r.method, path: r.path,
    status: r.status, durationMs: r.durationMs, country: r.country ?? null, threats: r.threats ?? null, classification: r.classification ?? null,
  };
}

export async function requestLogs(ctx: AdminContext, query: RequestLogQuery): Promise<StoredRequestLog[]> {
  return queryRequestLogs(ctx.sql, query);
}

export async function auditLog(ctx: AdminContext, query: { accountId?: string; before?: string; limit?: number }) {
  return (await listAudit(ctx.sql, query)).map((a) => ({ ...a, time: a.time.toISOString() }));
}

export function trainingView(e: TrainingExample) {
  return { id: e.id, accountId: e.accountId, group: e.group, text: e.text, threshold: e.threshold, weight: e.weight, source: e.source, createdAt: e.createdAt.toISOString() };
}

export async function listTraining(ctx: AdminContext, accountId: string, group?: string): Promise<TrainingExample[]> {
  return listTrainingData(ctx.sql, accountId, group);
}

export async function addTraining(ctx: AdminContext, input: { accountId: string; text: string; group?: string; threshold?: number; weight?: number; source?: string }): Promise<TrainingExample> {
  try {
    return await transaction(ctx, async (tx) => {
      const example = await addTrainingExample(tx, { ...input, source: input.source ?? ctx.actor.name });
      await audit(ctx, tx, 'training.add', example.id, example.accountId, { group: example.group, source: example.source });
      return example;
    });
  } catch (err) {
    if (err instanceof RangeError) return invalid(err.message);
    throw err;
  }
}

export async function removeTraining(ctx: AdminContext, accountId: string, id: string, accountName: string): Promise<void> {
  const removed = await transaction(ctx, async (tx) => {
    const done = await removeTrainingExample(tx, accountId, id);
    if (done) await audit(ctx, tx, 'training.remove', id, accountId);
    return done;
  });
  if (!removed) notFound(`no training example ${id.slice(0, 64)} in account ${accountName}`);
}

export function submissionView(s: SpamSubmission) {
  return { ...s, time: s.time.toISOString() };
}

export async function listSubmissions(ctx: AdminContext, accountId: string | undefined, limit?: number): Promise<SpamSubmission[]> {
  return listSpamSubmissions(ctx.sql, { accountId, limit });
}

export async function getSubmission(ctx: AdminContext, id: string): Promise<SpamSubmission> {
  return (await getSpamSubmission(ctx.sql, id)) ?? notFound(`no spam submission ${id.slice(0, 64)} (deleted after DELETE_SPAM_SUBMISSIONS_IN?)`);
}

/** A kept submission's text becomes a training example of its account. */
export async function promoteSubmission(ctx: AdminContext, s: SpamSubmission, opts: { group?: string; threshold?: number; weight?: number }): Promise<TrainingExample> {
  if (s.text === null) invalid(`submission ${s.id} was kept as a hash only (SPAM_SUBMISSIONS_STORE=hash): there is no text to learn from`);
  return addTraining(ctx, { accountId: s.accountId, text: s.text!, ...opts, source: `submission:${s.id}` });
}
