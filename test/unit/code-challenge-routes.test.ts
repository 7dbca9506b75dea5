// Code challenges through the route handlers: GET /v1/challenge adds codeChallenge for keys set to
// "always", and for "auto" from the key's risk threshold on; POST /v1/verify checks the code after
// the proof of work (INCORRECT_CODE spends the challenge); GET /v1/challenge/audio speaks only a
// valid, unexpired, unsubmitted challenge's code, for its own key. Malformed input is a 400.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Challenge } from 'altcha-lib';
import { createCodeChallenges, type AudioSynthesizer } from '../../src/code-challenge/index.js';
import { PalisadeError } from '../../src/errors.js';
import type { Handler, Reply, RequestContext } from '../../src/http/types.js';
import type { ApiKey } from '../../src/keys/types.js';
import type { CodeVerifier } from '../../src/pow/verify.js';
import { preparePowSecrets } from '../../src/pow/secrets.js';
import { createChallengeHandler } from '../../src/routes/challenge.js';
import { createChallengeVerifyHandler } from '../../src/routes/challenge-verify.js';
import { createAudioHandler, type AudioRouteOptions } from '../../src/routes/code-audio.js';
import { createVerifyHandler } from '../../src/routes/verify.js';
import { readCode } from '../helpers/code-challenge.js';
import {
  browserAuthorizer, encodePayload, fakeRequest, keyFinder, memoryClaimOnce, serverAuthorizer, solveV2, testKey,
} from '../helpers/pow-test-server.js';

const SECRET = 'code-routes-test-secret-0123456789abcdef';
const secrets = preparePowSecrets('code-routes-test-hmac-secret-012345');
const cheap = { counterMin: 0, counterMax: 10 };
const keyNever = testKey({ challengePolicy: cheap });
const keyAlways = testKey({ challengePolicy: { ...cheap, codeChallenge: 'always' } });
const keyLong = testKey({ challengePolicy: { ...cheap, codeChallenge: 'always', codeLength: 7 } });
const keyAuto = testKey({ challengePolicy: { ...cheap, codeChallenge: 'auto' } });
const keyAuto2 = testKey({ challengePolicy: { ...cheap, codeChallenge: 'auto', codeThreshold: 2 } });
const keyProb = testKey({ challengePolicy: { algorithm: 'PBKDF2/SHA-256', mode: 'probabilistic', cost: 50, keyPrefixLength: 1, codeChallenge: 'always' } });
const keys = [keyNever, keyAlways, keyLong, keyAuto, keyAuto2, keyProb];

interface Harness {
  challenge: Handler;
  verify: Handler;
  challengeVerify: Handler;
  audio: Handler;
  spent: Set<string>;
  spoken: [string, string][];
  riskAsked: number;
  verifications: [boolean, string | null][];
}

function harness(risk: number | Promise<number> = 0, audioOptions: AudioRouteOptions = { delayMs: 0 }, rateLimit?: () => void): Harness {
  const codeChallenges = createCodeChallenges(SECRET);
  const claimOnce = memoryClaimOnce();
  const spent = new Set<string>();
  const code: CodeVerifier = { check: codeChallenges.check, spent: (nonce) => { spent.add(nonce); } };
  const h: Harness = {
    spent, spoken: [], riskAsked: 0, verifications: [],
    challenge: createChallengeHandler({
      authorizeBrowser: browserAuthorizer(keys), secrets, penalty: () => 0, onChallenge: () => {}, codeChallenges,
      risk: () => { h.riskAsked++; return risk; },
    }),
    verify: createVerifyHandler({
      authorizeBrowser: browserAuthorizer(keys), secrets, claimOnce, penalty: () => 0, code,
      onVerify: (ok, reason) => { h.verifications.push([ok, reason]); }, countUsage: () => {},
    }),
    challengeVerify: createChallengeVerifyHandler({
      authorizeServer: serverAuthorizer(keys), findKey: keyFinder(keys), secrets, claimOnce,
      onVerify: () => {}, countUsage: () => {}, chargePlan: () => undefined,
    }),
    audio: undefined as unknown as Handler,
  };
  const synthesizer: AudioSynthesizer = {
    speak: async (c, language) => { h.spoken.push([c, language]); return Buffer.from(`RIFF-${c}-${language}`); },
    pending: 0,
    pid: undefined,
    close: async () => {},
  };
  h.audio = createAudioHandler({
    authorizeBrowser: browserAuthorizer(keys), codeChallenges, synthesizer,
    rateLimit: rateLimit ?? (() => {}), spent: (nonce) => spent.has(nonce),
  }, audioOptions);
  return h;
}

type CodeJson = Challenge & { codeChallenge?: { image: string; audio: string; length: number } };
const parse = (r: Reply) => JSON.parse(r.body.toString()) as Record<string, unknown>;
const challengeOf = async (h: Harness, key: ApiKey): Promise<{ body: string; json: CodeJson }> => {
  const reply = await h.challenge(fakeRequest({ rawQuery: `apiKey=${key.id}` }));
  assert.equal(reply.status, 200);
  const body = reply.body.toString();
  return { body, json: JSON.parse(body) as CodeJson };
};
const verify = (h: Harness, key: ApiKey, body: Record<string, unknown>) =>
  h.verify(fakeRequest({ method: 'POST', rawQuery: `apiKey=${key.id}`, headers: { 'content-type': 'application/json' }, body }));
const audioRequest = (h: Harness, query: string): Promise<Reply> => Promise.resolve(h.audio(fakeRequest({ rawQuery: query })));
const audioQuery = (json: CodeJson) => new URL(json.codeChallenge!.audio, 'http://x').search.slice(1);

test('a key without a code challenge: no codeChallenge, no codeHash, and the risk is never asked', async () => {
  const h = harness(3);
  const { json } = await challengeOf(h, keyNever);
  assert.equal(json.codeChallenge, undefined);
  assert.deepEqual(json.parameters.data, { apiKey: keyNever.id });
  assert.equal(h.riskAsked, 0);
  const { payload } = await solveV2(JSON.stringify(json));
  assert.equal(parse(await verify(h, keyNever, { payload, code: 'ANYTHING' })).verified, true, 'a code sent anyway is ignored');
});

test('"always": codeChallenge {audio, image, length} for the widget, the hash signed into data.codeHash', async () => {
  const h = harness();
  const { json, body } = await challengeOf(h, keyAlways);
  const cc = json.codeChallenge!;
  assert.deepEqual(Object.keys(cc), ['audio', 'image', 'length']);
  assert.equal(cc.length, 5);
  assert.match(cc.audio, new RegExp(`^/v1/challenge/audio\\?apiKey=${keyAlways.id}&token=[A-Za-z0-9_-]+$`));
  assert.match(cc.image, /^data:image\/svg\+xml;base64,[A-Za-z0-9+/]+=*$/);
  const svg = Buffer.from(cc.image.split(',')[1]!, 'base64').toString('utf8');
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="180" height="50"/);
  assert.doesNotMatch(svg, /<text|font-family|href=|url\((?!#w\))/, 'outlines only: no text, fonts or outside references');
  assert.deepEqual(Object.keys(json.parameters.data!), ['apiKey', 'codeHash']);
  assert.match(String(json.parameters.data!.codeHash), /^[0-9a-f]{64}$/);
  assert.equal(h.riskAsked, 0, '"always" needs no risk');
  const code = readCode(SECRET, keyAlways.id, body);
  assert.match(code, /^[ACEFHJKMNPRTWXY234679]{5}$/);
  const long = await challengeOf(h, keyLong);
  assert.equal(long.json.codeChallenge!.length, 7);
  assert.equal(readCode(SECRET, keyLong.id, long.body).length, 7);
});

test('"auto": a clean client (risk 0) gets none; from the threshold (default 1, or the key\'s own) on, a code', async () => {
  for (const [risk, key, expected] of [
    [0, keyAuto, false], [0.99, keyAuto, false], [1, keyAuto, true], [2.5, keyAuto, true],
    [1.5, keyAuto2, false], [2, keyAuto2, true], [Promise.resolve(1.2), keyAuto, true], [Promise.resolve(0.3), keyAuto, false],
  ] as const) {
    const h = harness(risk);
    const { json } = await challengeOf(h, key);
    assert.equal(json.codeChallenge !== undefined, expected, `risk ${String(await risk)} on ${key === keyAuto ? 'threshold 1' : 'threshold 2'}`);
    assert.equal('codeHash' in json.parameters.data!, expected);
    assert.equal(h.riskAsked, 1);
  }
});

test('verify: the right code in any case verifies; the server payload says nothing of the code', async () => {
  const h = harness();
  const { body } = await challengeOf(h, keyAlways);
  const code = readCode(SECRET, keyAlways.id, body);
  const { payload } = await solveV2(body);
  const reply = await verify(h, keyAlways, { payload, code: ` ${code.toLowerCase()} ` });
  const json = parse(reply);
  assert.equal(json.verified, true, JSON.stringify(json));
  assert.doesNotMatch(Buffer.from(String(json.payload), 'base64').toString(), new RegExp(code));
  assert.equal(h.spent.size, 1, 'the audio route is told the challenge is spent');
  // Spent: the same payload again is a replay.
  assert.deepEqual(parse(await verify(h, keyAlways, { payload, code })), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
});

test('verify: a wrong or missing code is INCORRECT_CODE and spends the challenge; the right code cannot follow', async () => {
  const h = harness();
  for (const wrong of [{ code: 'AAAAA' }, {}, { code: null }, { code: '' }, { code: 'é' }]) {
    const { body } = await challengeOf(h, keyAlways);
    const code = readCode(SECRET, keyAlways.id, body);
    const { payload } = await solveV2(body);
    assert.deepEqual(parse(await verify(h, keyAlways, { payload, ...wrong })), { verified: false, reason: 'INCORRECT_CODE' }, JSON.stringify(wrong));
    assert.deepEqual(parse(await verify(h, keyAlways, { payload, code })), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
  }
  assert.deepEqual(h.verifications.filter(([, r]) => r === 'INCORRECT_CODE').length, 5);
  // Probabilistic challenges carry it the same way.
  const { body } = await challengeOf(h, keyProb);
  const { payload } = await solveV2(body);
  assert.equal(parse(await verify(h, keyProb, { payload, code: readCode(SECRET, keyProb.id, body) })).verified, true);
});

test('verify: a wrong solution with the right code is INVALID_SOLUTION; an altered or removed codeHash breaks the signature', async () => {
  const h = harness();
  const { body } = await challengeOf(h, keyAlways);
  const code = readCode(SECRET, keyAlways.id, body);
  const solved = await solveV2(body);
  const key = solved.solution.derivedKey;
  const wrongKey = `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`;
  const wrongSolution = encodePayload({ challenge: solved.challenge, solution: { ...solved.solution, derivedKey: wrongKey } });
  assert.deepEqual(parse(await verify(h, keyAlways, { payload: wrongSolution, code })), { verified: false, reason: 'INVALID_SOLUTION' });

  const other = await challengeOf(h, keyAlways);
  const s2 = await solveV2(other.body);
  const data = s2.challenge.parameters.data as Record<string, string>;
  const { codeHash: _, ...without } = data;
  for (const altered of [{ ...data, codeHash: 'a'.repeat(64) }, without]) {
    const challenge = { ...s2.challenge, parameters: { ...s2.challenge.parameters, data: altered } };
    const payload = encodePayload({ challenge, solution: s2.solution });
    assert.deepEqual(parse(await verify(h, keyAlways, { payload, code: readCode(SECRET, keyAlways.id, other.body) })), { verified: false, reason: 'INVALID_SIGNATURE' });
  }
});

test('POST /challenge/verify: a widget payload of a code challenge fails INCORRECT_CODE (the code goes to /v1/verify)', async () => {
  const h = harness();
  const { body } = await challengeOf(h, keyAlways);
  const { payload } = await solveV2(body);
  const reply = await h.challengeVerify(fakeRequest({
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${keyAlways.secret}` }, body: { payload },
  }));
  assert.deepEqual(parse(reply), { verified: false, reason: 'INCORRECT_CODE' });
});

test('verify: a code that is not a string, too long or has control characters is 400 INVALID_PARAMETER, and spends nothing', async () => {
  const h = harness();
  const { body } = await challengeOf(h, keyAlways);
  const code = readCode(SECRET, keyAlways.id, body);
  const { payload } = await solveV2(body);
  for (const bad of [
    5, 12345, true, ['K7MX3'], { code }, 'A'.repeat(33), 'A'.repeat(10_000), `${code}\u0000`, `\n${code}`, `${code.slice(0, 2)}\t${code.slice(2)}`,
    `${code}\u007f`, `${code}\u0085`, '\u001b[31m',
  ]) {
    await assert.rejects(async () => verify(h, keyAlways, { payload, code: bad }), (e: unknown) =>
      e instanceof PalisadeError && e.code === 'INVALID_PARAMETER' && e.statusCode === 400, JSON.stringify(bad).slice(0, 40));
  }
  assert.equal(h.spent.size, 0);
  assert.equal(parse(await verify(h, keyAlways, { payload, code: 'A'.repeat(32) })).reason, 'INCORRECT_CODE', '32 characters is still an answer');
});

test('audio: speaks the code in the language asked (English for anything else), as audio/wav, not cached', async () => {
  const h = harness();
  const { body, json } = await challengeOf(h, keyAlways);
  const code = readCode(SECRET, keyAlways.id, body);
  const query = audioQuery(json);
  for (const [language, expected] of [[null, 'en'], ['de', 'de'], ['fr-CA', 'fr'], ['es', 'es'], ['ja', 'en'], ['%00', 'en'], ['x'.repeat(500), 'en']] as const) {
    const reply = await audioRequest(h, language === null ? query : `${query}&language=${language}`);
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.headers, { 'content-type': 'audio/wav', 'cache-control': 'no-store', 'content-language': expected });
    assert.equal(reply.body.toString(), `RIFF-${code}-${expected}`);
  }
});

test('audio: 400 without a token, 404 for a forged token or another key\'s, 410 expired or submitted', async () => {
  const h = harness();
  const { body, json } = await challengeOf(h, keyAlways);
  const query = audioQuery(json);
  const token = new URLSearchParams(query).get('token')!;
  const rejects = (q: string, code: string, status: number) =>
    assert.rejects(audioRequest(h, q), (e: unknown) => e instanceof PalisadeError && e.code === code && e.statusCode === status, q.slice(0, 80));
  await rejects(`apiKey=${keyAlways.id}`, 'INVALID_PARAMETER', 400);
  await rejects(`apiKey=${keyAlways.id}&token=`, 'INVALID_PARAMETER', 400);
  await rejects(`token=${token}`, 'API_KEY_REQUIRED', 401);
  for (const forged of ['AAAA', token.slice(0, -2), '%E2%80%AE%00', `${token}%00`, `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`, 'x'.repeat(5000), '%ff%fe']) {
    await rejects(`apiKey=${keyAlways.id}&token=${forged}`, 'CODE_CHALLENGE_NOT_FOUND', 404);
  }
  await rejects(`apiKey=${keyLong.id}&token=${token}`, 'CODE_CHALLENGE_NOT_FOUND', 404);
  // A repeated token: the first one counts (as everywhere in the query).
  await rejects(`apiKey=${keyAlways.id}&token=forged&token=${token}`, 'CODE_CHALLENGE_NOT_FOUND', 404);
  assert.equal(h.spoken.length, 0);

  const later = harness(0, { delayMs: 0, now: () => Date.now() + 21 * 60_000 });
  await assert.rejects(audioRequest(later, query), { code: 'CODE_CHALLENGE_EXPIRED', statusCode: 410 });

  const { payload } = await solveV2(body);
  assert.equal(parse(await verify(h, keyAlways, { payload, code: 'WRONG' })).reason, 'INCORRECT_CODE');
  await rejects(query, 'CODE_CHALLENGE_SOLVED', 410);
  assert.equal(h.spoken.length, 0);
});

test('audio: the rate limit refuses before anything else; the answer waits AUDIO_CHALLENGE_DELAY from the request', async () => {
  let allowed = 1;
  const limited = harness(0, { delayMs: 0 }, () => { if (allowed-- <= 0) throw new PalisadeError('RATE_LIMITED', undefined, 600); });
  const { json } = await challengeOf(limited, keyAlways);
  assert.equal((await audioRequest(limited, audioQuery(json))).status, 200);
  await assert.rejects(audioRequest(limited, audioQuery(json)), (e: unknown) => e instanceof PalisadeError && e.code === 'RATE_LIMITED' && e.retryAfter === 600);
  await assert.rejects(audioRequest(limited, `apiKey=${keyAlways.id}&token=forged`), { code: 'RATE_LIMITED' });

  const slow = harness(0, { delayMs: 300 });
  const c = await challengeOf(slow, keyAlways);
  const req: RequestContext = fakeRequest({ rawQuery: audioQuery(c.json) });
  const reply = await slow.audio(req);
  const waited = performance.now() - req.startedAt;
  assert.equal(reply.status, 200);
  assert.ok(waited >= 295, `answered after ${waited} ms`);
});
