// `keys hostname release HOSTNAME` and `keys hostname reassign HOSTNAME KEY_ID` (docs/hostnames.md).
import { reassignKeyHostname, releaseKeyHostname } from '../admin/keys.js';
import { isKeyId } from '../keys/secrets.js';
import { type Context, UsageError } from './context.js';

export async function hostnameCommand(args: string[], ctx: Context): Promise<void> {
  const [verb, hostname, keyId, ...extra] = args;
  const list = (ids: readonly string[]) => (ids.length === 0 ? 'none' : ids.join(', '));
  if (verb === 'release' && hostname !== undefined && keyId === undefined) {
    const r = await releaseKeyHostname(ctx.admin, hostname);
    ctx.out(`released ${r.hostname}
revoked:  ${list(r.revoked)}
cleared:  ${list(r.cleared)}
` +
      'A free key can be generated for it again (workers drop the revoked keys within CACHE_DURATION_API_KEYS).', r);
    return;
  }
  if (verb === 'reassign' && hostname !== undefined && keyId !== undefined && extra.length === 0) {
    if (!isKeyId(keyId)) throw new Error(`"${keyId}" is not a key id`);
    const r = await reassignKeyHostname(ctx.admin, hostname, keyId);
    ctx.out(`${r.hostname} is held by ${r.apiKey} (hostnames: ${r.hostnames.join(', ') || '*'})
revoked:  ${list(r.revoked)}
` +
      `cleared:  ${list(r.cleared)}`, r);
    return;
  }
  throw new UsageError('keys hostname release HOSTNAME | keys hostname reassign HOSTNAME KEY_ID');
}
