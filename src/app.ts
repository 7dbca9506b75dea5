// One serving process (a cluster worker, or the whole service with WORKERS=0): builds the
// routes and their dependencies from the configuration and runs the HTTP server.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from './config/index.js';
import { anonymizeIp } from './ip.js';
import { monitoringAccess } from './http/monitoring.js';
import { Router } from './http/router.js';
import { createHttpServer, type HttpServer } from './http/server.js';
import { accessLog, type Logger } from './log.js';
import { createMetrics, type Metrics } from './metrics.js';
import type { PrimaryLink } from './primary/ipc.js';
import { createAbuseProtection } from './abuse/index.js';
import { createThreatIndex, type ThreatIndex } from './intel/threat-index.js';
import { threatSources } from './intel/threat-sources.js';
import { registerListMetrics } from './lists/metrics.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerApiRoutes } from './routes/api.js';
import { registerConsoleRoutes } from './routes/console.js';
import { startIntelligence, type Intelligence } from './intel/start.js';
import { loadClassifierLists, type ClassifierLists } from './classifier/classifier-lists.js';
import { createMxLookup, type MxLookup } from './classifier/mx-lookup.js';
import { startClassifier } from './classifier/service.js';
import { registerDocsRoutes } from './routes/docs.js';
import { registerOpsRoutes, resolveSecurityTxt } from './routes/ops.js';
import { openServices, type Services } from './services.js';
import { SharedMemoryStore } from './store/index.js';

/** On shutdown, keep-alive connections stay open until no request came for this long… */
const DRAIN_QUIET_MS = 100;
/** …but no longer than this (within SHUTDOWN_TIMEOUT). */
const DRAIN_GRACE_MS = 2000;

export interface AppOptions {
  logger: Logger;
  /** The link to the primary in a cluster worker; null when running alone. */
  link: PrimaryLink | null;
  /** Log subscription when running alone (the primary's hub does it in a cluster). */
  localLogs?: { subscribe(onLine: (line: string) => void): () => void };
  /** Extra reasons the process is not ready (the primary's crash-loop state arrives through `link`). */
  worker?: number;
}

export interface App {
  readonly port: number;
  readonly metrics: Metrics;
  readonly services: Services;
  /** The threat lists (null when THREATS_ENABLED=0 or no source is set). */
  readonly threatIndex: ThreatIndex | null;
  /** IP intelligence (src/intel/start.ts). */
  readonly intelligence: Intelligence;
  /** The classifier's lists (reloaded on 'list-updated') and its MX lookups with their cache. */
  readonly classifier: { readonly lists: ClassifierLists; readonly mx: MxLookup };
  /** Stop accepting, let requests in flight finish within `timeoutMs`, release everything. */
  stop(timeoutMs: number): Promise<void>;
}

export async function startApp(config: Config, options: AppOptions): Promise<App> {
  const { logger, link } = options;
  const metrics = createMetrics({ node: { id: config.secrets.NODE_ID, name: config.NODE_NAME } });
  const router = new Router();
  let draining = false;
  let lastResponseAt = 0;
  const services = await openServices(config, logger);
  const { store, db, usage } = services;
  metrics.watchUsage(() => usage.stats());
  metrics.watchPool(() => services.pool.stats());
  if (store instanceof SharedMemoryStore) metrics.watchStateTable(store);
  metrics.watchEvictions(store);

  const subscribeLogs = async (onLine: (line: string) => void) => {
    if (!link) return options.localLogs?.subscribe(onLine) ?? (() => {});
    const off = link.on((m) => { if (m.t === 'log') onLine(m.line); });
    await link.request('logs-subscribe', 2000);
    return () => {
      off();
      link.request('logs-unsubscribe', 2000).catch(() => {});
    };
  };

  registerOpsRoutes(router, {
    version: config.version,
    nodeName: config.NODE_NAME,
    async notReady() {
      const reasons: string[] = [];
      if (draining) reasons.push('draining');
      if (!(await store.ping())) reasons.push('state store unreachable');
      if (link) {
        try {
          const status = (await link.request('status', 2000)) as { crashLoop: boolean; draining: boolean };
          if (status.crashLoop) reasons.push('worker crash loop');
          if (status.draining && !draining) reasons.push('draining');
        } catch {
          reasons.push('primary unreachable');
        }
      }
      return reasons;
    },
    async checkDatabase() {
      const started = performance.now();
      const ok = await db.ping(2000);
      return { ok, kind: db.kind, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    },
    async checkStore() {
      const started = performance.now();
      const ok = await store.ping();
      return { ok, kind: store.kind, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    },
    async metrics() {
      if (link) return { contentType: metrics.registry.contentType, body: (await link.request('metrics', 5000)) as string };
      return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
    },
    subscribeLogs,
    securityTxt: resolveSecurityTxt(config.SECURITY_TXT, config.BASE_URL, (path) => {
      try { return readFileSync(path, 'utf8'); } catch { return null; }
    }),
  });

  // Threat lists: loaded from DATA_DIR/lists before serving (a file not downloaded yet is an empty
  // list), reloaded when the primary says it replaced one.
  const sources = config.THREATS_ENABLED ? threatSources(config) : [];
  let threatIndex: ThreatIndex | null = null;
  let offLists: (() => void) | undefined;
  if (sources.length > 0) {
    const index = createThreatIndex({ dataDir: config.dataDir, sources, logger });
    threatIndex = index;
    offLists = link?.on((m) => { if (m.t === 'list-updated') void index.reload(m.name); });
    await index.reloadAll();
    registerListMetrics(metrics.registry, config.dataDir, sources.map((src) => src.name));
  }
  const intelligence = await startIntelligence(config, logger, threatIndex);
  const offIntel = link?.on((m) => { if (m.t === 'list-updated') void intelligence.reload(m.name); });
  const classifierLists = await loadClassifierLists(config, logger);
  const offClassifier = link?.on((m) => { if (m.t === 'list-updated') void classifierLists.reload(m.name); });
  const mx = createMxLookup({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT });
  const classifier = await startClassifier(config, services.db, classifierLists, mx, logger);
  const abuse = createAbuseProtection(config, {
    store, logger, registry: metrics.registry, threatLists: threatIndex ?? undefined, intel: intelligence.intel,
  });
  const apiRoutes = registerApiRoutes(router, config, services, metrics, abuse, intelligence.intel, classifier);
  // Last: the document describes the routes registered by now.
  if (config.API_DOCS_ENABLED) {
    const { undocumented } = registerDocsRoutes(router, { version: config.version, basePath: config.APP_BASE_PATH });
    if (undocumented.length > 0) logger.warn({ routes: undocumented }, 'routes without a description in src/api-schema/: missing from /v1/docs');
  }
  // The admin API and the console (docs/admin.md) come after the document: it describes the public
  // API; they are described in docs/admin.md.
  registerAdminRoutes(router, { config, sql: db.sql, secrets: services.keySecrets, store, logger, subscribeLogs });
  registerConsoleRoutes(router, { basePath: config.APP_BASE_PATH, whitelist: config.APP_IP_WHITELIST, logger });

  // The access log and the stored request logs (per-request analytics) go together: ACCESS_LOG_ENABLED.
  const access = config.ACCESS_LOG_ENABLED ? accessLog(logger) : null;
  const anonymize = config.ACCESS_LOG_ANONYMIZE_IP_ADDRESS;
  const server: HttpServer = createHttpServer(router, {
    port: config.PORT,
    tls: config.HTTP2_CERT && config.HTTP2_KEY ? { certFile: config.HTTP2_CERT, keyFile: config.HTTP2_KEY } : null,
    basePath: config.APP_BASE_PATH,
    allowedHosts: config.ALLOWED_HOSTS,
    corsOrigins: config.CORS_ORIGINS,
    clientIp: { trustedProxies: config.X_FORWARDED_FOR_TRUSTED, ipHeadersSecret: config.IP_HEADERS_SECRET },
    bodyLimit: config.REQUEST_BODY_LIMIT,
    requestTimeoutMs: config.REQUEST_TIMEOUT,
    monitoringAccess: monitoringAccess({
      whitelist: config.MONITORING_IP_WHITELIST, credentials: config.MONITORING_HTTP_CREDENTIALS,
    }),
    logger,
    beforeRoute: abuse.beforeRoute,
    onErrorCode(code) {
      if (code === 'STORE_FULL' || code === 'STORE_UNAVAILABLE') metrics.storeErrors.inc({ code });
    },
    onMalformed: (req) => void abuse.recordMalicious(req.ip, 'smuggling'),
    onWrite(req) {
      const mark = req.usage;
      if (mark !== null) usage.countUsage(mark.key, mark.classification, mark.origin);
    },
    onResponse(req, status) {
      lastResponseAt = performance.now();
      const seconds = (performance.now() - req.startedAt) / 1000;
      metrics.observe(status, seconds);
      if (access === null) return;
      const ms = Math.round(seconds * 1e5) / 100;
      access({ ip: anonymize ? anonymizeIp(req.ip) : req.ip, method: req.method, path: req.path, status, ms });
      const key = req.authorizedKey;
      if (key) {
        // The verify route looked the client up for verificationData; other routes once here, after the reply.
        const signals = req.clientSignals ?? intelligence.intel.client(req.ip, req.headers);
        usage.logRequest({
          apiKeyId: key.id, accountId: key.accountId, ip: req.ip, method: req.method, path: req.path, status, durationMs: ms,
          country: signals.country, threats: signals.threats === null ? null : Object.keys(signals.threats).join(','),
          classification: req.usage?.classification ?? null,
        });
      }
    },
  });
  let port: number;
  try {
    port = await server.listen();
  } catch (err) {
    await apiRoutes.close();
    await classifier.close().catch(() => {});
    await services.close(1000);
    throw err;
  }

  return {
    port,
    metrics,
    services,
    threatIndex,
    intelligence,
    classifier: { lists: classifierLists, mx },
    async stop(timeoutMs) {
      draining = true;
      offLists?.();
      offIntel?.();
      offClassifier?.();
      server.stopAccepting();
      // Clients may be sending on their keep-alive connections right now: closing those at once
      // drops requests already on the wire (test/reliability/graceful-restart.test.ts). Until the
      // clients go quiet, each request is answered with `Connection: close`; then the rest close.
      const started = performance.now();
      const graceEnd = started + Math.min(DRAIN_GRACE_MS, timeoutMs);
      lastResponseAt = Math.max(lastResponseAt, started);
      while (performance.now() < graceEnd && (server.inFlight > 0 || performance.now() - lastResponseAt < DRAIN_QUIET_MS)) {
        await sleep(10);
      }
      const left = await server.drain(Math.max(0, timeoutMs - (performance.now() - started)));
      if (left > 0) logger.warn({ inFlight: left }, 'shutdown timeout: closing connections with requests in flight');
      server.close();
      mx.close();
      await apiRoutes.close();
      await classifier.close().catch(() => {});
      await services.close(timeoutMs);
      metrics.close();
    },
  };
}
