// `training add|list|remove` (an account's training data for the SIMILARITY rule) and
// `submissions list|promote` (spam-flagged submissions kept for review; docs/classifier.md).
import { AdminError } from '../admin/context.js';
import { addTraining, getSubmission, listSubmissions, listTraining, promoteSubmission, removeTraining } from '../admin/data.js';
import { resolveAccount } from './accounts.js';
import { type Context, type Flags, UsageError } from './context.js';

export async function addTrainingCommand(rest: string[], ctx: Context, flags: Flags): Promise<void> {
  const text = rest.join(' ').trim();
  if (text === '') throw new UsageError('training add needs TEXT');
  const account = await resolveAccount(ctx, flags.account);
  const example = await addTraining(ctx.admin, {
    accountId: account.id, text, group: flags.group, threshold: number(flags.threshold, '--threshold'), weight: number(flags.weight, '--weight'),
  }).catch(rangeToUsage);
  ctx.out(`${example.id}  ${example.group}  threshold ${example.threshold}  weight ${example.weight}`, json(example));
}

export async function listTrainingCommand(_rest: string[], ctx: Context, flags: Flags): Promise<void> {
  const account = await resolveAccount(ctx, flags.account);
  const examples = await listTraining(ctx.admin, account.id, flags.group);
  ctx.out(
    examples.map((e) => `${e.id}  ${e.group}  ${e.threshold}  ${e.weight}  ${oneLine(e.text, 80)}`).join('\n'),
    examples.map(json),
  );
}

export async function removeTrainingCommand(rest: string[], ctx: Context, flags: Flags): Promise<void> {
  const id = rest[0];
  if (id === undefined || rest.length > 1) throw new UsageError('training remove needs one TRAINING_ID');
  const account = await resolveAccount(ctx, flags.account);
  await removeTraining(ctx.admin, account.id, id, account.name);
  ctx.out(`removed ${id}`, { id, removed: true });
}

export async function listSubmissionsCommand(_rest: string[], ctx: Context, flags: Flags): Promise<void> {
  const account = flags.account === undefined ? undefined : await resolveAccount(ctx, flags.account);
  const limit = number(flags.limit, '--limit');
  const rows = await listSubmissions(ctx.admin, account?.id, limit);
  ctx.out(
    rows.map((s) => `${s.id}  ${s.time.toISOString()}  ${s.source}  ${s.score}  ${s.reasons.join(',')}  ${s.text === null ? `(hash ${s.textHash.slice(0, 12)}…)` : oneLine(s.text, 60)}`).join('\n'),
    rows.map((s) => ({ ...s, time: s.time.toISOString() })),
  );
}

/** A kept submission's text becomes a training example of its account. */
export async function promoteSubmissionCommand(rest: string[], ctx: Context, flags: Flags): Promise<void> {
  const id = rest[0];
  if (id === undefined || rest.length > 1) throw new UsageError('submissions promote needs one SUBMISSION_ID');
  const s = await getSubmission(ctx.admin, id);
  if (s.text === null) throw new Error(`submission ${id} was kept as a hash only (SPAM_SUBMISSIONS_STORE=hash): there is no text to learn from`);
  const example = await promoteSubmission(ctx.admin, s, {
    group: flags.group, threshold: number(flags.threshold, '--threshold'), weight: number(flags.weight, '--weight'),
  }).catch(rangeToUsage);
  ctx.out(`${example.id}  from ${s.id}`, json(example));
}

function number(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${flag} must be a number`);
  return n;
}

/** Bad fields of a training example are usage errors (exit 2). */
function rangeToUsage(err: unknown): never {
  if (err instanceof AdminError && err.code === 'INVALID_PARAMETER') throw new UsageError(err.message);
  throw err;
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function json(e: { id: string; group: string; text: string; threshold: number; weight: number; source: string; createdAt: Date; accountId: string }) {
  return { id: e.id, accountId: e.accountId, group: e.group, text: e.text, threshold: e.threshold, weight: e.weight, source: e.source, createdAt: e.createdAt.toISOString() };
}
