// The audio synthesizer: one child process (audio-process.ts, why a process: see there) that speaks
// codes, started on the first request and stopped when idle, so a service whose keys never ask for
// codes never loads eSpeak. Jobs wait in a bounded queue: past it, 503 AUDIO_BUSY (the rate limit,
// AUDIO_CHALLENGE_RATE_LIMIT, is the first bound per client). A child that exits, fails or
// overruns fails its jobs and is replaced on the next request.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PalisadeError } from '../errors.js';
import type { AudioAnswer, AudioJob } from './audio-process.js';
import type { AudioLanguage } from './speech.js';

export interface AudioSynthesizerOptions {
  /** Jobs queued or running before AUDIO_BUSY. Default 32. */
  readonly maxPending?: number;
  /** A job not answered this long after it was queued fails (and the child is replaced). Default 20,000 ms. */
  readonly timeoutMs?: number;
  /** The child stops after this long without a job. Default 60,000 ms. */
  readonly idleMs?: number;
}

export const AUDIO_SYNTHESIZER_DEFAULTS = Object.freeze({ maxPending: 32, timeoutMs: 20_000, idleMs: 60_000 });

export interface AudioSynthesizer {
  /** The WAV of `code` spoken in `language`; rejects with AUDIO_BUSY when the queue is full. */
  speak(code: string, language: AudioLanguage): Promise<Buffer>;
  /** Jobs queued or running. */
  readonly pending: number;
  /** The child's process id while one runs (tests). */
  readonly pid: number | undefined;
  close(): Promise<void>;
}

const ENTRY = fileURLToPath(new URL('./audio-process.js', import.meta.url));

interface Waiting {
  resolve(wav: Buffer): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export function createAudioSynthesizer(options: AudioSynthesizerOptions = {}): AudioSynthesizer {
  const o = { ...AUDIO_SYNTHESIZER_DEFAULTS, ...options };
  let child: ChildProcess | null = null;
  let idle: NodeJS.Timeout | null = null;
  let nextId = 1;
  let closed = false;
  const waiting = new Map<number, Waiting>();

  const failAll = (err: Error) => {
    for (const [id, w] of waiting) {
      clearTimeout(w.timer);
      waiting.delete(id);
      w.reject(err);
    }
  };
  const stop = (c: ChildProcess) => {
    if (child === c) child = null;
    c.kill('SIGKILL');
  };
  const start = (): ChildProcess => {
    // Advanced serialisation: the WAV crosses as bytes, not as a JSON array of numbers.
    const c = fork(ENTRY, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'ignore', 'ipc'], execArgv: ['--expose-gc'] });
    c.on('message', (answer: AudioAnswer) => {
      const job = waiting.get(answer.id);
      if (job === undefined) return;
      waiting.delete(answer.id);
      clearTimeout(job.timer);
      if (answer.ok) job.resolve(Buffer.from(answer.wav.buffer, answer.wav.byteOffset, answer.wav.byteLength));
      else job.reject(new Error(`audio synthesis failed: ${answer.message}`));
      if (waiting.size === 0) armIdle();
    });
    c.on('error', (err) => { stop(c); failAll(err); });
    c.on('exit', (code, signal) => {
      if (child !== c) return;
      child = null;
      failAll(new Error(`the audio process exited (${signal ?? code})`));
    });
    // Neither the child nor its channel keeps a stopping service alive.
    c.unref();
    c.channel?.unref();
    return c;
  };
  const armIdle = () => {
    if (idle !== null) clearTimeout(idle);
    idle = setTimeout(() => {
      idle = null;
      if (child !== null && waiting.size === 0) stop(child);
    }, o.idleMs);
    idle.unref();
  };

  return {
    speak(code, language) {
      if (closed) return Promise.reject(new PalisadeError('NOT_READY'));
      if (waiting.size >= o.maxPending) return Promise.reject(new PalisadeError('AUDIO_BUSY'));
      if (idle !== null) { clearTimeout(idle); idle = null; }
      const c = (child ??= start());
      const id = nextId++;
      return new Promise<Buffer>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`audio synthesis took over ${o.timeoutMs} ms`));
          // A stuck engine holds every later job: replace it.
          stop(c);
          failAll(new Error('the audio process was replaced'));
        }, o.timeoutMs);
        waiting.set(id, { resolve, reject, timer });
        c.send({ id, code, language } satisfies AudioJob);
      });
    },
    get pending() {
      return waiting.size;
    },
    get pid() {
      return child?.pid;
    },
    async close() {
      closed = true;
      if (idle !== null) clearTimeout(idle);
      failAll(new PalisadeError('NOT_READY'));
      const c = child;
      child = null;
      if (c !== null && c.exitCode === null && c.signalCode === null) {
        const exited = new Promise((resolve) => c.once('exit', resolve));
        c.ref(); // until it has exited: close() is awaited
        c.kill('SIGKILL');
        await exited;
      }
    },
  };
}
