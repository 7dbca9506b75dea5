// Code challenges, the parts without HTTP: the code and its alphabet, the keyed hash and its
// constant-time check, the audio token, the policy fields, the spoken words and the WAV mixing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PalisadeError } from '../../src/errors.js';
import {
  checkCode, CODE_ALPHABET, codeHash, deriveCodeKeys, generateCode, MAX_CODE_LENGTH, normalizeCode,
} from '../../src/code-challenge/code.js';
import { CODE_POLICY_DEFAULTS, parseCodePolicy } from '../../src/code-challenge/policy.js';
import { audioLanguage, AUDIO_LANGUAGES, spokenWords } from '../../src/code-challenge/speech.js';
import { MAX_TOKEN_LENGTH, openAudioToken, sealAudioToken } from '../../src/code-challenge/token.js';
import { encodeWav, mixChallenge, parseWav, wavSeconds } from '../../src/code-challenge/wav.js';
import { resolvePolicy } from '../../src/pow/policy.js';

const keys = deriveCodeKeys('code-challenge-test-secret-0123456789');
const otherKeys = deriveCodeKeys('another-code-challenge-secret-98765');
const NONCE = '0123456789abcdef0123456789abcdef';

test('the alphabet has no look-alikes and no duplicates', () => {
  assert.equal(new Set(CODE_ALPHABET).size, CODE_ALPHABET.length);
  for (const ch of '0O1IL5S8BGZUVDQ') assert.equal(CODE_ALPHABET.includes(ch), false, ch);
  assert.match(CODE_ALPHABET, /^[A-Z2-9]+$/);
});

test('generateCode: the length asked, only alphabet characters, every character drawn', () => {
  for (const length of [4, 5, MAX_CODE_LENGTH]) {
    const code = generateCode(length);
    assert.equal(code.length, length);
    assert.match(code, new RegExp(`^[${CODE_ALPHABET}]+$`));
  }
  const seen = new Map<string, number>();
  for (let i = 0; i < 2_000; i++) for (const ch of generateCode(5)) seen.set(ch, (seen.get(ch) ?? 0) + 1);
  assert.equal(seen.size, CODE_ALPHABET.length);
  // 10,000 draws over 21 characters: about 476 each; a biased draw would show far outside this band.
  for (const [ch, n] of seen) assert.ok(n > 350 && n < 620, `${ch}: ${n}`);
});

test('codeHash/checkCode: case-insensitive, spaces ignored; a wrong code, nonce, key or hash fails', () => {
  const hash = codeHash(keys, NONCE, 'K7MX3');
  assert.match(hash, /^[0-9a-f]{64}$/);
  assert.notEqual(codeHash(keys, NONCE.replace('0', '1'), 'K7MX3'), hash, 'bound to the nonce');
  for (const typed of ['K7MX3', 'k7mx3', 'K7mX3', ' k7 mx3 ']) assert.equal(checkCode(keys, NONCE, hash, typed), true, typed);
  for (const typed of ['K7MX4', 'K7MX', 'K7MX33', '', 'Κ7MX3' /* Greek kappa */, 'K7MX3\u200b']) {
    assert.equal(checkCode(keys, NONCE, hash, typed), false, JSON.stringify(typed));
  }
  assert.equal(checkCode(keys, 'ffffffffffffffffffffffffffffffff', hash, 'K7MX3'), false);
  assert.equal(checkCode(otherKeys, NONCE, hash, 'K7MX3'), false);
  assert.equal(checkCode(keys, NONCE, hash.slice(0, 62), 'K7MX3'), false);
  assert.equal(checkCode(keys, NONCE, 'zz'.repeat(32), 'K7MX3'), false);
  assert.equal(normalizeCode(' ab c '), 'ABC');
});

test('deriveCodeKeys refuses a short secret; different secrets give different keys', () => {
  assert.throws(() => deriveCodeKeys('short'), /at least 24/);
  assert.notDeepEqual(keys.hash, otherKeys.hash);
  assert.notDeepEqual(keys.hash, keys.token);
});

test('audio token: opens for its key only; tampering, truncation, other secrets and junk give null', () => {
  const content = { nonce: NONCE, expiresAt: 1_900_000_000, code: 'K7MX3' };
  const token = sealAudioToken(keys, 'key_a', content);
  assert.match(token, /^[A-Za-z0-9_-]+$/);
  assert.ok(token.length <= MAX_TOKEN_LENGTH);
  assert.deepEqual(openAudioToken(keys, 'key_a', token), content);
  assert.notEqual(sealAudioToken(keys, 'key_a', content), token, 'a fresh IV each time');
  assert.equal(openAudioToken(keys, 'key_b', token), null);
  assert.equal(openAudioToken(otherKeys, 'key_a', token), null);
  const bytes = Buffer.from(token, 'base64url');
  for (const i of [0, 12, 20, 33, bytes.length - 1]) {
    const t = Buffer.from(bytes);
    t[i]! ^= 1;
    assert.equal(openAudioToken(keys, 'key_a', t.toString('base64url')), null, `byte ${i}`);
  }
  for (const junk of ['', 'a', token.slice(0, -4), `${token}AAAA`, token.replace(/.$/, '+'), 'A'.repeat(MAX_TOKEN_LENGTH + 1), '../../etc']) {
    assert.equal(openAudioToken(keys, 'key_a', junk), null, junk.slice(0, 20));
  }
  const long = sealAudioToken(keys, 'key_a', { ...content, code: 'K'.repeat(MAX_CODE_LENGTH) });
  assert.ok(long.length <= MAX_TOKEN_LENGTH, `${long.length} > ${MAX_TOKEN_LENGTH}`);
  assert.equal(openAudioToken(keys, 'key_a', long)!.code, 'K'.repeat(MAX_CODE_LENGTH));
});

test('policy: codeChallenge, codeLength, codeThreshold validated with the rest of the challenge policy', () => {
  assert.equal(parseCodePolicy(null), CODE_POLICY_DEFAULTS);
  assert.deepEqual(CODE_POLICY_DEFAULTS, { mode: 'never', length: 5, threshold: 1 });
  assert.deepEqual(parseCodePolicy({ codeChallenge: 'auto', codeThreshold: 1.5 }), { mode: 'auto', length: 5, threshold: 1.5 });
  assert.deepEqual(parseCodePolicy({ codeChallenge: 'always', codeLength: 7 }), { mode: 'always', length: 7, threshold: 1 });
  const limits = { maxMemoryBytes: 128 * 1024 * 1024 };
  assert.equal(resolvePolicy({ codeChallenge: 'always', codeLength: 6, codeThreshold: 0 }, limits).algorithm, 'SHA-256');
  for (const bad of [
    { codeChallenge: 'sometimes' }, { codeChallenge: true }, { codeLength: 3 }, { codeLength: 11 }, { codeLength: 5.5 },
    { codeLength: '5' }, { codeThreshold: -0.1 }, { codeThreshold: 3.1 }, { codeThreshold: Number.NaN }, { codeThreshold: '1' },
    { version: 1, codeChallenge: 'always' }, { version: 1, codeChallenge: 'auto' },
  ]) {
    assert.throws(() => resolvePolicy(bad, limits), (e: unknown) => e instanceof PalisadeError && e.code === 'POLICY_INVALID', JSON.stringify(bad));
  }
  assert.equal(resolvePolicy({ version: 1, codeChallenge: 'never' }, limits).version, 1);
});

test('speech: one word per character in each language; language tags fall back to English', () => {
  for (const language of AUDIO_LANGUAGES) {
    const words = spokenWords(CODE_ALPHABET, language);
    assert.equal(words.length, CODE_ALPHABET.length, language);
    assert.equal(new Set(words).size, words.length, `${language}: every character sounds different`);
  }
  assert.deepEqual(spokenWords('K7', 'de'), ['ka', 'sieben']);
  assert.deepEqual(spokenWords('K7', 'en'), ['kay', 'seven']);
  for (const [tag, language] of [
    ['de', 'de'], ['de-CH', 'de'], ['FR', 'fr'], ['es_MX', 'es'], ['en-GB', 'en'], ['ja', 'en'], ['', 'en'], ['x', 'en'],
    ['dexx', 'en'], ['de;rm -rf', 'en'], [undefined, 'en'],
  ] as const) assert.equal(audioLanguage(tag), language, String(tag));
});

test('wav: parse/encode round trip; the mix halves the rate, keeps the speech audible and fills silences with noise', () => {
  const tone = new Int16Array(22_050).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 22_050)));
  const wav = encodeWav({ sampleRate: 22_050, samples: tone });
  assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
  assert.deepEqual(parseWav(wav).samples, tone);
  assert.equal(wavSeconds(wav), 1);
  assert.throws(() => parseWav(Buffer.from('RIFF0000WAVE')), /no data chunk/);
  assert.throws(() => parseWav(Buffer.from('not a wav file')), /RIFF/);

  const mixed = mixChallenge([tone, tone], 22_050, [300, 300]);
  assert.equal(mixed.sampleRate, 11_025);
  // 0.4 s lead + 2 × (1 s + 0.3 s) at half the rate.
  assert.equal(mixed.samples.length, Math.floor((0.4 * 22_050 + 2 * (22_050 + 0.3 * 22_050)) / 2));
  const rms = (from: number, to: number) => {
    let sum = 0;
    for (let i = from; i < to; i++) sum += mixed.samples[i]! ** 2;
    return Math.sqrt(sum / (to - from));
  };
  const lead = rms(0, 4_000);
  const speech = rms(5_000, 9_000);
  assert.ok(lead > 300, `noise in the silence: RMS ${lead}`);
  assert.ok(speech > 4 * lead, `speech ${speech} well above the noise ${lead}`);
});
