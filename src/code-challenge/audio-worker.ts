// Worker-thread entry of the audio synthesizer (audio.ts): loads mespeak (eSpeak compiled to
// JavaScript, GPL-3.0, see docs/code-challenge.md) and the four voices once, then answers
// {id, code, language} with {id, ok: true, wav} (the WAV's bytes transferred, not copied) or
// {id, ok: false, message}. A clip takes 100–300 ms of CPU: never on the event loop.
// Runs nothing at import in the main thread.
import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { isMainThread, parentPort } from 'node:worker_threads';
import { AUDIO_LANGUAGES, spokenWords, VOICES, type AudioLanguage } from './speech.js';
import { encodeWav, mixChallenge, parseWav } from './wav.js';

export interface AudioJob {
  readonly id: number;
  readonly code: string;
  readonly language: AudioLanguage;
}
export type AudioAnswer =
  | { readonly id: number; readonly ok: true; readonly wav: ArrayBuffer }
  | { readonly id: number; readonly ok: false; readonly message: string };

interface MeSpeak {
  loadConfig(config: unknown): void;
  loadVoice(voice: unknown): void;
  speak(text: string, args: Record<string, unknown>): number[] | null;
}

/** mespeak's output rate. */
const SAMPLE_RATE = 22_050;
const PASS_PAUSE = new Int16Array(SAMPLE_RATE);

if (!isMainThread && parentPort !== null) {
  const port = parentPort;
  // mespeak reports on the console ("Not in browser…"); this thread prints nothing, it answers.
  for (const method of ['log', 'warn', 'info', 'error'] as const) console[method] = () => {};
  const require = createRequire(import.meta.url);
  const meSpeak = require('mespeak') as MeSpeak;
  meSpeak.loadConfig(require('mespeak/src/mespeak_config.json'));
  for (const language of AUDIO_LANGUAGES) meSpeak.loadVoice(require(`mespeak/voices/${VOICES[language].file}`));

  const word = (text: string, voice: string): Int16Array => {
    // A slightly different voice per word: pitch and speed vary, so no two clips of a code are alike.
    const bytes = meSpeak.speak(text, { rawdata: 'array', voice, pitch: randomInt(35, 66), speed: randomInt(125, 150) });
    if (bytes === null) throw new Error(`mespeak produced nothing for voice ${voice}`);
    const pcm = parseWav(Uint8Array.from(bytes));
    return trimSilence(pcm.samples);
  };

  port.on('message', (job: AudioJob) => {
    try {
      const voice = VOICES[job.language].id;
      const words = spokenWords(job.code, job.language);
      const once = words.map((w) => word(w, voice));
      // The code twice (spoken anew: other pitches and speeds), a second of silence between the passes.
      const segments = [...once, PASS_PAUSE, ...words.map((w) => word(w, voice))];
      const pcm = mixChallenge(segments, SAMPLE_RATE, [250, 500]);
      const wav = encodeWav(pcm);
      const out = wav.buffer.slice(wav.byteOffset, wav.byteOffset + wav.byteLength) as ArrayBuffer;
      port.postMessage({ id: job.id, ok: true, wav: out } satisfies AudioAnswer, [out]);
    } catch (err) {
      port.postMessage({ id: job.id, ok: false, message: (err as Error).message } satisfies AudioAnswer);
    }
  });
}

/** The samples between the first and the last that rise above the floor (eSpeak pads each word with silence). */
function trimSilence(samples: Int16Array): Int16Array {
  const floor = 300;
  let start = 0;
  while (start < samples.length && Math.abs(samples[start]!) < floor) start++;
  let end = samples.length;
  while (end > start && Math.abs(samples[end - 1]!) < floor) end--;
  return samples.subarray(start, end);
}
