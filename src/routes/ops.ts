// Operational endpoints (spec 4.1): /.live, /.ready, /.health, /.metrics, /.logs, and
// /.well-known/security.txt. Access to the first five is checked by the HTTP layer (monitoring: true).
import { plainLine } from '../log.js';
import type { Router } from '../http/router.js';
import { json } from '../http/types.js';

export interface Check {
  readonly ok: boolean;
  readonly kind?: string;
  readonly latencyMs?: number;
  readonly error?: string;
}

export interface OpsDeps {
  readonly version: string;
  readonly nodeName: string;
  /** Reasons the instance cannot serve traffic ([] = ready). */
  notReady(): Promise<string[]>;
  /** The durable database and the state store ("redis" in the spec, also for the embedded store). */
  checkDatabase(): Promise<Check>;
  checkStore(): Promise<Check>;
  /** Prometheus text of the whole node (aggregated across workers by the primary). */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** Subscribes to every process's log lines (JSON); returns the unsubscribe function. */
  subscribeLogs(onLine: (jsonLine: string) => void): Promise<() => void>;
  /** SECURITY_TXT resolved: the text to serve, or null when disabled. */
  securityTxt: string | null;
}

export function registerOpsRoutes(router: Router, deps: OpsDeps): void {
  const stamp = () => ({ timestamp: new Date().toISOString(), version: deps.version });

  router.add('GET', '/.live', () => json({ status: 'ok', ...stamp() }), { monitoring: true });

  router.add('GET', '/.ready', async () => {
    const reasons = await deps.notReady();
    if (reasons.length === 0) return json({ ready: true, ...stamp() });
    return json({ error: 'NOT_READY', statusCode: 503, ready: false, reasons, ...stamp() }, 503);
  }, { monitoring: true });

  router.add('GET', '/.health', async () => {
    const [database, redis] = await Promise.all([deps.checkDatabase(), deps.checkStore()]);
    const healthy = database.ok && redis.ok;
    return json({
      status: healthy ? 'healthy' : 'unhealthy',
      checks: { database, redis },
      node: deps.nodeName || undefined,
      ...stamp(),
    }, healthy ? 200 : 503);
  }, { monitoring: true });

  router.add('GET', '/.metrics', async () => {
    const m = await deps.metrics();
    return { status: 200, headers: { 'content-type': m.contentType }, body: m.body };
  }, { monitoring: true });

  router.addStream('GET', '/.logs', async (req, stream) => {
    const asJson = req.query.get('format') === 'json';
    let unsubscribe: (() => void) | null = null;
    const onLine = (line: string) => {
      // A reader that does not keep up is dropped: the service never waits for it.
      if (!stream.write(`${asJson ? line : plainLine(line)}\n`)) {
        unsubscribe?.();
        stream.drop();
      }
    };
    stream.onClose(() => unsubscribe?.());
    // A first record right away: uWS sends the status and headers with the first bytes of the body.
    onLine(JSON.stringify({ level: 30, time: new Date().toISOString(), pid: process.pid, msg: 'log stream opened' }));
    unsubscribe = await deps.subscribeLogs(onLine);
    if (stream.closed) unsubscribe();
  }, { monitoring: true });

  if (deps.securityTxt !== null) {
    const body = deps.securityTxt;
    router.add('GET', '/.well-known/security.txt', () => ({
      status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body,
    }));
  }
}

/** SECURITY_TXT: '0' disables, a path to an existing file is read, other text is served as is. */
export function resolveSecurityTxt(setting: string, baseUrl: string, readFile: (path: string) => string | null): string | null {
  if (setting === '0') return null;
  if (setting === '') {
    const expires = new Date(Date.now() + 365 * 86_400_000).toISOString();
    const contact = baseUrl ? `${baseUrl.replace(/\/+$/, '')}/.well-known/security.txt` : 'mailto:security@localhost';
    return `Contact: ${contact}\nExpires: ${expires}\nPreferred-Languages: en\n`;
  }
  if (setting.startsWith('/') || setting.startsWith('./')) {
    const text = readFile(setting);
    if (text !== null) return text;
  }
  return setting.endsWith('\n') ? setting : `${setting}\n`;
}
