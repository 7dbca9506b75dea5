// The classifier's downloaded lists, for the primary's list jobs (src/primary/list-jobs.ts) and
// the serving processes that load them:
//   disposable_email  EMAIL_LIST_DISPOSABLE  DATA_DIR/lists/disposable_email.txt  (email-domains.ts)
//   phishing          PHISHING_LIST_URL      DATA_DIR/lists/phishing.tsv          (phishing-csv.ts)
// A download is checked and rewritten before it replaces the file (prepare): what is not a list
// of that kind is refused as 'invalid' and the previous list stays. A serving process reads the
// files at start and again on 'list-updated'; without a file it uses the embedded disposable list
// and an empty phishing list.
import type { Config } from '../config/index.js';
import type { ListSource } from '../lists/list-updater.js';
import { listPaths } from '../lists/list-store.js';
import type { Logger } from '../log.js';
import { DomainList, embeddedDisposableDomains, embeddedFreeProviders, prepareDisposableList } from './email-domains.js';
import { preparePhishingList } from './phishing-csv.js';
import { loadPhishingList, PhishingList } from './phishing-list.js';
import type { PhishingMatcher } from './types.js';
import { readFile } from 'node:fs/promises';

export const DISPOSABLE_LIST = 'disposable_email';
export const PHISHING_LIST = 'phishing';
const PHISHING_EXT = 'tsv';
/** A gzip download may unpack to this many times the size limit. */
const UNPACK_FACTOR = 10;

export type ClassifierListConfig = Pick<Config,
  'EMAIL_LIST_DISPOSABLE' | 'EMAIL_LIST_DISPOSABLE_SCHEDULE' | 'EMAIL_LIST_DISPOSABLE_SIZE_LIMIT' | 'EMAIL_LIST_DISPOSABLE_MAX_ENTRIES' |
  'PHISHING_LIST_URL' | 'PHISHING_LIST_SCHEDULE' | 'PHISHING_LIST_SIZE_LIMIT' | 'PHISHING_LIST_MAX_ENTRIES'>;

/** The lists to download (a list whose URL or schedule is empty is not downloaded). */
export function classifierListSources(config: ClassifierListConfig): ListSource[] {
  const out: ListSource[] = [];
  if (config.EMAIL_LIST_DISPOSABLE && config.EMAIL_LIST_DISPOSABLE_SCHEDULE) {
    const limit = config.EMAIL_LIST_DISPOSABLE_SIZE_LIMIT;
    out.push({
      name: DISPOSABLE_LIST, url: config.EMAIL_LIST_DISPOSABLE, schedule: config.EMAIL_LIST_DISPOSABLE_SCHEDULE,
      sizeLimit: limit, maxEntries: config.EMAIL_LIST_DISPOSABLE_MAX_ENTRIES, countEntries: () => 0, meta: { kind: 'disposable_email' },
      prepare: (body: Buffer) => prepareDisposableList(body, limit * UNPACK_FACTOR),
    });
  }
  if (config.PHISHING_LIST_URL && config.PHISHING_LIST_SCHEDULE) {
    const limit = config.PHISHING_LIST_SIZE_LIMIT;
    out.push({
      name: PHISHING_LIST, url: config.PHISHING_LIST_URL, displayUrl: maskPathKeys(config.PHISHING_LIST_URL),
      schedule: config.PHISHING_LIST_SCHEDULE, sizeLimit: limit, maxEntries: config.PHISHING_LIST_MAX_ENTRIES,
      countEntries: () => 0, ext: PHISHING_EXT, meta: { kind: 'phishing' },
      prepare: (body: Buffer) => preparePhishingList(body, limit * UNPACK_FACTOR),
    });
  }
  return out;
}

/**
 * The URL with every path segment of 20 or more letters, digits, - or _ replaced by `***`: PhishTank
 * puts a member's application key there (/data/<key>/online-valid.csv), and a URL is logged and
 * kept in the list status (where redactUrl already drops credentials and the query).
 */
export function maskPathKeys(url: string): string {
  try {
    const u = new URL(url);
    u.pathname = u.pathname.split('/').map((s) => (/^[A-Za-z0-9_-]{20,}$/.test(s) ? '***' : s)).join('/');
    return u.toString();
  } catch {
    return url;
  }
}

export interface ClassifierLists {
  /** The disposable domains in use: the downloaded file, else the embedded list (built on first use). */
  disposable(): DomainList;
  /** The free-provider domains (embedded, built on first use). */
  freeProviders(): DomainList;
  /** The phishing list in use (empty without a download). */
  phishing(): PhishingMatcher;
  /** Reads the named list again ('list-updated'); other names are ignored. */
  reload(name: string): Promise<void>;
}

/**
 * Loads the downloaded lists of a serving process. A file that cannot be read is logged and the
 * list loaded before stays in use.
 */
export async function loadClassifierLists(config: ClassifierListConfig & Pick<Config, 'dataDir'>, logger: Logger): Promise<ClassifierLists> {
  let disposable: DomainList | null = null; // null = the embedded list
  let phishing: PhishingList = PhishingList.EMPTY;
  const disposablePath = listPaths(config.dataDir, DISPOSABLE_LIST).file;
  const phishingPath = listPaths(config.dataDir, PHISHING_LIST, PHISHING_EXT).file;

  const loadDisposable = async () => {
    try {
      disposable = DomainList.fromText(await readFile(disposablePath, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      logger.error({ list: DISPOSABLE_LIST, err: (err as Error).message }, 'loading the disposable-email list failed; the one loaded before stays in use');
    }
  };
  const loadPhishing = async () => {
    try {
      phishing = await loadPhishingList(phishingPath);
    } catch (err) {
      logger.error({ list: PHISHING_LIST, err: (err as Error).message }, 'loading the phishing list failed; the one loaded before stays in use');
    }
  };
  // A list whose downloads are off keeps its default: an old file from when they were on is ignored.
  const disposableDownloads = Boolean(config.EMAIL_LIST_DISPOSABLE);
  const phishingDownloads = Boolean(config.PHISHING_LIST_URL);
  await Promise.all([disposableDownloads ? loadDisposable() : undefined, phishingDownloads ? loadPhishing() : undefined]);
  return {
    disposable: () => disposable ?? embeddedDisposableDomains(),
    freeProviders: embeddedFreeProviders,
    phishing: () => phishing,
    async reload(name) {
      if (name === DISPOSABLE_LIST && disposableDownloads) await loadDisposable();
      else if (name === PHISHING_LIST && phishingDownloads) await loadPhishing();
    },
  };
}
