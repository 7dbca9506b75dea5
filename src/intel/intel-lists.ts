// The downloaded lists of IP intelligence besides the threat sources, for the primary's list jobs
// (src/primary/list-jobs.ts) and the serving processes that load them:
//   maxmind      MAXMIND_DOWNLOAD_URL          DATA_DIR/lists/maxmind.mmdb
//   ipinfo       IPINFO_IO_MMDB_DOWNLOAD_URL   DATA_DIR/lists/ipinfo.mmdb
//   user_agents  USER_AGENT_LIST_URL           DATA_DIR/lists/user_agents.txt
// A database download is unpacked (a MaxMind .tar.gz holds the .mmdb in a folder) and opened
// before it replaces the file: anything that is no MMDB is refused as 'invalid' and the previous
// database stays.
import type { Config } from '../config/index.js';
import { ListFetchError } from '../lists/fetch-list.js';
import type { ListSource } from '../lists/list-updater.js';
import { openMmdb, type GeoDatabaseSource } from './geo.js';
import { gunzipIfGzip, prepareUserAgentList } from './user-agent-list.js';
import { listPaths } from '../lists/list-store.js';

export const MAXMIND_DEFAULT_DOWNLOAD_URL = 'https://download.maxmind.com/geoip/databases/GeoLite2-City/download?suffix=tar.gz';

export type IntelListConfig = Pick<Config,
  'MAXMIND_ACCOUNT_ID' | 'MAXMIND_LICENSE_KEY' | 'MAXMIND_DOWNLOAD_URL' | 'MAXMIND_DOWNLOAD_SCHEDULE' | 'IPINFO_IO_MMDB_DOWNLOAD_URL' |
  'IPINFO_IO_MMDB_DOWNLOAD_SCHEDULE' | 'GEO_DATABASE_SIZE_LIMIT' | 'USER_AGENT_LIST_URL' | 'USER_AGENT_LIST_SCHEDULE' |
  'USER_AGENT_LIST_SIZE_LIMIT' | 'USER_AGENT_LIST_MAX_ENTRIES'>;

/** The downloaded geolocation databases, in the order they are asked. */
export function geoDownloads(config: IntelListConfig): { name: 'maxmind' | 'ipinfo'; url: string; schedule: string }[] {
  const out: { name: 'maxmind' | 'ipinfo'; url: string; schedule: string }[] = [];
  const maxmind = config.MAXMIND_DOWNLOAD_URL;
  if (maxmind && config.MAXMIND_DOWNLOAD_SCHEDULE && (config.MAXMIND_LICENSE_KEY !== '' || maxmind !== MAXMIND_DEFAULT_DOWNLOAD_URL)) {
    const u = new URL(maxmind);
    if (config.MAXMIND_LICENSE_KEY !== '') {
      u.username = encodeURIComponent(config.MAXMIND_ACCOUNT_ID);
      u.password = encodeURIComponent(config.MAXMIND_LICENSE_KEY);
    }
    out.push({ name: 'maxmind', url: u.toString(), schedule: config.MAXMIND_DOWNLOAD_SCHEDULE });
  }
  if (config.IPINFO_IO_MMDB_DOWNLOAD_URL && config.IPINFO_IO_MMDB_DOWNLOAD_SCHEDULE) {
    out.push({ name: 'ipinfo', url: config.IPINFO_IO_MMDB_DOWNLOAD_URL, schedule: config.IPINFO_IO_MMDB_DOWNLOAD_SCHEDULE });
  }
  return out;
}

/** Where a serving process finds the downloaded databases (before the embedded ones). */
export function geoDatabaseFiles(config: IntelListConfig, dataDir: string): GeoDatabaseSource[] {
  return geoDownloads(config).map((d) => ({ name: d.name, path: listPaths(dataDir, d.name, 'mmdb').file }));
}

/** Every intelligence list to download. */
export function intelListSources(config: IntelListConfig): ListSource[] {
  const out: ListSource[] = geoDownloads(config).map((d) => ({
    name: d.name, url: d.url, schedule: d.schedule, sizeLimit: config.GEO_DATABASE_SIZE_LIMIT, maxEntries: 1,
    ext: 'mmdb', countEntries: () => 1, meta: { kind: 'geo' },
    prepare: (body: Buffer) => ({ data: extractMmdb(body, config.GEO_DATABASE_SIZE_LIMIT * 4), entries: 1 }),
  }));
  if (config.USER_AGENT_LIST_URL && config.USER_AGENT_LIST_SCHEDULE) {
    const max = config.USER_AGENT_LIST_MAX_ENTRIES;
    out.push({
      name: 'user_agents', url: config.USER_AGENT_LIST_URL, schedule: config.USER_AGENT_LIST_SCHEDULE,
      sizeLimit: config.USER_AGENT_LIST_SIZE_LIMIT, maxEntries: max, countEntries: () => 0, meta: { kind: 'user_agents' },
      prepare: (body: Buffer) => prepareUserAgentList(body, max, config.USER_AGENT_LIST_SIZE_LIMIT * 20),
    });
  }
  return out;
}

/**
 * The .mmdb in a download: the body itself, its gunzipped bytes, or the first *.mmdb file of the
 * (gzipped) tar archive MaxMind serves. Throws ListFetchError('invalid') when none opens.
 */
export function extractMmdb(body: Buffer, maxUnpacked: number): Buffer {
  let bytes = gunzipIfGzip(body, maxUnpacked);
  if (bytes.length > 262 && bytes.toString('latin1', 257, 262) === 'ustar') {
    const file = mmdbInTar(bytes);
    if (file === null) throw new ListFetchError('invalid', 'the archive holds no .mmdb file');
    bytes = file;
  }
  try {
    openMmdb(bytes);
  } catch (err) {
    throw new ListFetchError('invalid', `not an MMDB database (${(err as Error).message})`);
  }
  return bytes;
}

/** The first regular file named *.mmdb in a ustar archive (512-byte headers, sizes in octal). */
function mmdbInTar(tar: Buffer): Buffer | null {
  let at = 0;
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) return null;
    const name = cString(header, 0, 100);
    const prefix = cString(header, 345, 155);
    const size = parseInt(cString(header, 124, 12).trim() || '0', 8);
    const type = header[156];
    if (!Number.isFinite(size) || size < 0) return null;
    const start = at + 512;
    const full = prefix === '' ? name : `${prefix}/${name}`;
    if ((type === 0x30 || type === 0) && full.endsWith('.mmdb')) {
      return start + size <= tar.length ? tar.subarray(start, start + size) : null;
    }
    at = start + Math.ceil(size / 512) * 512;
  }
  return null;
}

function cString(buf: Buffer, start: number, length: number): string {
  const end = buf.indexOf(0, start);
  return buf.toString('latin1', start, end < 0 || end > start + length ? start + length : end);
}
