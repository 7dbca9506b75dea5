// PCM WAV in and out, and the noise mixed into the audio challenge. mespeak writes 16-bit mono
// RIFF/WAVE at 22,050 Hz; the challenge is sent at 11,025 Hz (half the bytes, still above telephone
// quality) with a low-passed noise bed under the whole clip, so that the silences carry no clean
// edges and a recogniser hears speech in noise, as a person does.
import { randomInt } from 'node:crypto';

export interface Pcm {
  readonly sampleRate: number;
  readonly samples: Int16Array;
}

/** The samples of a 16-bit mono PCM WAV (the chunks in any order); throws on anything else. */
export function parseWav(bytes: Uint8Array): Pcm {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  let sampleRate = 0;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('latin1', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (buf.readUInt16LE(body) !== 1 || buf.readUInt16LE(body + 2) !== 1 || buf.readUInt16LE(body + 14) !== 16) {
        throw new Error('not 16-bit mono PCM');
      }
      sampleRate = buf.readUInt32LE(body + 4);
    } else if (id === 'data') {
      if (sampleRate === 0) throw new Error('data before fmt');
      const end = Math.min(buf.length, body + size) & ~1;
      const samples = new Int16Array((end - body) / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = buf.readInt16LE(body + i * 2);
      return { sampleRate, samples };
    }
    offset = body + size + (size & 1);
  }
  throw new Error('no data chunk');
}

/** A 16-bit mono PCM WAV file. */
export function encodeWav(pcm: Pcm): Buffer {
  const data = pcm.samples.length * 2;
  const out = Buffer.allocUnsafe(44 + data);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(36 + data, 4);
  out.write('WAVEfmt ', 8, 'latin1');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(pcm.sampleRate, 24);
  out.writeUInt32LE(pcm.sampleRate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'latin1');
  out.writeUInt32LE(data, 40);
  for (let i = 0; i < pcm.samples.length; i++) out.writeInt16LE(pcm.samples[i]!, 44 + i * 2);
  return out;
}

/** Duration in seconds of a WAV written by encodeWav (the tests read the served clip with it). */
export function wavSeconds(bytes: Uint8Array): number {
  const pcm = parseWav(bytes);
  return pcm.samples.length / pcm.sampleRate;
}

export interface MixOptions {
  /** Peak of the speech after normalising, as a fraction of full scale. */
  readonly speechPeak: number;
  /** RMS of the noise bed, as a fraction of full scale. */
  readonly noiseRms: number;
}

export const MIX_DEFAULTS: MixOptions = Object.freeze({ speechPeak: 0.6, noiseRms: 0.03 });

/**
 * Joins the spoken segments (all at `rate`) with random gaps of `gapMs`, halves the sample rate
 * (the mean of each pair, a simple low-pass before decimation), normalises the speech and mixes in
 * the noise bed.
 */
export function mixChallenge(segments: readonly Int16Array[], rate: number, gapMs: readonly [number, number], options: MixOptions = MIX_DEFAULTS): Pcm {
  const gaps = segments.map(() => Math.round((randomInt(gapMs[0], gapMs[1] + 1) * rate) / 1000));
  const lead = Math.round(0.4 * rate);
  let total = lead;
  for (let i = 0; i < segments.length; i++) total += segments[i]!.length + gaps[i]!;
  const joined = new Float32Array(total);
  let at = lead;
  let peak = 1;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    for (let j = 0; j < s.length; j++) {
      const v = s[j]!;
      joined[at + j] = v;
      if (v > peak) peak = v;
      else if (-v > peak) peak = -v;
    }
    at += s.length + gaps[i]!;
  }
  const outRate = Math.floor(rate / 2);
  const out = new Int16Array(Math.floor(total / 2));
  const gain = (options.speechPeak * 32767) / peak;
  // Uniform noise summed three times is near Gaussian (variance 3/12 of the unit range): scaled to the RMS asked.
  const noiseScale = (options.noiseRms * 32767) / Math.sqrt(3 / 12);
  let lowPassed = 0;
  for (let i = 0; i < out.length; i++) {
    const white = (Math.random() + Math.random() + Math.random() - 1.5) * noiseScale;
    // A one-pole low-pass at about a third of the band: a hiss that sits over the voice, not above it.
    lowPassed += 0.45 * (white - lowPassed);
    const speech = ((joined[2 * i]! + joined[2 * i + 1]!) / 2) * gain;
    const v = Math.round(speech + lowPassed * 1.6);
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return { sampleRate: outRate, samples: out };
}
