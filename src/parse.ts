// Value parsers for configuration: each takes the raw string and returns the value or throws a
// plain Error whose message says what is wrong (src/config/load.ts collects them into one report).
import { BlockList, isIP } from 'node:net';

const DURATION_UNITS: Record<string, number> = {
  ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000,
};

/**
 * Durations: `250ms`, `30s`, `5m`, `4h`, `14d`, `2w`, or a bare number in `bareUnit` (the spec gives
 * some variables in ms, e.g. REDIS_COMMAND_TIMEOUT=5000). Returns milliseconds.
 */
export function parseDuration(raw: string, bareUnit: 'ms' | 's' = 'ms'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/i.exec(raw);
  if (!m) throw new Error(`"${raw}" is not a duration (e.g. 500ms, 30s, 5m, 4h, 14d)`);
  const value = Number(m[1]) * DURATION_UNITS[(m[2] ?? bareUnit).toLowerCase()]!;
  if (!Number.isFinite(value) || value > 2 ** 47) throw new Error(`"${raw}" is too long a duration`);
  return Math.round(value);
}

const SIZE_UNITS: Record<string, number> = {
  b: 1, kb: 1024, k: 1024, mb: 1024 ** 2, m: 1024 ** 2, gb: 1024 ** 3, g: 1024 ** 3,
  kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3,
};

/** Sizes: `512`, `64KB`, `5MB`, `1GB` (binary multiples: 1 MB = 1,048,576 bytes). Returns bytes. */
export function parseSize(raw: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?\s*$/i.exec(raw);
  if (!m) throw new Error(`"${raw}" is not a size (e.g. 512, 64KB, 5MB)`);
  const value = Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]!);
  if (!Number.isSafeInteger(value)) throw new Error(`"${raw}" is too large a size`);
  return value;
}

/** Booleans as the spec writes them: `1`/`0`; `true`/`false`, `yes`/`no`, `on`/`off` also accepted. */
export function parseBoolean(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (v === '1' || v === 'true' || v === 'yes' || v === 'on') return true;
  if (v === '0' || v === 'false' || v === 'no' || v === 'off' || v === '') return false;
  throw new Error(`"${raw}" is not a boolean (use 1 or 0)`);
}

export function parseInteger(raw: string, min = -Infinity, max = Infinity): number {
  if (!/^\s*-?\d+\s*$/.test(raw)) throw new Error(`"${raw}" is not an integer`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new Error(`${n} is out of range [${min}, ${max}]`);
  }
  return n;
}

export function parseList(raw: string): string[] {
  return raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

export type RateRuleKey = 'ip' | 'apiKey' | 'account' | 'device';
export const RATE_RULE_KEYS: readonly RateRuleKey[] = ['ip', 'apiKey', 'account', 'device'];

/** `<count>/<window>(key=..&block=..&expire=..)`, see spec section 8. */
export interface RateRule {
  /** The text the rule was parsed from, for logs and metrics. */
  readonly source: string;
  /** At most `count` hits per fixed window per key. */
  readonly count: number;
  readonly windowMs: number;
  /** What the limit is keyed on; `ip` aggregates IPv6 addresses per /64. Default `ip`. */
  readonly key: RateRuleKey;
  /** After the limit is passed the key stays denied for this long (0 = only until the window ends). */
  readonly blockMs: number;
  /** How long a key's mark is kept once the limit is passed (threat counters); 0 = none. */
  readonly expireMs: number;
}

export const MAX_RULE_COUNT = 8_388_606;

export function parseRateRule(raw: string, defaultKey: RateRuleKey = 'ip'): RateRule {
  const m = /^\s*(\d+)\s*\/\s*(\d*(?:\.\d+)?\s*(?:ms|s|m|h|d|w)?)\s*(?:\((.*)\))?\s*$/i.exec(raw);
  if (!m) throw new Error(`"${raw}" is not a rate rule (<count>/<window>(key=..&block=..&expire=..))`);
  // The state stores count up to 2^23 - 2 hits per window (23-bit counters in the shared-memory slots).
  const count = parseInteger(m[1]!, 1, MAX_RULE_COUNT);
  const windowText = m[2]!.trim();
  // `10/m` reads as ten per minute.
  const windowMs = parseDuration(/^\d/.test(windowText) ? windowText : `1${windowText || 's'}`, 's');
  if (windowMs < 1) throw new Error(`"${raw}": the window must be positive`);
  let key = defaultKey;
  let blockMs = 0;
  let expireMs = 0;
  for (const part of (m[3] ?? '').split('&')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim();
    const value = eq < 0 ? '' : part.slice(eq + 1).trim();
    if (name === 'key') {
      if (!(RATE_RULE_KEYS as readonly string[]).includes(value)) {
        throw new Error(`"${raw}": key must be one of ${RATE_RULE_KEYS.join(', ')}`);
      }
      key = value as RateRuleKey;
    } else if (name === 'block') {
      blockMs = parseDuration(value, 's');
    } else if (name === 'expire') {
      expireMs = parseDuration(value, 's');
    } else {
      throw new Error(`"${raw}": unknown option "${name}" (key, block, expire)`);
    }
  }
  return Object.freeze({ source: raw.trim(), count, windowMs, key, blockMs, expireMs });
}

/** A list of IPs and CIDRs, matched with node's BlockList (IPv4-mapped IPv6 handled by `ipMatches`). */
export interface CidrList {
  readonly source: readonly string[];
  readonly list: BlockList;
  readonly empty: boolean;
}

export function parseCidrList(raw: string): CidrList {
  const list = new BlockList();
  const source = parseList(raw);
  for (const entry of source) {
    const slash = entry.indexOf('/');
    const addr = slash < 0 ? entry : entry.slice(0, slash);
    const family = isIP(addr);
    if (family === 0) throw new Error(`"${entry}" is not an IP address or CIDR`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (slash < 0) {
      list.addAddress(addr, type);
    } else {
      const bits = parseInteger(entry.slice(slash + 1), 0, family === 4 ? 32 : 128);
      list.addSubnet(addr, bits, type);
    }
  }
  return { source, list, empty: source.length === 0 };
}

/** Does `ip` (as reported by a socket, possibly IPv4-mapped IPv6) fall in `cidrs`? */
export function ipMatches(cidrs: CidrList, ip: string): boolean {
  if (cidrs.empty) return false;
  const family = isIP(ip);
  if (family === 4) return cidrs.list.check(ip, 'ipv4');
  if (family === 6) {
    if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) return cidrs.list.check(ip.slice(7), 'ipv4');
    return cidrs.list.check(ip, 'ipv6');
  }
  return false;
}

const CRON_FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const;

// Five-field cron strings ("0 */12 * * *"); validated here, evaluated by the scheduler.
export function parseCron(raw: string): string {
  const fields = raw.trim().split(/\s+/);
  if (fields.length !== 5) throw new Error(`"${raw}" is not a cron string (5 fields: minute hour day month weekday)`);
  fields.forEach((field, i) => {
    const { name, min, max } = CRON_FIELDS[i]!;
    for (const part of field.split(',')) {
      const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
      if (!m) throw new Error(`"${raw}": bad ${name} field "${field}"`);
      for (const n of [m[2], m[3]]) {
        if (n !== undefined && (Number(n) < min || Number(n) > max)) {
          throw new Error(`"${raw}": ${name} ${n} is out of range ${min}-${max}`);
        }
      }
      if (m[4] !== undefined && Number(m[4]) < 1) throw new Error(`"${raw}": step must be positive`);
    }
  });
  return fields.join(' ');
}
