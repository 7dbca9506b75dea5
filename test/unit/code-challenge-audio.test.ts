// The audio synthesizer for real (mespeak in its child process) and what code challenges cost the
// event loop: a clip in each language is a plausible WAV; hundreds of eSpeak calls in a row (one
// instance breaks at about its 80th); a killed child is replaced; the event loop does next to no
// work for a clip, and an image is rendered inline well within 5 ms (figures printed for
// docs/code-challenge.md).
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { test } from 'node:test';
import { createAudioSynthesizer } from '../../src/code-challenge/audio.js';
import { createCodeChallenges } from '../../src/code-challenge/index.js';
import { AUDIO_LANGUAGES } from '../../src/code-challenge/speech.js';
import { parseWav } from '../../src/code-challenge/wav.js';
import { PalisadeError } from '../../src/errors.js';

test('each language: a 16-bit mono WAV at 11,025 Hz of a plausible length, speech above the noise', async () => {
  const synth = createAudioSynthesizer();
  try {
    for (const language of AUDIO_LANGUAGES) {
      const started = performance.now();
      const wav = await synth.speak('K7MX3', language);
      const ms = performance.now() - started;
      const pcm = parseWav(wav);
      const seconds = pcm.samples.length / pcm.sampleRate;
      console.log(`audio ${language}: ${seconds.toFixed(1)} s, ${wav.length} bytes, made in ${ms.toFixed(0)} ms`);
      assert.equal(pcm.sampleRate, 11_025);
      // Ten words and the pauses: a clip far shorter would have lost words, far longer would be eSpeak spelling garbage.
      assert.ok(seconds > 4 && seconds < 16, `${language}: ${seconds} s`);
      // Loudest 100 ms window against the quietest: speech stands out of the noise bed.
      const window = 1_102;
      const levels: number[] = [];
      for (let i = 0; i + window <= pcm.samples.length; i += window) {
        let sum = 0;
        for (let j = i; j < i + window; j++) sum += pcm.samples[j]! ** 2;
        levels.push(Math.sqrt(sum / window));
      }
      levels.sort((a, b) => a - b);
      assert.ok(levels.at(-1)! > 5 * levels[0]!, `${language}: loudest ${levels.at(-1)} vs quietest ${levels[0]}`);
      assert.ok(levels[0]! > 200, `${language}: the silences carry noise (${levels[0]})`);
    }
  } finally {
    await synth.close();
  }
});

test('two clips of the same code differ (pitch, speed, gaps and noise are drawn anew)', async () => {
  const synth = createAudioSynthesizer();
  try {
    const [a, b] = await Promise.all([synth.speak('ACE79', 'en'), synth.speak('ACE79', 'en')]);
    assert.notDeepEqual(a, b);
  } finally {
    await synth.close();
  }
});

test('30 clips in a row: 300 eSpeak calls, past the ~80 after which one engine instance breaks', async () => {
  const synth = createAudioSynthesizer();
  try {
    const started = performance.now();
    for (let i = 0; i < 30; i++) {
      const pcm = parseWav(await synth.speak('WXY23', AUDIO_LANGUAGES[i % 4]!));
      const seconds = pcm.samples.length / pcm.sampleRate;
      assert.ok(seconds > 4 && seconds < 16, `clip ${i}: ${seconds} s`);
    }
    console.log(`30 clips one after another: ${((performance.now() - started) / 30).toFixed(0)} ms each on average (engine reloads included)`);
  } finally {
    await synth.close();
  }
});

test('a child that dies fails the clip it was making, and the next clip gets a new child', async () => {
  const synth = createAudioSynthesizer();
  try {
    await synth.speak('ACE79', 'en');
    const pid = synth.pid!;
    const dying = synth.speak('ACE79', 'de');
    process.kill(pid, 'SIGKILL');
    await assert.rejects(dying, /audio process exited/);
    const wav = await synth.speak('ACE79', 'fr');
    assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
    assert.notEqual(synth.pid, pid);
  } finally {
    await synth.close();
  }
  assert.equal(synth.pid, undefined);
});

test('the queue is bounded (AUDIO_BUSY), and close() fails what waits and ends the child', async () => {
  const synth = createAudioSynthesizer({ maxPending: 2 });
  const first = assert.rejects(synth.speak('ACE79', 'en'), { code: 'NOT_READY' });
  const second = assert.rejects(synth.speak('ACE79', 'de'), { code: 'NOT_READY' });
  await assert.rejects(synth.speak('ACE79', 'fr'), (e: unknown) => e instanceof PalisadeError && e.code === 'AUDIO_BUSY' && e.statusCode === 503);
  assert.equal(synth.pending, 2);
  await synth.close();
  await first;
  await second;
  await assert.rejects(synth.speak('ACE79', 'en'), { code: 'NOT_READY' });
});

// The machine the tests run on is shared (a load of 10+ on 2 cores is common): any 0.2 ms of CPU
// now and then takes 10 ms of wall time there, so what is asserted is the work done on the event
// loop (median times, event-loop utilisation), and the wall-clock figures are printed beside a
// baseline taken in the same conditions.
test('code challenges cost the event loop well under 5 ms: the image inline, the audio in its process', async () => {
  const synth = createAudioSynthesizer();
  // The first issue parses the font (once per process; src/routes/api.ts does it at start-up).
  let t = performance.now();
  const codes = createCodeChallenges('event-loop-test-secret-0123456789abcdef');
  const firstIssueMs = performance.now() - t;
  const issueMs: number[] = [];
  for (let i = 0; i < 500; i++) {
    t = performance.now();
    codes.issue('key_x', '0123456789abcdef0123456789abcdef', 1_900_000_000, 5);
    issueMs.push(performance.now() - t);
  }
  issueMs.sort((a, b) => a - b);
  const [p50, p99] = [issueMs[250]!, issueMs[495]!];
  console.log(`issue (code, hash, token, image): start-up ${firstIssueMs.toFixed(1)} ms (font parse), then p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(2)} ms (wall clock, shared machine)`);
  assert.ok(p50 < 1, `median issue ${p50} ms`);

  try {
    await synth.speak('ACE79', 'en'); // the child's start (loading eSpeak) is off the loop too, but not part of this measure
    const baseline = monitorEventLoopDelay({ resolution: 1 });
    baseline.enable();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    baseline.disable();

    const delay = monitorEventLoopDelay({ resolution: 1 });
    const elu = performance.eventLoopUtilization();
    delay.enable();
    const started = performance.now();
    await Promise.all(['K7MX2', 'K7MX3', 'K7MX4', 'K7MX6', 'K7MX7', 'K7MX9'].map((c, i) => synth.speak(c, AUDIO_LANGUAGES[i % 4]!)));
    const ms = performance.now() - started;
    delay.disable();
    const used = performance.eventLoopUtilization(elu);
    console.log(`6 clips in ${ms.toFixed(0)} ms: the event loop was busy ${used.active.toFixed(1)} ms of it (utilisation ${used.utilization.toFixed(3)}); ` +
      `loop delay max ${(delay.max / 1e6).toFixed(1)} ms, against ${(baseline.max / 1e6).toFixed(1)} ms idle on the same machine`);
    // Everything the loop does for a clip is sending the job and reading the answer's bytes off the IPC channel.
    assert.ok(used.active < 6 * 5, `the event loop worked ${used.active} ms for 6 clips`);
  } finally {
    await synth.close();
  }
});
