// pino to stdout (LOG_LEVEL, LOG_FORMAT json|plain). Every record can also be handed to a tap (the
// worker forwards records to the primary while someone reads GET /.logs); the tap is a no-op
// otherwise, so the cost of /.logs is paid only while it is used. The access log (one line per
// request) is written by accessLog() without pino's machinery, in the same format and to the same
// place: it was a tenth of a request's CPU through pino.
import pino, { type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** Default 'info'. */
  level?: string;
  /** Default 'json'. */
  format?: 'json' | 'plain';
  /** Fields on every record (e.g. { worker: 1 }). */
  base?: Record<string, unknown>;
  /** Receives every JSON line (without newline); default none. */
  tap?: (line: string) => void;
  /** Where lines go; default stdout (fd 1). */
  destination?: NodeJS.WritableStream;
  /**
   * Hand the destination the lines of up to BATCH_MS as one string (at most ~16 KB each), instead
   * of line by line. Default: on for stdout, off for a given destination.
   */
  batch?: boolean;
}

/** A batch is handed over at once when it reaches this many characters. */
const BATCH_CHARS = 16 * 1024;
/** …and otherwise this long after its first line. */
export const BATCH_MS = 20;

/** Where a logger's lines go: the format, the tap and the destination, for pino and accessLog alike. */
interface Sink {
  write(line: string): void;
  /** pino's logger.flush() calls this: the batch and what the destination still buffers are written synchronously. */
  flush(done?: (err?: Error) => void): void;
}

interface LoggerParts {
  readonly sink: Sink;
  /** `"pid":1,"worker":1` as pino writes the base fields (with its leading comma). */
  readonly base: string;
}

const parts = new WeakMap<Logger, LoggerParts>();

export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? 'json';
  const out = options.destination ?? pino.destination({ dest: 1, sync: false });
  const tap = options.tap;
  // stdout is a SonicBoom, whose write() appends the line to its pending string and then takes the
  // byte length of that whole string (up to 16 KB, flattened each time): per line, a cost that grows
  // with the lines already waiting. That was 8 % of a challenge's CPU under load. And each of its
  // writes is an fs.write on libuv's thread pool: a futex to wake a pool thread, a context switch,
  // the write, a wake-up of the event loop. Handed over once per event-loop turn, that was still 0.6
  // writes per request under S2 (a turn holds one or two requests) and the top item of a
  // production worker's profile (writeString 14 % of busy samples). So a batch is handed over when
  // it reaches 16 KB or BATCH_MS after its first line, whichever comes first: at a few thousand
  // requests per second most writes carry 16 KB. The order is kept: every line, pino's and the access log's, goes through
  // the same batch; logger.flush() (every exit path in main.ts) hands it over at once.
  let pending = '';
  let timer: NodeJS.Timeout | null = null;
  const handOver = () => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    out.write(chunk);
  };
  const due = () => {
    timer = null;
    handOver();
  };
  const put = (options.batch ?? options.destination === undefined)
    ? (text: string) => {
      pending += text;
      if (pending.length >= BATCH_CHARS) handOver();
      // Not unref'd: a process that ends on its own still writes its last lines.
      else if (timer === null) timer = setTimeout(due, BATCH_MS);
    }
    : (text: string) => { out.write(text); };
  // A plain object rather than a Writable: pino needs only write(), and a stream's buffering and
  // callbacks cost more than the line itself.
  const sink: Sink = {
    write(line: string) {
      put(format === 'plain' ? `${plainLine(line.trimEnd())}\n` : line);
      if (tap) tap(line.trimEnd());
    },
    flush(done) {
      handOver();
      const flushSync = (out as { flushSync?: () => void }).flushSync;
      try {
        if (typeof flushSync === 'function') flushSync.call(out);
      } catch {
        // Nothing is buffered, or stdout is gone: there is nothing left to save.
      }
      done?.();
    },
  };
  const base = { pid: process.pid, ...options.base };
  const logger = pino(
    {
      level: options.level ?? 'info',
      base,
      timestamp: pino.stdTimeFunctions.isoTime,
      // Secrets and credentials never reach a log line, whatever a caller passes.
      redact: {
        paths: ['secret', 'password', 'authorization', 'headers.authorization', 'req.headers.authorization', '*.secret'],
        censor: '<hidden>',
      },
    },
    sink,
  );
  parts.set(logger, { sink, base: JSON.stringify(base).slice(1, -1) });
  return logger;
}

export interface AccessRecord {
  readonly ip: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly ms: number;
}

/**
 * The access log of `logger` (made by createLogger): `write` prints the line pino would print for
 * logger.child({ type: 'access' }).info(record), fields in the same order, at level info (nothing
 * below it). The record holds no secret (the path has no query), so pino's redaction is not needed.
 */
export function accessLog(logger: Logger): (record: AccessRecord) => void {
  const p = parts.get(logger);
  if (!p) {
    const child = logger.child({ type: 'access' });
    return (record) => child.info(record);
  }
  const { sink } = p;
  const head = `{"level":30,"time":"`;
  const middle = `",${p.base}${p.base === '' ? '' : ','}"type":"access","ip":`;
  let lastMs = -1;
  let lastTime = '';
  return (record) => {
    if (!logger.isLevelEnabled('info')) return;
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastTime = new Date(now).toISOString();
    }
    sink.write(`${head}${lastTime}${middle}${JSON.stringify(record.ip)},"method":${JSON.stringify(record.method)},"path":${
      JSON.stringify(record.path)},"status":${record.status},"ms":${Number.isFinite(record.ms) ? record.ms : null}}\n`);
  };
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** One JSON log record as a human line: `time LEVEL msg key=value …`. */
export function plainLine(jsonLine: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const { time, level, msg, pid, hostname, ...rest } = record;
  void pid; void hostname;
  const extras = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${String(time)} ${LEVEL_NAMES[level as number] ?? String(level)} ${msg === undefined ? '' : String(msg)}${extras ? ` ${extras}` : ''}`;
}

/** What names this node in request logs and metric labels: NODE_NAME when set, else NODE_ID. */
export function nodeLabel(config: { readonly NODE_NAME: string; readonly secrets: { readonly NODE_ID: string } }): string {
  return config.NODE_NAME || config.secrets.NODE_ID;
}

/** The base fields every log line of this node carries: node (NODE_ID) and nodeName (NODE_NAME, when set). */
export function nodeFields(config: { readonly NODE_NAME: string; readonly secrets: { readonly NODE_ID: string } }): Record<string, string> {
  return { node: config.secrets.NODE_ID, ...(config.NODE_NAME ? { nodeName: config.NODE_NAME } : {}) };
}
