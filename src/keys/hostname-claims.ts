// An operator's answer to a squatted hostname (docs/hostnames.md). POST /api_key/generate gives a
// free key to the first client that asks for a hostname, without proof that the client controls it,
// and answers 409 HOSTNAME_TAKEN to everyone after. Releasing the hostname revokes the free key
// that holds it and lets the next request for it succeed; reassigning it gives the hold to a key
// the operator chose, so that no free key can be generated for it.
import { revokeApiKey as revokeRow } from '../db/api-keys.js';
import type { Queryable, Sql } from '../db/client.js';
import { clearFreeHostname, hostnameHolders, lockKeyForHostname, setFreeHostname, type HostnameHolder } from '../db/free-hostnames.js';
import { insertKeyAudit } from '../db/key-audit.js';
import { normalizeDnsHostname } from './hostnames.js';
import { keyKindOf } from './secrets.js';

export interface Released {
  readonly hostname: string;
  /** Free keys that held it, now revoked (a free key has no other hostname to serve). */
  readonly revoked: readonly string[];
  /** Standard keys that held it (by an earlier reassign): they keep their hostnames and stay enabled. */
  readonly cleared: readonly string[];
}

export interface Reassigned extends Released {
  /** The key that holds the hostname now. */
  readonly apiKey: string;
  /** Its hostnames afterwards. */
  readonly hostnames: readonly string[];
}

/** Makes `hostname` free for POST /api_key/generate again. Throws when no key holds it. */
export async function releaseHostname(sql: Sql, hostname: string, actor: string,
  within?: (tx: Queryable, r: Released) => Promise<void>): Promise<Released> {
  const name = checkedHostname(hostname);
  return sql.begin(async (tx) => {
    const holders = await hostnameHolders(tx, name);
    if (holders.length === 0) throw new Error(`no key holds the hostname ${name}`);
    const r = await release(tx, name, holders, actor);
    await within?.(tx, r);
    return r;
  });
}

/**
 * Moves `hostname` to the standard key `keyId`: the keys holding it are released (free ones
 * revoked), and `keyId` holds it from now on, with the hostname added to its list (a key that lists
 * none accepts every origin and keeps listing none). Throws when `keyId` is unknown, revoked, a free
 * key or already holds another hostname.
 */
export async function reassignHostname(sql: Sql, hostname: string, keyId: string, actor: string,
  within?: (tx: Queryable, r: Reassigned, accountId: string) => Promise<void>): Promise<Reassigned> {
  const name = checkedHostname(hostname);
  return sql.begin(async (tx) => {
    const target = await lockKeyForHostname(tx, keyId);
    if (target === null) throw new Error(`no key ${keyId}`);
    if (target.revoked) throw new Error(`${keyId} is revoked`);
    if (keyKindOf(keyId) === 'free') throw new Error(`${keyId} is a free key: free keys hold only the hostname they were generated for`);
    if (target.freeHostname === name) throw new Error(`${keyId} already holds ${name}`);
    if (target.freeHostname !== null) throw new Error(`${keyId} holds ${target.freeHostname}: release it first`);
    const released = await release(tx, name, await hostnameHolders(tx, name), actor);
    const hostnames = target.hostnames.length === 0 || target.hostnames.includes(name) ? target.hostnames : [...target.hostnames, name];
    await setFreeHostname(tx, keyId, name, hostnames);
    await insertKeyAudit(tx, { apiKeyId: keyId, action: 'update', actor, detail: { holdsHostname: name, hostnames } });
    const r = { ...released, apiKey: keyId, hostnames };
    await within?.(tx, r, target.accountId);
    return r;
  });
}

async function release(tx: Queryable, hostname: string, holders: readonly HostnameHolder[], actor: string): Promise<Released> {
  const revoked: string[] = [];
  const cleared: string[] = [];
  for (const h of holders) {
    await clearFreeHostname(tx, h.id);
    if (keyKindOf(h.id) === 'free') {
      if (await revokeRow(tx, h.id)) await insertKeyAudit(tx, { apiKeyId: h.id, action: 'revoke', actor, detail: { releasedHostname: hostname } });
      revoked.push(h.id);
    } else {
      await insertKeyAudit(tx, { apiKeyId: h.id, action: 'update', actor, detail: { releasedHostname: hostname } });
      cleared.push(h.id);
    }
  }
  return { hostname, revoked, cleared };
}

function checkedHostname(input: string): string {
  const name = normalizeDnsHostname(input);
  if (name === null) throw new Error(`"${input.slice(0, 100)}" is not a hostname a free key can hold (a DNS name, no wildcard, no IP address)`);
  return name;
}
