// The primary's scheduled list downloads (DESIGN.md section 1: scheduled jobs run in the primary
// only): the threat sources and intelligence lists of src/intel/ and the classifier's lists
// (src/classifier/classifier-lists.ts), kept up to date by src/lists/list-updater.ts. After a
// list file is replaced, `notify(name)` tells the serving processes to reload it ('list-updated'
// message to every worker; with WORKERS=0 the process's own index).
import type { Config } from '../config/index.js';
import { threatSources } from '../intel/threat-sources.js';
import { intelListSources } from '../intel/intel-lists.js';
import { classifierListSources } from '../classifier/classifier-lists.js';
import { countListLines } from '../lists/ip-ranges.js';
import { createListUpdater, type ListSource, type ListUpdater } from '../lists/list-updater.js';
import { createOutbound } from '../lists/outbound.js';
import type { Logger } from '../log.js';
import { encode } from './ipc.js';
import type { Supervisor } from './supervisor.js';

export interface ListJobs {
  readonly updater: ListUpdater;
  stop(): Promise<void>;
}

/**
 * Starts the downloads (threat sources unless THREATS_ENABLED=0; the geolocation databases and the
 * user-agent list when their URLs are set: src/intel/intel-lists.ts; the disposable-email and
 * phishing lists when theirs are: src/classifier/classifier-lists.ts); never waits for one.
 */
export function startListJobs(config: Config, logger: Logger, notify: (name: string) => void): ListJobs | null {
  const sources = config.THREATS_ENABLED ? threatSources(config) : [];
  const intelLists = intelListSources(config).concat(classifierListSources(config));
  if (sources.length === 0 && intelLists.length === 0) return null;
  const outbound = createOutbound({
    userAgent: config.USER_AGENT, version: config.version, httpProxy: config.HTTP_PROXY, httpsProxy: config.HTTPS_PROXY,
    noProxy: config.NO_PROXY, caFile: config.TLS_EXTRA_CA_CERTS,
  });
  const updater = createListUpdater(sources.map((s): ListSource => ({
    name: s.name, url: s.url, schedule: s.schedule, sizeLimit: config.THREATS_LIST_SIZE_LIMIT,
    maxEntries: config.THREATS_LIST_MAX_ENTRIES, countEntries: countListLines, meta: { kind: s.kind },
  })).concat(intelLists), { dataDir: config.dataDir, outbound, timeoutMs: config.LIST_DOWNLOAD_TIMEOUT, logger, onUpdated: notify });
  updater.start();
  return {
    updater,
    async stop() {
      await updater.stop();
      await outbound.close().catch(() => {});
    },
  };
}

/** notify() for a cluster: every connected worker reloads the list. */
export function notifyWorkers(supervisor: Supervisor): (name: string) => void {
  return (name) => {
    const frame = encode({ t: 'list-updated', name });
    for (const w of supervisor.workers()) {
      try {
        if (w.isConnected()) w.send(frame);
      } catch { /* the worker is going away; a new one loads the files at start */ }
    }
  };
}
