// The threat lists of one serving process: one RangeSet per source, loaded from the files the
// primary downloads (DATA_DIR/lists/<name>.txt). match(ip) is a synchronous read on the request
// path; a reload builds the new set in a worker thread (src/lists/range-file.ts) and then replaces
// the reference to the immutable array of sets in one assignment, so a lookup answers from the old
// complete index or the new complete index, never from a part of one.
import type { Logger } from '../log.js';
import { listPaths } from '../lists/list-store.js';
import { loadRangeFile } from '../lists/range-file.js';
import { addressKey, newAddressKey, RangeSet } from '../lists/range-set.js';
import { KIND_BIT, type ThreatListKind, type ThreatSource } from './threat-sources.js';

interface Entry {
  readonly name: string;
  readonly kind: ThreatListKind;
  readonly bit: number;
  readonly set: RangeSet;
  readonly entries: number;
  readonly bad: number;
}

export interface ThreatIndexStats {
  readonly name: string;
  readonly kind: ThreatListKind;
  /** Merged ranges held. */
  readonly ranges: number;
  readonly entries: number;
  readonly bad: number;
  readonly bytes: number;
}

export interface ThreatIndex {
  /** Bit set of the kinds listing `ip` (KIND_BIT); 0 when none or not an address. */
  match(ip: string): number;
  /** Names of the sources listing `ip`. */
  matchSources(ip: string): string[];
  /** Loads (again) the named source's file; unknown names are ignored. Never rejects. */
  reload(name: string): Promise<void>;
  /** Loads every source's file. Never rejects. */
  reloadAll(): Promise<void>;
  stats(): ThreatIndexStats[];
}

export interface ThreatIndexDeps {
  readonly dataDir: string;
  readonly sources: readonly ThreatSource[];
  readonly logger: Logger;
  /** Builds a set from a file (default loadRangeFile: a worker thread). */
  readonly load?: typeof loadRangeFile;
}

export function createThreatIndex(deps: ThreatIndexDeps): ThreatIndex {
  const load = deps.load ?? loadRangeFile;
  let current: readonly Entry[] = Object.freeze(deps.sources.map((s) => Object.freeze({
    name: s.name, kind: s.kind, bit: KIND_BIT[s.kind], set: RangeSet.EMPTY, entries: 0, bad: 0,
  })));
  const generation = new Map<string, number>();
  const key = newAddressKey();

  const lookup = (ip: string, each: (e: Entry) => void): void => {
    const k = addressKey(ip, key);
    if (k.family === 0) return;
    const entries = current;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (k.family === 4 ? e.set.hasV4(k.v4) : e.set.hasV6(k.words)) each(e);
    }
  };

  const reload = async (name: string): Promise<void> => {
    if (!current.some((e) => e.name === name)) return;
    const gen = (generation.get(name) ?? 0) + 1;
    generation.set(name, gen);
    try {
      const loaded = await load(listPaths(deps.dataDir, name).file);
      // A later reload of the same list started meanwhile: its result is the newer one.
      if (generation.get(name) !== gen) return;
      current = Object.freeze(current.map((e) => (e.name === name ? Object.freeze({ ...e, set: loaded.set, entries: loaded.entries, bad: loaded.bad }) : e)));
      deps.logger.debug({ list: name, ranges: loaded.set.size, entries: loaded.entries, bad: loaded.bad }, 'threat list loaded');
      if (loaded.bad > 0) deps.logger.warn({ list: name, bad: loaded.bad }, 'threat list lines skipped (not an IP address or CIDR, or a /0)');
    } catch (err) {
      deps.logger.error({ list: name, err: (err as Error).message }, 'loading a threat list failed; the one loaded before stays in use');
    }
  };

  return {
    match(ip) {
      const k = addressKey(ip, key);
      if (k.family === 0) return 0;
      const entries = current;
      let bits = 0;
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]!;
        if ((bits & e.bit) === 0 && (k.family === 4 ? e.set.hasV4(k.v4) : e.set.hasV6(k.words))) bits |= e.bit;
      }
      return bits;
    },
    matchSources(ip) {
      const names: string[] = [];
      lookup(ip, (e) => names.push(e.name));
      return names;
    },
    reload,
    async reloadAll() {
      await Promise.all(current.map((e) => reload(e.name)));
    },
    stats: () => current.map((e) => ({ name: e.name, kind: e.kind, ranges: e.set.size, entries: e.entries, bad: e.bad, bytes: e.set.bytes })),
  };
}
