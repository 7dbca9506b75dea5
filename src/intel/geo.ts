// Geolocation of one serving process: MMDB databases read with mmdb-lib (MaxMind's reader core),
// asked in order (a downloaded MaxMind City, a downloaded IPinfo database, then the embedded
// country database shipped by @ip-location-db/geo-whois-asn-country-mmdb); each field comes from
// the first database that has it, and the ASN and organisation fall back to the embedded ASN
// index (asn-index.ts). lookup() is a synchronous read on the request path. A reload reads the
// new file, opens it (a file that is no MMDB is refused and the old one stays) and replaces the
// reference to the frozen array of databases in one assignment, so a lookup answers from the old
// database or the new one, never from a mix or a part.
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Reader, type Response } from 'mmdb-lib';
import type { Logger } from '../log.js';
import type { AsnIndex } from './asn-index.js';
import { NO_GEO, normalizeGeoRecord, type GeoFields } from './geo-record.js';

export interface GeoDatabaseSource {
  /** List name (its file in DATA_DIR/lists) or 'embedded'. */
  readonly name: string;
  readonly path: string;
}

export interface GeoAnswer extends GeoFields {
  /** Names of the databases that answered (empty when none knew the address). */
  readonly sources: readonly string[];
  /** The database the country came from, and the one the ASN came from ('embedded_asn': asn-index.ts). */
  readonly locationSource: string | null;
  readonly networkSource: string | null;
}

export interface GeoDatabaseStats {
  readonly name: string;
  readonly loaded: boolean;
  readonly databaseType: string | null;
  /** ISO time the database was built. */
  readonly buildAt: string | null;
}

export interface Geo {
  lookup(ip: string): GeoAnswer;
  /** Reads the named database again; unknown names are ignored. Never rejects. */
  reload(name: string): Promise<void>;
  reloadAll(): Promise<void>;
  stats(): GeoDatabaseStats[];
}

export interface GeoDeps {
  /** In the order they are asked. */
  readonly databases: readonly GeoDatabaseSource[];
  readonly logger: Logger;
  /** The embedded ASN index, once built. */
  readonly asn?: () => AsnIndex | null;
}

interface Db {
  readonly name: string;
  readonly path: string;
  readonly reader: Reader<Response> | null;
  /** Normalised records by the decoded object mmdb-lib's cache hands back for one data offset. */
  readonly normalized: WeakMap<object, GeoFields>;
}

/** Decoded records kept per database (by data offset); cleared when full. */
const CACHE_SIZE = 20_000;

/** The embedded country database (CC0, from the registries' delegation files and whois). */
export function embeddedCountryDatabase(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json')), 'geo-whois-asn-country.mmdb');
}

export function createGeo(deps: GeoDeps): Geo {
  let current: readonly Db[] = Object.freeze(deps.databases.map((d) => Object.freeze({ ...d, reader: null, normalized: new WeakMap() })));
  const generation = new Map<string, number>();
  const asnIndex = deps.asn ?? (() => null);

  const reload = async (name: string): Promise<void> => {
    const entry = current.find((d) => d.name === name);
    if (entry === undefined) return;
    const gen = (generation.get(name) ?? 0) + 1;
    generation.set(name, gen);
    let reader: Reader<Response>;
    try {
      reader = openMmdb(await readFile(entry.path));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Not downloaded yet (or no account set up): the other databases answer.
      if (code !== 'ENOENT') deps.logger.error({ database: name, err: (err as Error).message }, 'loading a geolocation database failed; the one loaded before stays in use');
      return;
    }
    if (generation.get(name) !== gen) return;
    current = Object.freeze(current.map((d) => (d.name === name ? Object.freeze({ ...d, reader, normalized: new WeakMap() }) : d)));
    deps.logger.debug({ database: name, type: reader.metadata.databaseType }, 'geolocation database loaded');
  };

  return {
    lookup(ip) {
      // mmdb-lib reads some malformed text as an address (e.g. a fifth octet): only real ones pass.
      if (isIP(ip) === 0) return NOTHING;
      const dbs = current;
      let country: string | null = null;
      let region: string | null = null;
      let city: string | null = null;
      let asNumber: number | null = null;
      let org: string | null = null;
      let sources: string[] | null = null;
      let locationSource: string | null = null;
      let networkSource: string | null = null;
      for (let i = 0; i < dbs.length; i++) {
        const db = dbs[i]!;
        if (db.reader === null) continue;
        let raw: unknown;
        try { raw = db.reader.get(ip); } catch { return NOTHING; }
        if (raw === null || typeof raw !== 'object') continue;
        let f = db.normalized.get(raw);
        if (f === undefined) { f = normalizeGeoRecord(raw); db.normalized.set(raw, f); }
        if (f === NO_GEO) continue;
        (sources ??= []).push(db.name);
        if (country === null && f.country !== null) locationSource = db.name;
        if (asNumber === null && f.asn !== null) networkSource = db.name;
        country ??= f.country;
        region ??= f.region;
        city ??= f.city;
        asNumber ??= f.asn;
        org ??= f.org;
      }
      const asn = asnIndex();
      if (asNumber === null && asn !== null) {
        const a = asn.lookup(ip);
        if (a !== null) {
          asNumber = a.asn;
          org ??= a.org;
          (sources ??= []).push('embedded_asn');
          networkSource = 'embedded_asn';
        }
      }
      return { country, region, city, asn: asNumber, org, sources: sources ?? NO_SOURCES, locationSource, networkSource };
    },
    reload,
    async reloadAll() {
      await Promise.all(current.map((d) => reload(d.name)));
    },
    stats: () => current.map((d) => ({
      name: d.name, loaded: d.reader !== null, databaseType: d.reader?.metadata.databaseType ?? null,
      buildAt: d.reader ? d.reader.metadata.buildEpoch.toISOString() : null,
    })),
  };
}

const NO_SOURCES: readonly string[] = Object.freeze([]);
const NOTHING: GeoAnswer = Object.freeze({ ...NO_GEO, sources: NO_SOURCES, locationSource: null, networkSource: null });

/** Opens an MMDB file's bytes; throws when they are no MMDB. */
export function openMmdb(buf: Buffer): Reader<Response> {
  const cache = new Map<number, unknown>();
  return new Reader(buf, {
    cache: {
      get: (k: number) => cache.get(k),
      set: (k: number, v: unknown) => { if (cache.size >= CACHE_SIZE) cache.clear(); cache.set(k, v); },
    },
  });
}
