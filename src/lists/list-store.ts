// Where downloaded lists live: DATA_DIR/lists/<name>.txt (the list as downloaded) and
// DATA_DIR/lists/<name>.json (its status: what the primary last did with it). Both are replaced
// atomically (a temporary file in the same directory, fsynced, then renamed over the old one), so
// a reader sees the old file or the new one, never a part; a crash leaves at most a stray
// temporary file. The status file is what `npm run cli -- threats status` and the metrics read.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FailureReason } from './fetch-list.js';

/** A list's name: its file name and its metric label. */
export const LIST_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export interface ListPaths {
  readonly file: string;
  readonly status: string;
}

export function listsDir(dataDir: string): string {
  return join(dataDir, 'lists');
}

/** `ext`: the list file's extension (default txt; mmdb for geolocation databases). */
export function listPaths(dataDir: string, name: string, ext = 'txt'): ListPaths {
  if (!LIST_NAME.test(name)) throw new RangeError(`bad list name ${JSON.stringify(name)}`);
  const dir = listsDir(dataDir);
  return { file: join(dir, `${name}.${ext}`), status: join(dir, `${name}.json`) };
}

export interface ListError {
  readonly reason: FailureReason;
  readonly message: string;
  /** ISO time. */
  readonly at: string;
}

export interface ListStatus {
  readonly name: string;
  /** The URL without credentials or query (redactUrl). */
  readonly url: string;
  readonly schedule: string;
  /** Entries of the list on disk (lines that are neither blank nor comments). */
  readonly entries: number;
  readonly bytes: number;
  /** ISO time of the last download that replaced the list; null = never. */
  readonly lastSuccessAt: string | null;
  readonly lastAttemptAt: string | null;
  /** The last attempt's failure; null when it succeeded. */
  readonly lastError: ListError | null;
  /** Failed downloads by reason, since the status file was created. */
  readonly failures: Readonly<Partial<Record<FailureReason, number>>>;
  /** What the list is for (e.g. the threat kind). */
  readonly meta?: Readonly<Record<string, string>>;
}

/** Writes `data` to `path` through a temporary file and a rename. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export async function readStatus(path: string): Promise<ListStatus | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as ListStatus;
  } catch {
    return null;
  }
}

export function readStatusSync(path: string): ListStatus | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as ListStatus;
  } catch {
    return null;
  }
}

/**
 * A URL safe to log and show: no user name or password, and no query (tokens such as an API key
 * usually travel there); `?…` marks that one was dropped.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    const query = u.search !== '';
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return `${u.toString()}${query ? '?…' : ''}`;
  } catch {
    return '<not a URL>';
  }
}
