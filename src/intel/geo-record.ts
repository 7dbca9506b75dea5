// What a geolocation database says about an address, whatever its schema: MaxMind GeoIP2/GeoLite2
// (country.iso_code, city.names.en, subdivisions[0], autonomous_system_*), IPinfo
// (country_code or country, city, region, asn "AS15169", as_name) and ip-location-db
// (country_code). Missing fields are null; a later database may fill them (geo.ts).
export interface GeoFields {
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country: string | null;
  readonly region: string | null;
  readonly city: string | null;
  readonly asn: number | null;
  readonly org: string | null;
}

export const NO_GEO: GeoFields = Object.freeze({ country: null, region: null, city: null, asn: null, org: null });

const COUNTRY = /^[A-Za-z]{2}$/;

export function normalizeGeoRecord(rec: unknown): GeoFields {
  if (rec === null || typeof rec !== 'object') return NO_GEO;
  const r = rec as Record<string, any>;
  const country = code(r.country_code) ?? code(r.country?.iso_code) ?? code(r.country) ?? code(r.registered_country?.iso_code);
  const city = text(r.city?.names?.en) ?? text(r.city);
  const region = text(r.subdivisions?.[0]?.names?.en) ?? text(r.region);
  let asn: number | null = null;
  if (typeof r.autonomous_system_number === 'number') asn = r.autonomous_system_number;
  else if (typeof r.asn === 'number') asn = r.asn;
  else if (typeof r.asn === 'string' && /^(AS)?[0-9]{1,10}$/i.test(r.asn)) asn = Number(r.asn.replace(/^AS/i, ''));
  const org = text(r.autonomous_system_organization) ?? text(r.as_name) ?? text(r.org) ?? text(r.asn_organization);
  if (country === null && city === null && region === null && asn === null && org === null) return NO_GEO;
  return Object.freeze({ country, region, city, asn, org });
}

function code(v: unknown): string | null {
  return typeof v === 'string' && COUNTRY.test(v) ? v.toUpperCase() : null;
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}
