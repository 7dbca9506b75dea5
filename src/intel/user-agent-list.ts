// The common user agents (USER_AGENT_LIST_URL, the intoli/user-agents format: a JSON array of
// objects with userAgent, weight (market share) and deviceCategory, usually gzipped). The primary
// keeps the heaviest USER_AGENT_LIST_MAX_ENTRIES as DATA_DIR/lists/user_agents.txt, one
// `weight<TAB>userAgent` line each, heaviest first; a serving process loads that into a map.
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { ListFetchError } from '../lists/fetch-list.js';

export interface UserAgentCommonness {
  /** 'unknown' when no list is loaded. */
  readonly commonness: 'common' | 'uncommon' | 'unknown';
  /** The user agent's share of the list's weight (0..1); null unless common. */
  readonly share: number | null;
  /** 1 = the most common; null unless common. */
  readonly rank: number | null;
}

const UNKNOWN: UserAgentCommonness = Object.freeze({ commonness: 'unknown', share: null, rank: null });
const UNCOMMON: UserAgentCommonness = Object.freeze({ commonness: 'uncommon', share: null, rank: null });

export class UserAgentList {
  readonly #byAgent: ReadonlyMap<string, UserAgentCommonness>;

  constructor(text: string) {
    const rows: [number, string][] = [];
    let total = 0;
    for (const line of text.split('\n')) {
      const tab = line.indexOf('\t');
      if (tab < 0) continue;
      const weight = Number(line.slice(0, tab));
      const ua = line.slice(tab + 1);
      if (!(weight >= 0) || ua === '') continue;
      rows.push([weight, ua]);
      total += weight;
    }
    const map = new Map<string, UserAgentCommonness>();
    rows.forEach(([weight, ua], i) => {
      if (!map.has(ua)) map.set(ua, Object.freeze({ commonness: 'common', share: total > 0 ? weight / total : 0, rank: i + 1 }));
    });
    this.#byAgent = map;
  }

  static readonly EMPTY = new UserAgentList('');

  get size(): number { return this.#byAgent.size; }

  commonness(userAgent: string): UserAgentCommonness {
    if (this.#byAgent.size === 0) return UNKNOWN;
    return this.#byAgent.get(userAgent) ?? UNCOMMON;
  }
}

/** Reads the list file; an absent file is the empty list. */
export async function loadUserAgentList(path: string): Promise<UserAgentList> {
  try {
    return new UserAgentList(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return UserAgentList.EMPTY;
    throw err;
  }
}

/**
 * `body` unpacked when it is gzip (the magic bytes), at most `maxUnpacked` bytes of it; as it is
 * otherwise. Throws ListFetchError('invalid') for a gzip file that does not unpack within the limit.
 */
export function gunzipIfGzip(body: Buffer, maxUnpacked: number): Buffer {
  if (body.length <= 2 || body[0] !== 0x1f || body[1] !== 0x8b) return body;
  try {
    return gunzipSync(body, { maxOutputLength: maxUnpacked });
  } catch (err) {
    throw new ListFetchError('invalid', `not a readable gzip file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** A download in the intoli format → the kept file (ListSource.prepare). */
export function prepareUserAgentList(body: Buffer, maxEntries: number, maxUnpacked: number): { data: Buffer; entries: number } {
  const bytes = gunzipIfGzip(body, maxUnpacked);
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ListFetchError('invalid', 'not JSON');
  }
  if (!Array.isArray(parsed)) throw new ListFetchError('invalid', 'not a JSON array');
  const rows: [number, string][] = [];
  for (const item of parsed as unknown[]) {
    if (item === null || typeof item !== 'object') continue;
    const { userAgent, weight } = item as { userAgent?: unknown; weight?: unknown };
    if (typeof userAgent !== 'string' || userAgent === '' || /[\t\r\n]/.test(userAgent)) continue;
    rows.push([typeof weight === 'number' && weight >= 0 && Number.isFinite(weight) ? weight : 0, userAgent]);
  }
  if (rows.length === 0) throw new ListFetchError('invalid', 'no {userAgent, weight} entries');
  rows.sort((a, b) => b[0] - a[0]);
  const kept = rows.slice(0, maxEntries);
  return { data: Buffer.from(kept.map(([w, ua]) => `${w}\t${ua}\n`).join(''), 'utf8'), entries: kept.length };
}
