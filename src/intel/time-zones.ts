// The countries that use an IANA time zone (time-zones.json, made by scripts/gen-time-zones.ts
// from the tz database, which is in the public domain). The classifier's TIME_ZONE_MISMATCH rule
// compares them with the IP's country: a browser's time zone survives the proxies and VPNs that
// move its IP address.
import { readFileSync } from 'node:fs';

let zones: Readonly<Record<string, readonly string[]>> | null = null;

/** Upper-case ISO 3166-1 codes of the countries using `timeZone`; null for unknown or non-geographic zones (UTC, Etc/…). */
export function timeZoneCountries(timeZone: string): readonly string[] | null {
  zones ??= JSON.parse(readFileSync(new URL('../../../src/intel/time-zones.json', import.meta.url), 'utf8')) as Record<string, string[]>;
  return Object.hasOwn(zones, timeZone) ? zones[timeZone]! : null;
}
