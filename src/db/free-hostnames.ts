// api_keys.free_hostname: the hostname a key holds for POST /api_key/generate. While a key (even a
// revoked one) holds it, no free key can be generated for it (409 HOSTNAME_TAKEN; one holder per
// hostname across the service, migration 002). src/keys/hostname-claims.ts releases and reassigns it.
import type { Queryable } from './client.js';
import { list, raw, toStrings } from './dialect.js';

export interface HostnameHolder {
  readonly id: string;
  readonly accountId: string;
  readonly hostnames: readonly string[];
  readonly revoked: boolean;
}

interface Row { id: string; account_id: string; hostnames: unknown; revoked_at: unknown }

const toHolder = (r: Row): HostnameHolder =>
  Object.freeze({ id: r.id, accountId: r.account_id, hostnames: Object.freeze(toStrings(r.hostnames)), revoked: r.revoked_at !== null });

/** The keys holding `hostname`, in every account; locked until the transaction ends. */
export async function hostnameHolders(q: Queryable, hostname: string): Promise<HostnameHolder[]> {
  const rows = await q<Row[]>`
    select id, account_id, hostnames, revoked_at from api_keys where free_hostname = ${hostname} order by created_at, id${raw(q.dialect.forUpdate)}`;
  return rows.map(toHolder);
}

/** The key, locked until the transaction ends, with the hostname it holds; null when there is no such key. */
export async function lockKeyForHostname(q: Queryable, id: string): Promise<(HostnameHolder & { readonly freeHostname: string | null }) | null> {
  const rows = await q<(Row & { free_hostname: string | null })[]>`
    select id, account_id, hostnames, revoked_at, free_hostname from api_keys where id = ${id}${raw(q.dialect.forUpdate)}`;
  const r = rows[0];
  return r === undefined ? null : Object.freeze({ ...toHolder(r), freeHostname: r.free_hostname });
}

/** The key gives up the hostname it holds. */
export async function clearFreeHostname(q: Queryable, id: string): Promise<void> {
  await q`update api_keys set free_hostname = null, updated_at = ${new Date()} where id = ${id}`;
}

/** The key holds `hostname` and lists `hostnames`. */
export async function setFreeHostname(q: Queryable, id: string, hostname: string, hostnames: readonly string[]): Promise<void> {
  await q`
    update api_keys set free_hostname = ${hostname}, hostnames = ${list(hostnames)}, updated_at = ${new Date()}
    where id = ${id}`;
}
