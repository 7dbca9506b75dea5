// Metrics of the downloaded lists, read from their status files (list-store.ts) at each scrape:
// the primary writes them, every serving process reports them, and the cluster aggregation keeps
// the first worker's value (aggregator 'first') instead of adding the workers up.
//   palisade_list_entries{list}                       entries of the list in use
//   palisade_list_last_success_timestamp_seconds{list}   last download that replaced it (0 = never)
//   palisade_list_failures_total{list,reason}         failed downloads (timeout, http_status,
//                                                     too_large, too_many_entries, network,
//                                                     invalid: a download that is no valid list)
import { Counter, Gauge, type Registry } from 'prom-client';
import { FAILURE_REASONS } from './fetch-list.js';
import { listPaths, readStatus, type ListStatus } from './list-store.js';

export function registerListMetrics(registry: Registry, dataDir: string, names: readonly string[]): void {
  if (names.length === 0) return;
  const read = (): Promise<(ListStatus | null)[]> => Promise.all(names.map((n) => readStatus(listPaths(dataDir, n).status)));
  new Gauge({
    name: 'palisade_list_entries', help: 'Entries of each downloaded list in use.', labelNames: ['list'], registers: [registry],
    aggregator: 'first',
    async collect() {
      const statuses = await read();
      names.forEach((list, i) => this.set({ list }, statuses[i]?.entries ?? 0));
    },
  });
  new Gauge({
    name: 'palisade_list_last_success_timestamp_seconds', help: 'When each list was last replaced by a download (0 = never).',
    labelNames: ['list'], registers: [registry], aggregator: 'first',
    async collect() {
      const statuses = await read();
      names.forEach((list, i) => {
        const at = statuses[i]?.lastSuccessAt;
        this.set({ list }, at ? Date.parse(at) / 1000 : 0);
      });
    },
  });
  new Counter({
    name: 'palisade_list_failures_total', help: 'Failed list downloads, by list and reason (the previous list stayed in use).',
    labelNames: ['list', 'reason'], registers: [registry], aggregator: 'first',
    async collect() {
      const statuses = await read();
      this.reset();
      names.forEach((list, i) => {
        for (const reason of FAILURE_REASONS) this.inc({ list, reason }, statuses[i]?.failures[reason] ?? 0);
      });
    },
  });
}
