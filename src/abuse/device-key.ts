// The header-entropy device key (rate-rule key `device`, and the header combinations counted per IP):
// a keyed SHA-256 of the client's IP bucket and the request headers a browser sends unchanged on
// every request, so one browser behind a shared address (NAT, office, mobile carrier) is one device
// and a script that rotates its headers shows up as many.
//
//   dailyKey(day) = HMAC-SHA-256(HASHING_SALT, "device-key:" + YYYY-MM-DD (UTC))
//   deviceKey     = hex(HMAC-SHA-256(dailyKey, ipKey(ip) + "\n" + h1 + "\n" + … + "\n" + hN))
//
// HMAC rather than SHA-256(salt ‖ data): the same hash function, keyed properly. The daily key
// rotates at 00:00 UTC, so a device key cannot be linked to the same browser on another day (the
// keys are pseudonymous identifiers, never stored longer than a rule window or PENALTY_TTL anyway);
// windows keyed by device start afresh at midnight UTC.
import { hmac, hmacPreparedHex, prepareHmacKey, type PreparedHmacKey } from '../native/index.js';
import { ipKey } from '../store/limit-key.js';

/**
 * The stable headers, in hashing order. Chosen because a browser sends them identically on every
 * request to us: the user agent, its language and compression preferences, the low-entropy client
 * hints Chromium sends by default, and the privacy signals. Left out on purpose: headers that change
 * with the request type or page (accept, sec-fetch-*, referer, origin, priority, cache-control),
 * credentials and cookies, proxy-set headers (x-forwarded-*), and connection management.
 */
export const DEVICE_HEADERS = Object.freeze([
  'user-agent', 'accept-language', 'accept-encoding', 'sec-ch-ua', 'sec-ch-ua-mobile', 'sec-ch-ua-platform',
  'dnt', 'sec-gpc',
] as const);

/** Longest header value hashed; longer values are cut (the HTTP layer caps all headers at 16 KiB). */
const MAX_VALUE = 1024;
const DAY_MS = 86_400_000;

export interface DeviceKeyOptions {
  /** Epoch-ms clock (tests). Default Date.now. */
  now?: () => number;
}

export interface DeviceKeys {
  /** 64 lowercase hex characters; the same for the same IP bucket and stable headers within one UTC day. */
  key(ip: string, headers: Readonly<Record<string, string | undefined>>): string;
}

/** `hashingSalt`: config.secrets HASHING_SALT (at least 16 characters). */
export function createDeviceKeys(hashingSalt: string | Buffer, options: DeviceKeyOptions = {}): DeviceKeys {
  if (hashingSalt.length < 16) throw new RangeError('the hashing salt must be at least 16 characters');
  const now = options.now ?? Date.now;
  let day = -1;
  let dayKey: PreparedHmacKey | null = null;
  return {
    key(ip, headers) {
      const today = Math.floor(now() / DAY_MS);
      if (today !== day || dayKey === null) {
        dayKey = prepareHmacKey('sha256', hmac('sha256', hashingSalt, `device-key:${utcDate(today)}`));
        day = today;
      }
      let material = ipKey(ip);
      for (const name of DEVICE_HEADERS) {
        const value = headers[name];
        material += '\n';
        if (value !== undefined) material += value.length > MAX_VALUE ? value.slice(0, MAX_VALUE) : value;
      }
      return hmacPreparedHex(dayKey, material);
    },
  };
}

/** Day number since the epoch → YYYY-MM-DD. */
export function utcDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}
