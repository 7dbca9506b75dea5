// `npm run cli -- threats status`: the configured threat sources and what the primary last did with
// each, from the status files it writes next to the lists (DATA_DIR/lists/<name>.json). Reads only;
// the service may be running or not.
import { Cron } from 'croner';
import type { Config } from '../config/index.js';
import { listPaths, readStatusSync, redactUrl, type ListError } from '../lists/list-store.js';
import { threatSources, type ThreatListKind } from './threat-sources.js';

export interface SourceReport {
  readonly name: string;
  readonly kind: ThreatListKind;
  readonly url: string;
  readonly schedule: string;
  readonly entries: number;
  /** ISO time of the last download that replaced the list; null = never. */
  readonly lastUpdate: string | null;
  readonly nextRun: string | null;
  readonly lastError: ListError | null;
  readonly failures: Readonly<Record<string, number>>;
}

export interface ThreatsReport {
  readonly data: { readonly enabled: boolean; readonly sources: SourceReport[] };
  readonly text: string;
}

export function threatsStatus(config: Config, now = new Date()): ThreatsReport {
  const enabled = config.THREATS_ENABLED;
  const sources = enabled ? threatSources(config) : [];
  const reports = sources.map((s): SourceReport => {
    const status = readStatusSync(listPaths(config.dataDir, s.name).status);
    const job = new Cron(s.schedule, { paused: true });
    const next = job.nextRun(now);
    job.stop();
    return {
      name: s.name, kind: s.kind, url: redactUrl(s.url), schedule: s.schedule,
      entries: status?.entries ?? 0, lastUpdate: status?.lastSuccessAt ?? null,
      nextRun: next ? next.toISOString() : null, lastError: status?.lastError ?? null, failures: status?.failures ?? {},
    };
  });
  let text: string;
  if (!enabled) text = 'threat lists: off (THREATS_ENABLED=0)';
  else if (reports.length === 0) text = 'threat lists: no source set (FIREHOL_*_URL, THREATS_SOURCES)';
  else {
    text = reports.map((r) => [
      `${r.name} (${r.kind})`,
      `  url:         ${r.url}`,
      `  schedule:    ${r.schedule}`,
      `  entries:     ${r.entries}`,
      `  last update: ${r.lastUpdate ?? 'never'}`,
      `  next run:    ${r.nextRun ?? 'none'}`,
      `  last error:  ${r.lastError ? `${r.lastError.reason}: ${r.lastError.message} (${r.lastError.at})` : 'none'}`,
    ].join('\n')).join('\n\n');
  }
  return { data: { enabled, sources: reports }, text };
}
