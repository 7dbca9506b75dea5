// v1 challenges that could never be verified: issue wrote salts of any length (ten percent-encoded
// values of 100 characters make over 3,000), verification refuses salts over V1_SALT_MAX_LENGTH.
// Issue now holds to the same limit, defined once (src/pow/v1-salt.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PalisadeError } from '../../src/errors.js';
import type { Reply } from '../../src/http/types.js';
import { preparePowSecrets } from '../../src/pow/secrets.js';
import { MAX_PARAMS, PARAM_NAME_MAX, V1_SALT_MAX_LENGTH } from '../../src/pow/v1-salt.js';
import { createChallengeHandler } from '../../src/routes/challenge.js';
import { createVerifyHandler } from '../../src/routes/verify.js';
import { browserAuthorizer, fakeRequest, memoryClaimOnce, solveV1, testKey } from '../helpers/pow-test-server.js';

const secrets = preparePowSecrets('v1-salt-limit-test-secret-0123456789');
const key = testKey({ challengePolicy: { version: 1, counterMin: 0, maxnumber: 100 } });
const keys = [key];

/** The salt without parameters: 24 hex, `?expires=` and 10 digits, `&apiKey=<id>&`. */
const BASE = 24 + '?expires='.length + 10 + '&apiKey='.length + key.id.length + 1;

/**
 * Up to ten params (names of PARAM_NAME_MAX characters) whose salt text is `length` characters:
 * '%' is written as `%25` (3), 'a' as itself (1).
 */
function paramsOfSaltLength(length: number): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let left = length;
  for (let i = 0; i < MAX_PARAMS && left > 0; i++) {
    const name = `p${i}`.padEnd(PARAM_NAME_MAX, '_');
    const room = Math.min(left - (7 + name.length + 2), 300);
    const percents = Math.floor(room / 3);
    out.push([name, '%'.repeat(percents) + 'a'.repeat(room - 3 * percents)]);
    left -= 7 + name.length + 2 + room;
  }
  assert.equal(left, 0, 'the parameters fill the length exactly');
  return out;
}

function query(params: Array<[string, string]>): string {
  return `apiKey=${key.id}${params.map(([n, v]) => `&params.${n}=${encodeURIComponent(v)}`).join('')}`;
}

function handlers() {
  let penaltyAsked = 0;
  const claimOnce = memoryClaimOnce();
  const penalty = async () => { penaltyAsked++; return 0; };
  const challenge = createChallengeHandler({ authorizeBrowser: browserAuthorizer(keys), secrets, penalty, onChallenge: () => {} });
  const verify = createVerifyHandler({
    authorizeBrowser: browserAuthorizer(keys), secrets, claimOnce, penalty, onVerify: () => {}, countUsage: () => {},
  });
  return { challenge, verify, penaltyAsked: () => penaltyAsked };
}

test(`the largest v1 challenge issue accepts (a ${V1_SALT_MAX_LENGTH}-character salt) verifies`, async () => {
  const h = handlers();
  const params = paramsOfSaltLength(V1_SALT_MAX_LENGTH - BASE);
  const reply = await h.challenge(fakeRequest({ rawQuery: query(params) }));
  assert.equal(reply.status, 200);
  const salt = (JSON.parse(reply.body.toString()) as { salt: string }).salt;
  assert.equal(salt.length, V1_SALT_MAX_LENGTH);
  const { payload } = await solveV1(reply.body.toString());
  const verdict = await h.verify(fakeRequest({
    method: 'POST', rawQuery: `apiKey=${key.id}`, headers: { 'content-type': 'application/json' }, body: { payload },
  })) as Reply;
  const json = JSON.parse(verdict.body.toString()) as { verified: boolean; verificationData: string };
  assert.equal(json.verified, true, verdict.body.toString());
  const data = new URLSearchParams(json.verificationData);
  for (const [name, value] of params) assert.equal(data.get(`params.${name}`), value);
});

test('one character past the limit: 400 PARAMS_TOO_LONG at issue, before the penalty counts the request', async () => {
  const h = handlers();
  const params = paramsOfSaltLength(V1_SALT_MAX_LENGTH - BASE + 1);
  assert.throws(() => h.challenge(fakeRequest({ rawQuery: query(params) })), (err: unknown) => {
    assert.ok(err instanceof PalisadeError);
    assert.equal(err.code, 'PARAMS_TOO_LONG');
    assert.equal(err.statusCode, 400);
    assert.match(err.message, new RegExp(`\\b${V1_SALT_MAX_LENGTH}\\b`));
    return true;
  });
  assert.equal(h.penaltyAsked(), 0);
  // The issue's own example: four values of 100 '%' (a 1,324-character salt before).
  const four = Array.from({ length: 4 }, (_, i): [string, string] => [`${i}`, '%'.repeat(100)]);
  assert.throws(() => h.challenge(fakeRequest({ rawQuery: query(four) })), { code: 'PARAMS_TOO_LONG' });
});
