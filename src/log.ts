// pino to stdout (LOG_LEVEL, LOG_FORMAT json|plain). Every record can also be handed to a tap (the
// worker forwards records to the primary while someone reads GET /.logs); the tap is a no-op
// otherwise, so the cost of /.logs is paid only while it is used.
import pino, { type Logger } from 'pino';
import { Writable } from 'node:stream';

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
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? 'json';
  const out = options.destination ?? pino.destination({ dest: 1, sync: false });
  const tap = options.tap;
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, done) {
      const line = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      out.write(format === 'plain' ? `${plainLine(line.trimEnd())}\n` : line);
      if (tap) tap(line.trimEnd());
      done();
    },
  });
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid, ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Secrets and credentials never reach a log line, whatever a caller passes.
      redact: {
        paths: ['secret', 'password', 'authorization', 'headers.authorization', 'req.headers.authorization', '*.secret'],
        censor: '<hidden>',
      },
    },
    stream,
  );
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
