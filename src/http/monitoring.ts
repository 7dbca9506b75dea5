// Access to /.health, /.ready, /.live, /.logs, /.metrics (spec section 5.1): with
// MONITORING_HTTP_CREDENTIALS set, HTTP Basic auth is required instead of the whitelist (and works
// from anywhere); otherwise the client IP (after trusted-proxy resolution) must be in
// MONITORING_IP_WHITELIST. Outside without credentials: 403; wrong or missing credentials: 401.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ErrorCode } from '../errors.js';
import { type CidrList, ipMatches } from '../parse.js';
import type { RequestContext } from './types.js';

export interface MonitoringAccessOptions {
  readonly whitelist: CidrList;
  readonly credentials: { user: string; password: string } | null;
}

export function monitoringAccess(options: MonitoringAccessOptions): (req: RequestContext) => ErrorCode | null {
  if (options.credentials) {
    // Compare digests so the comparison takes the same time whatever the lengths.
    const expected = digest(`${options.credentials.user}:${options.credentials.password}`);
    return (req) => {
      const header = req.headers.authorization ?? '';
      if (!/^basic /i.test(header)) return 'MONITORING_UNAUTHORIZED';
      const given = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
      return timingSafeEqual(digest(given), expected) ? null : 'MONITORING_UNAUTHORIZED';
    };
  }
  return (req) => (ipMatches(options.whitelist, req.ip) ? null : 'MONITORING_FORBIDDEN');
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
