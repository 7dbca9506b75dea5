// Keeps downloaded lists up to date on their cron schedules (croner). Runs where scheduled jobs run:
// the primary (or the single process with WORKERS=0), never in a serving worker. Each update
// downloads (fetch-list.ts), checks the entry limit, writes the file atomically (list-store.ts),
// records the outcome in the list's status file and calls `onUpdated(name)` so the processes that
// serve lookups reload it. A failed update changes nothing but the status: the previous list stays
// in use, on disk and in memory, and the reason is logged (URL without credentials or query).
//
// At start a list is downloaded at once only when there is none on disk or the one there is older
// than one period of its schedule; start() never waits for a download, so a start without network
// is as fast as one with it, and serves what is on disk (or an empty list).
import { mkdir } from 'node:fs/promises';
import { Cron } from 'croner';
import type { Logger } from '../log.js';
import { fetchList, ListFetchError, type FailureReason } from './fetch-list.js';
import { listPaths, listsDir, readStatus, redactUrl, writeFileAtomic, type ListStatus } from './list-store.js';
import type { Outbound } from './outbound.js';

export interface ListSource {
  readonly name: string;
  readonly url: string;
  /** The URL as logged and kept in the status (redacted too); default `url`. For keys in the path. */
  readonly displayUrl?: string;
  /** Cron pattern (5 fields, or 6 with seconds first). */
  readonly schedule: string;
  /** Bytes. */
  readonly sizeLimit: number;
  readonly maxEntries: number;
  /** Entries in a downloaded body (checked against maxEntries before it replaces the list). */
  readonly countEntries: (text: string) => number;
  readonly meta?: Readonly<Record<string, string>>;
  /** The list file's extension (default txt). */
  readonly ext?: string;
  /**
   * Turns a downloaded body into the file kept (unpacking, validating, trimming) and counts its
   * entries (countEntries is then not called); throws ListFetchError (e.g. 'invalid') to refuse
   * it. Default: the body as downloaded, counted by countEntries.
   */
  readonly prepare?: (body: Buffer) => { readonly data: Buffer; readonly entries: number } | Promise<{ readonly data: Buffer; readonly entries: number }>;
}

export interface ListUpdaterOptions {
  readonly dataDir: string;
  readonly outbound: Outbound;
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** Called after a list file was replaced. */
  readonly onUpdated: (name: string) => void;
  /** Epoch-ms clock. Default Date.now. */
  readonly now?: () => number;
}

export type UpdateOutcome = { readonly ok: true; readonly entries: number } | { readonly ok: false; readonly reason: FailureReason };

export interface ListUpdater {
  /** Schedules every list and starts the downloads that are due; returns at once. */
  start(): void;
  /** One update now (also what the schedule runs); concurrent calls for one list share the run. */
  update(name: string): Promise<UpdateOutcome>;
  /** The next scheduled run, or null. */
  nextRun(name: string): Date | null;
  /** Stops the schedules and aborts downloads in flight. */
  stop(): Promise<void>;
}

export function createListUpdater(sources: readonly ListSource[], options: ListUpdaterOptions): ListUpdater {
  const now = options.now ?? Date.now;
  const { logger, dataDir } = options;
  const byName = new Map(sources.map((s) => [s.name, s]));
  if (byName.size !== sources.length) throw new RangeError('list names must be unique');
  const jobs = new Map<string, Cron>();
  const running = new Map<string, Promise<UpdateOutcome>>();
  const stopping = new AbortController();

  const run = async (source: ListSource): Promise<UpdateOutcome> => {
    const paths = listPaths(dataDir, source.name, source.ext);
    const previous = await readStatus(paths.status);
    const base: ListStatus = {
      name: source.name, url: redactUrl(source.displayUrl ?? source.url), schedule: source.schedule, entries: 0, bytes: 0,
      lastSuccessAt: null, lastAttemptAt: null, lastError: null, failures: {},
      ...(previous ?? {}),
      ...(source.meta ? { meta: source.meta } : {}),
    };
    const attemptAt = new Date(now()).toISOString();
    let outcome: UpdateOutcome;
    let status: ListStatus;
    try {
      const downloaded = await fetchList(source.url, { outbound: options.outbound, sizeLimit: source.sizeLimit, timeoutMs: options.timeoutMs, signal: stopping.signal });
      const prepared = source.prepare ? await source.prepare(downloaded) : null;
      const body = prepared?.data ?? downloaded;
      const entries = prepared?.entries ?? source.countEntries(body.toString('latin1'));
      if (entries > source.maxEntries) throw new ListFetchError('too_many_entries', `${entries} entries, over the limit of ${source.maxEntries}`);
      await mkdir(listsDir(dataDir), { recursive: true, mode: 0o700 });
      await writeFileAtomic(paths.file, body);
      status = {
        ...base, url: redactUrl(source.displayUrl ?? source.url), schedule: source.schedule, entries, bytes: body.length,
        lastSuccessAt: attemptAt, lastAttemptAt: attemptAt, lastError: null,
      };
      outcome = { ok: true, entries };
      logger.info({ list: source.name, entries, bytes: body.length }, 'list updated');
    } catch (err) {
      if (stopping.signal.aborted) return { ok: false, reason: 'network' };
      const failure = err instanceof ListFetchError ? err : new ListFetchError('network', (err as NodeJS.ErrnoException).code ?? 'failed');
      status = {
        ...base, url: redactUrl(source.displayUrl ?? source.url), schedule: source.schedule, lastAttemptAt: attemptAt,
        lastError: { reason: failure.reason, message: failure.message, at: attemptAt },
        failures: { ...base.failures, [failure.reason]: (base.failures[failure.reason] ?? 0) + 1 },
      };
      outcome = { ok: false, reason: failure.reason };
      logger.warn({ list: source.name, url: redactUrl(source.displayUrl ?? source.url), reason: failure.reason, err: failure.message },
        'list update failed; the previous list stays in use');
    }
    try {
      await mkdir(listsDir(dataDir), { recursive: true, mode: 0o700 });
      await writeFileAtomic(paths.status, `${JSON.stringify(status)}\n`);
    } catch (err) {
      logger.error({ list: source.name, err: (err as Error).message }, 'writing the list status failed');
    }
    if (outcome.ok) options.onUpdated(source.name);
    return outcome;
  };

  const update = (name: string): Promise<UpdateOutcome> => {
    const source = byName.get(name);
    if (source === undefined) return Promise.reject(new RangeError(`no list named ${name}`));
    let p = running.get(name);
    if (p === undefined) {
      p = run(source).finally(() => running.delete(name));
      running.set(name, p);
    }
    return p;
  };

  const due = async (source: ListSource, job: Cron): Promise<boolean> => {
    const status = await readStatus(listPaths(dataDir, source.name).status);
    if (status?.lastSuccessAt == null) return true;
    const [a, b] = job.nextRuns(2);
    const periodMs = a && b ? b.getTime() - a.getTime() : 0;
    return now() - Date.parse(status.lastSuccessAt) > periodMs;
  };

  return {
    start() {
      for (const source of sources) {
        if (jobs.has(source.name)) continue;
        // protect: a run still going when the next is due is not started twice.
        const job = new Cron(source.schedule, { protect: true }, () => { void update(source.name); });
        jobs.set(source.name, job);
        void due(source, job).then((yes) => { if (yes && !stopping.signal.aborted) void update(source.name); });
      }
    },
    update,
    nextRun(name) {
      return jobs.get(name)?.nextRun() ?? null;
    },
    async stop() {
      for (const job of jobs.values()) job.stop();
      jobs.clear();
      stopping.abort();
      await Promise.allSettled([...running.values()]);
    },
  };
}
