// The audio synthesizer: one worker thread (audio-worker.ts) that speaks codes, started on the first
// request and stopped when idle, so a service whose keys never ask for codes never loads eSpeak
// (its heap is about 60 MB). Jobs wait in a bounded queue: past it, 503 AUDIO_BUSY, the rate limit
// (AUDIO_CHALLENGE_RATE_LIMIT) being the first bound per client. A thread that dies or overruns
// fails its jobs and is replaced on the next request.
import { Worker } from 'node:worker_threads';
import { PalisadeError } from '../errors.js';
import type { AudioAnswer, AudioJob } from './audio-worker.js';
import type { AudioLanguage } from './speech.js';

export interface AudioSynthesizerOptions {
  /** Jobs queued or running before AUDIO_BUSY. Default 32. */
  readonly maxPending?: number;
  /** A job not answered in this long fails (and the thread is replaced). Default 10,000 ms. */
  readonly timeoutMs?: number;
  /** The thread stops after this long without a job. Default 60,000 ms. */
  readonly idleMs?: number;
}

export const AUDIO_SYNTHESIZER_DEFAULTS = Object.freeze({ maxPending: 32, timeoutMs: 10_000, idleMs: 60_000 });

export interface AudioSynthesizer {
  /** The WAV of `code` spoken in `language`; rejects with AUDIO_BUSY when the queue is full. */
  speak(code: string, language: AudioLanguage): Promise<Buffer>;
  /** Jobs queued or running. */
  readonly pending: number;
  close(): Promise<void>;
}

const WORKER_URL = new URL('./audio-worker.js', import.meta.url);

interface Waiting {
  resolve(wav: Buffer): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export function createAudioSynthesizer(options: AudioSynthesizerOptions = {}): AudioSynthesizer {
  const o = { ...AUDIO_SYNTHESIZER_DEFAULTS, ...options };
  let worker: Worker | null = null;
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
  const stop = (w: Worker) => {
    if (worker === w) worker = null;
    void w.terminate();
  };
  const start = (): Worker => {
    const w = new Worker(WORKER_URL);
    w.unref();
    w.on('message', (answer: AudioAnswer) => {
      const job = waiting.get(answer.id);
      if (job === undefined) return;
      waiting.delete(answer.id);
      clearTimeout(job.timer);
      if (answer.ok) job.resolve(Buffer.from(answer.wav));
      else job.reject(new Error(`audio synthesis failed: ${answer.message}`));
      if (waiting.size === 0) armIdle();
    });
    w.on('error', (err) => { stop(w); failAll(err); });
    w.on('exit', () => { if (worker === w) { worker = null; failAll(new Error('the audio thread exited')); } });
    return w;
  };
  const armIdle = () => {
    if (idle !== null) clearTimeout(idle);
    idle = setTimeout(() => {
      idle = null;
      if (worker !== null && waiting.size === 0) stop(worker);
    }, o.idleMs);
    idle.unref();
  };

  return {
    speak(code, language) {
      if (closed) return Promise.reject(new PalisadeError('NOT_READY'));
      if (waiting.size >= o.maxPending) return Promise.reject(new PalisadeError('AUDIO_BUSY'));
      if (idle !== null) { clearTimeout(idle); idle = null; }
      const w = (worker ??= start());
      const id = nextId++;
      return new Promise<Buffer>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`audio synthesis took over ${o.timeoutMs} ms`));
          // A stuck thread holds every later job: replace it.
          stop(w);
          failAll(new Error('the audio thread was replaced'));
        }, o.timeoutMs);
        waiting.set(id, { resolve, reject, timer });
        w.postMessage({ id, code, language } satisfies AudioJob);
      });
    },
    get pending() {
      return waiting.size;
    },
    async close() {
      closed = true;
      if (idle !== null) clearTimeout(idle);
      failAll(new PalisadeError('NOT_READY'));
      const w = worker;
      worker = null;
      if (w !== null) await w.terminate();
    },
  };
}
