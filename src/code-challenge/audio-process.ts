// Child-process entry of the audio synthesizer (audio.ts): loads mespeak (eSpeak compiled to
// JavaScript; GPL, see docs/code-challenge.md) and the four voices, then answers
// {id, code, language} with {id, ok: true, wav} or {id, ok: false, message} over the IPC channel.
// A clip takes about 100 ms of CPU: never on the event loop of a serving process.
// A process, not a worker thread: the emscripten build of eSpeak breaks on about its 80th call
// (mespeak's own comment: "eSpeak breaks sometimes on flushing streams, approx. every 80th call";
// its recovery is not wired up in this package), and here it broke by growing an array until V8
// aborted with a fatal error, which in a worker thread takes the whole serving process with it.
// So the engine is loaded afresh every RELOAD_EVERY calls, and whatever else might go wrong in it
// can only end this process (audio.ts starts another). It exits when its parent goes away.
import { randomInt } from 'node:crypto';
import { createRequire, type Module } from 'node:module';
import { fileURLToPath } from 'node:url';
import { AUDIO_LANGUAGES, spokenWords, VOICES, type AudioLanguage } from './speech.js';
import { encodeWav, mixChallenge, parseWav } from './wav.js';

export interface AudioJob {
  readonly id: number;
  readonly code: string;
  readonly language: AudioLanguage;
}
export type AudioAnswer =
  | { readonly id: number; readonly ok: true; readonly wav: Uint8Array }
  | { readonly id: number; readonly ok: false; readonly message: string };

interface MeSpeak {
  loadConfig(config: unknown): void;
  loadVoice(voice: unknown): void;
  speak(text: string, args: Record<string, unknown>): number[] | null;
}

/** mespeak's output rate. */
const SAMPLE_RATE = 22_050;
const PASS_PAUSE = new Int16Array(SAMPLE_RATE);
/** Calls of one eSpeak instance: safely below the ~80 after which it breaks (measured: the 80th). */
const RELOAD_EVERY = 60;

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send !== undefined) serve();

function serve(): void {
  // mespeak reports on the console ("Not in browser…"); this process prints nothing, it answers.
  for (const method of ['log', 'warn', 'info', 'error'] as const) console[method] = () => {};
  process.on('disconnect', () => process.exit(0));
  const require = createRequire(import.meta.url);
  const config = require('mespeak/src/mespeak_config.json') as unknown;
  const voices = AUDIO_LANGUAGES.map((language) => require(`mespeak/voices/${VOICES[language].file}`) as unknown);
  const path = require.resolve('mespeak');
  let meSpeak: MeSpeak;
  let calls = 0;
  const load = () => {
    // A fresh module instance is a fresh eSpeak (its index.js makes one when loaded); the compiled
    // ESpeak.js stays cached. The old module is dropped from the cache and from its parents' lists
    // so that its 50 MB heap can be collected.
    const old = require.cache[path];
    if (old !== undefined) {
      delete require.cache[path];
      // Its parent is the module createRequire made (not in the cache), which lists it as a child.
      const parents = [...(Object.values(require.cache) as (Module | undefined)[]), (old as Module & { parent?: Module | null }).parent];
      for (const m of parents) {
        const i = m?.children.indexOf(old) ?? -1;
        if (i >= 0) m!.children.splice(i, 1);
      }
    }
    meSpeak = require('mespeak') as MeSpeak;
    meSpeak.loadConfig(config);
    for (const voice of voices) meSpeak.loadVoice(voice);
    calls = 0;
    // The old engine's heap goes now rather than when V8 next feels pressure (audio.ts starts this
    // process with --expose-gc): one engine's memory at a time, not two or three.
    if (old !== undefined) (globalThis as { gc?: () => void }).gc?.();
  };
  load();

  const word = (text: string, voice: string): Int16Array => {
    if (calls >= RELOAD_EVERY) load();
    calls++;
    // A slightly different voice per word: pitch and speed vary, so no two clips of a code are alike.
    const bytes = meSpeak.speak(text, { rawdata: 'array', voice, pitch: randomInt(35, 66), speed: randomInt(125, 150) });
    if (bytes === null) throw new Error(`mespeak produced nothing for voice ${voice}`);
    return trimSilence(parseWav(Uint8Array.from(bytes)).samples);
  };

  process.on('message', (job: AudioJob) => {
    let answer: AudioAnswer;
    try {
      const voice = VOICES[job.language].id;
      const words = spokenWords(job.code, job.language);
      // The code twice (spoken anew: other pitches and speeds), a second of silence between the passes.
      const segments = [...words.map((w) => word(w, voice)), PASS_PAUSE, ...words.map((w) => word(w, voice))];
      answer = { id: job.id, ok: true, wav: encodeWav(mixChallenge(segments, SAMPLE_RATE, [250, 500])) };
    } catch (err) {
      answer = { id: job.id, ok: false, message: (err as Error).message };
    }
    process.send!(answer);
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
