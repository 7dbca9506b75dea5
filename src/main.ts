// Entry point: `node dist/src/main.js`. The primary loads the configuration (creating the secrets on
// first start), hosts the embedded database and supervises the workers; each worker serves HTTP.
// WORKERS=0 runs everything in this one process.
import cluster from 'node:cluster';
import { ConfigError, loadConfig, workerSlot, type Config } from './config/index.js';
import { createLogger, nodeFields, type Logger } from './log.js';
import { startApp, type App } from './app.js';
import { publicTrustedRanges } from './http/client-ip.js';
import type { PrimaryData } from './primary/data.js';
import { Hub } from './primary/hub.js';
import { notifyWorkers, startListJobs, type ListJobs } from './primary/list-jobs.js';
import { PrimaryLink } from './primary/ipc.js';
import { detectCpus, workerHeapMb } from './primary/resources.js';
import { Supervisor } from './primary/supervisor.js';

/** Loaded only where the database is hosted: workers never load PGlite (tens of MB each). */
function primaryData() {
  return import('./primary/data.js');
}

function configOrExit(persistSecrets: boolean): Config {
  try {
    return loadConfig({ persistSecrets, detectedCpus: detectCpus() });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

/** Fan-out of log lines to local subscribers (single-process mode). */
function localLogHub() {
  const subscribers = new Set<(line: string) => void>();
  return {
    tap: (line: string) => { for (const s of subscribers) s(line); },
    subscribe(onLine: (line: string) => void) {
      subscribers.add(onLine);
      return () => { subscribers.delete(onLine); };
    },
  };
}

function onSignals(handler: () => void): void {
  let called = false;
  const once = () => { if (!called) { called = true; handler(); } };
  process.on('SIGTERM', once);
  process.on('SIGINT', once);
}

/** Settings that work but are probably a mistake; said once, by the primary. */
function warnAboutConfig(config: Config, logger: Logger): void {
  const publicProxies = publicTrustedRanges(config.X_FORWARDED_FOR_TRUSTED);
  if (publicProxies.length > 0) {
    logger.warn(
      { X_FORWARDED_FOR_TRUSTED: publicProxies },
      'X_FORWARDED_FOR_TRUSTED covers public addresses: every client there can name its own IP in X-Forwarded-For ' +
        '(whitelists, rate limits and penalties then count what it chooses). List only the addresses of your proxies.',
    );
  }
}

async function runSingle(config: Config): Promise<void> {
  const logs = localLogHub();
  const logger = createLogger({ level: config.LOG_LEVEL, format: config.LOG_FORMAT, base: nodeFields(config), tap: logs.tap });
  warnAboutConfig(config, logger);
  let data: PrimaryData | null = null;
  let app: App;
  try {
    data = await (await primaryData()).preparePrimaryData(config, logger, 1);
    app = await startApp(config, { logger, link: null, localLogs: logs });
  } catch (err) {
    logger.fatal({ err }, 'start-up failed');
    await data?.close().catch(() => {});
    logger.flush();
    setTimeout(() => process.exit(1), 50);
    return;
  }
  logger.info({ port: app.port, workers: 0, version: config.version, dataDir: config.dataDir }, 'palisade listening');
  const index = app.threatIndex;
  const lists = startListJobs(config, logger, (name) => {
    void index?.reload(name);
    void app.intelligence.reload(name);
    void app.classifier.lists.reload(name);
  });
  onSignals(() => void shutdown(app, data, config, logger, lists));
}

async function shutdown(app: App, data: PrimaryData | null, config: Config, logger: Logger, lists: ListJobs | null): Promise<void> {
  logger.info('draining');
  await lists?.stop();
  await app.stop(config.SHUTDOWN_TIMEOUT);
  await data?.close().catch((err: unknown) => logger.error({ err }, 'closing the database failed'));
  logger.info('stopped');
  logger.flush();
  setTimeout(() => process.exit(0), 50);
}

async function runPrimary(config: Config): Promise<void> {
  let hub: Hub | null = null;
  const logger = createLogger({
    level: config.LOG_LEVEL, format: config.LOG_FORMAT, base: { role: 'primary', ...nodeFields(config) }, tap: (line) => hub?.publish(line),
  });
  warnAboutConfig(config, logger);
  const heap = workerHeapMb(config.HEAP_LIMIT_MB, config.CONTAINER_MEMORY_LIMIT_MB, config.workers);
  const supervisor = new Supervisor({
    workers: config.workers,
    execArgv: heap ? [`--max-old-space-size=${heap}`] : [],
    logger,
  });
  hub = new Hub(supervisor);
  let data: PrimaryData | null = null;
  let lists: ListJobs | null = null;
  onSignals(() => {
    logger.info('draining workers');
    const listsStopped = lists?.stop();
    supervisor.stop(config.SHUTDOWN_TIMEOUT).then(async () => {
      await listsStopped;
      await data?.close().catch((err: unknown) => logger.error({ err }, 'closing the database failed'));
      logger.info('stopped');
      hub?.close();
      logger.flush();
      setTimeout(() => process.exit(0), 50);
    }, (err: unknown) => {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  });
  try {
    data = await (await primaryData()).preparePrimaryData(config, logger, config.workers);
    // A dead worker's usage counts are in the ledger: write them now, not at its replacement's pace.
    const drain = data.usage;
    cluster.on('exit', () => { drain.sweep().catch(() => undefined); });
    await supervisor.start();
  } catch (err) {
    logger.fatal({ err }, 'start-up failed');
    await supervisor.stop(1000);
    await data?.close().catch(() => {});
    logger.flush();
    setTimeout(() => process.exit(1), 50);
    return;
  }
  logger.info({ port: config.PORT, workers: config.workers, heapMb: heap, version: config.version, dataDir: config.dataDir }, 'palisade listening');
  if (!supervisor.stopping) lists = startListJobs(config, logger, notifyWorkers(supervisor));
}

async function runWorker(config: Config): Promise<void> {
  const link = new PrimaryLink();
  let tapOn = false;
  const logger = createLogger({
    level: config.LOG_LEVEL, format: config.LOG_FORMAT, base: { worker: workerSlot(), ...nodeFields(config) },
    tap: (line) => { if (tapOn) link.send({ t: 'log', line }); },
  });
  link.on((m) => { if (m.t === 'logs-tap') tapOn = m.on; });
  let app: App | null = null;
  let stopping = false;
  const exit = (code: number) => {
    logger.flush();
    link.close();
    setTimeout(() => process.exit(code), 20);
  };
  // Listening from the start: a stop that arrives while the worker is still starting ends it at
  // once (nothing is in flight yet) instead of leaving it to be killed.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (app === null) return exit(0);
    app.stop(config.SHUTDOWN_TIMEOUT).finally(() => exit(0));
  };
  link.on((m) => { if (m.t === 'shutdown') stop(); });
  // Ctrl-C reaches the whole process group: the primary coordinates, so a worker drains on it too.
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
  try {
    const started = await startApp(config, { logger, link });
    if (stopping) {
      await started.stop(0);
      return exit(0);
    }
    app = started;
  } catch (err) {
    logger.fatal({ err }, 'worker start-up failed');
    return exit(1);
  }
  link.send({ t: 'ready' });
}

if (cluster.isPrimary) {
  // Everything the service writes under DATA_DIR (secrets, state file, database) is its own: files
  // made without an explicit mode are not left readable by the group or others. Workers inherit it.
  process.umask(0o077);
  const config = configOrExit(true);
  if (config.workers === 0) await runSingle(config);
  else await runPrimary(config);
} else {
  await runWorker(configOrExit(false));
}
