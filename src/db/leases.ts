// leases: a named right to run a scheduled job, held by one node until it expires. A node takes a
// lease that is free or expired, or renews its own; nobody else gets it meanwhile. Times come from
// the caller's clock: nodes' clocks must agree to well within a lease's length.
import type { Queryable } from './client.js';
import { toDate } from './dialect.js';

/** Takes or renews `name` for `holder` until `now + ttlMs`. True when `holder` holds it now. */
export async function acquireLease(q: Queryable, name: string, holder: string, ttlMs: number, now: number): Promise<boolean> {
  const until = new Date(now + ttlMs);
  let inserted = 0;
  for (const statement of q.dialect.insertRows('leases', { name: 'text', holder: 'text', expires_at: 'timestamp' }, [[name, holder, until]], { ignore: true })) {
    inserted += (await q.run(statement)).count;
  }
  if (inserted > 0) return true;
  const taken = await q`
    update leases set holder = ${holder}, expires_at = ${until}
    where name = ${name} and (holder = ${holder} or expires_at < ${new Date(now)})`;
  return taken.count > 0;
}

/** Gives the lease up now (only when `holder` holds it). */
export async function releaseLease(q: Queryable, name: string, holder: string, now: number): Promise<void> {
  await q`update leases set expires_at = ${new Date(now - 1)} where name = ${name} and holder = ${holder}`;
}

/** Who holds `name` and until when (null when nobody ever took it). */
export async function leaseHolder(q: Queryable, name: string): Promise<{ holder: string; expiresAt: Date } | null> {
  const [row] = await q<{ holder: string; expires_at: unknown }[]>`select holder, expires_at from leases where name = ${name}`;
  if (row === undefined) return null;
  return { holder: row.holder, expiresAt: toDate(row.expires_at) };
}
