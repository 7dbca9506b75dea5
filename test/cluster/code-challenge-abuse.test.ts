// Code challenges and abuse protection over HTTP against the running clustered service, client
// addresses given by X-Forwarded-For from a trusted loopback proxy: an "auto" key asks a client
// marked as a prober for a code (its mark raises the penalty, so the risk score) while a clean client
// gets none; an IP marked malicious is refused the audio of a challenge it fetched before (403
// IP_BLOCKED) while another client still gets it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodePayload, solveV2 } from '../helpers/pow-test-server.js';
import { createTestKey, startService, type Service, type TestKey } from '../helpers/service.js';

let svc: Service;
let keyAuto: TestKey;
let keyAlways: TestKey;

before(async () => {
  svc = await startService({
    env: {
      WORKERS: '2', THREATS_ENABLED: '1', X_FORWARDED_FOR_TRUSTED: '127.0.0.1/32,::1/128',
      THREATS_MALICIOUS_LIMIT: '1/5m(expire=10m)', THREATS_PROBE_LIMIT: '2/5m(expire=10m)',
      CODE_CHALLENGE_SECRET: 'cluster-code-challenge-secret-0123456789', AUDIO_CHALLENGE_DELAY: '0',
    },
  });
  const light = { counterMin: 10, counterMax: 100 };
  keyAuto = await createTestKey(svc, { challengePolicy: { ...light, codeChallenge: 'auto' } });
  keyAlways = await createTestKey(svc, { challengePolicy: { ...light, codeChallenge: 'always' } });
});

after(async () => {
  await svc?.stop();
});

const from = (ip: string) => ({ 'x-forwarded-for': ip });
const challengeFor = async (key: TestKey, ip: string) => {
  const res = await fetch(`${svc.url}/v1/challenge?apiKey=${key.id}`, { headers: from(ip) });
  return { status: res.status, body: await res.text() };
};

test('"auto": a clean client gets no code; the same key asks a client marked as a prober for one', async () => {
  const clean = JSON.parse((await challengeFor(keyAuto, '198.51.100.10')).body) as { codeChallenge?: unknown };
  assert.equal(clean.codeChallenge, undefined);

  const prober = '198.51.100.20';
  for (const path of ['/.env', '/wp-login.php', '/.git/config']) {
    assert.equal((await fetch(`${svc.url}${path}`, { headers: from(prober) })).status, 404);
  }
  let json: { codeChallenge?: { length: number } } = {};
  for (let i = 0; i < 30 && json.codeChallenge === undefined; i++) {
    await sleep(100);
    json = JSON.parse((await challengeFor(keyAuto, prober)).body) as typeof json;
  }
  assert.equal(json.codeChallenge?.length, 5, 'the probe mark raises the penalty past the threshold');
  const stillClean = JSON.parse((await challengeFor(keyAuto, '198.51.100.10')).body) as { codeChallenge?: unknown };
  assert.equal(stillClean.codeChallenge, undefined);
});

test('an IP marked malicious gets 403 IP_BLOCKED on the audio route; another client gets the clip', async () => {
  const bad = '198.51.100.30';
  const { body } = await challengeFor(keyAlways, bad);
  const audio = (JSON.parse(body) as { codeChallenge: { audio: string } }).codeChallenge.audio;
  // A forged signature is a malicious event; past THREATS_MALICIOUS_LIMIT=1/5m the IP is marked.
  const solved = await solveV2(body);
  const forged = encodePayload({ challenge: { ...solved.challenge, signature: '0'.repeat(64) }, solution: solved.solution });
  for (let i = 0; i < 3; i++) {
    const verify = await fetch(`${svc.url}/v1/verify?apiKey=${keyAlways.id}`, {
      method: 'POST', headers: { ...from(bad), 'content-type': 'application/json' }, body: JSON.stringify({ payload: forged, code: 'AAAAA' }),
    });
    if (verify.status === 403) break; // marked already
    assert.deepEqual(await verify.json(), { verified: false, reason: 'INVALID_SIGNATURE' });
  }
  // Wait for the mark on the challenge route (the audio route's own limit is not spent on waiting).
  let status = 0;
  for (let i = 0; i < 50 && status !== 403; i++) {
    await sleep(100);
    status = (await challengeFor(keyAlways, bad)).status;
  }
  assert.equal(status, 403);
  const res = await fetch(new URL(audio, svc.url), { headers: from(bad) });
  assert.equal(res.status, 403);
  assert.deepEqual(await res.json(), { error: 'IP_BLOCKED', statusCode: 403 });
  const other = await fetch(new URL(audio, svc.url), { headers: from('198.51.100.31') });
  assert.equal(other.status, 200);
  assert.equal(other.headers.get('content-type'), 'audio/wav');
});
