// The machine-to-machine challenge (PROTOCOL.md section 5): format, verification, hostile headers,
// and interoperability with altcha-lib's v1 functions.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { test } from 'node:test';
import { solveChallenge, verifySolution } from 'altcha-lib/v1';
import {
  createM2mChallenge, parseAltchaAuthorization, prepareM2mKey, verifyM2mSolution, wwwAuthenticate, type M2mChallenge,
} from '../../src/keys/m2m-challenge.js';

const SECRET = 'm2m-challenge-key-0123456789abcdef';
const key = prepareM2mKey(SECRET);
const opts = { maxNumber: 2000 };

function solve(c: { challenge: string; salt: string; maxnumber: number }): number {
  for (let n = 0; n <= c.maxnumber; n++) {
    if (createHash('sha256').update(c.salt + n).digest('hex') === c.challenge) return n;
  }
  throw new Error('unsolvable');
}

test('a challenge is ALTCHA v1: salt 24 hex + ?expires=…&, challenge = SHA-256(salt + number), signed with HMAC', () => {
  const now = 1_700_000_000_000;
  const c = createM2mChallenge(key, { maxNumber: 2000, ttlMs: 60_000 }, now);
  assert.match(c.salt, /^[0-9a-f]{24}\?expires=1700000060&$/);
  assert.equal(c.maxnumber, 2000);
  assert.equal(c.expiresAt, now + 60_000);
  assert.equal(c.signature, createHmac('sha256', SECRET).update(c.challenge).digest('hex'));
  const n = solve(c);
  assert.ok(n >= 0 && n <= 2000);
  assert.equal(wwwAuthenticate(c),
    `Altcha algorithm=SHA-256, challenge=${c.challenge}, maxnumber=2000, salt=${c.salt}, signature=${c.signature}`);
  assert.equal(verifyM2mSolution(key, { algorithm: 'SHA-256', number: n, challenge: c.challenge, salt: c.salt, signature: c.signature }, opts, now), 'ok');
});

function solved(c: M2mChallenge) {
  return { algorithm: 'SHA-256', number: solve(c), challenge: c.challenge, salt: c.salt, signature: c.signature };
}

test('wrong number, signature, salt, algorithm or range are invalid; past expiry is expired', () => {
  const now = Date.now();
  const c = createM2mChallenge(key, opts, now);
  const s = solved(c);
  assert.equal(verifyM2mSolution(key, s, opts, now), 'ok');
  assert.equal(verifyM2mSolution(key, { ...s, number: s.number + 1 }, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(key, { ...s, signature: 'a'.repeat(64) }, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(prepareM2mKey('another-m2m-key-0123456789'), s, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(key, { ...s, algorithm: 'SHA-512' }, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(key, { ...s, number: 2001 }, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(key, { ...s, number: -1 }, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(key, { ...s, challenge: s.challenge.toUpperCase() }, opts, now), 'invalid');
  // Splicing another expiry into the salt breaks the challenge hash and is refused by the format check.
  assert.equal(verifyM2mSolution(key, { ...s, salt: s.salt.replace(/expires=\d+/, 'expires=9999999999') }, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(key, { ...s, salt: `${s.salt}expires=9999999999&` }, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(key, { ...s, salt: s.salt.slice(0, -1) }, opts, now), 'invalid');
  assert.equal(verifyM2mSolution(key, s, opts, c.expiresAt + 1000), 'expired');
});

test('Authorization: Altcha … parsing accepts any order and quotes, refuses everything else', () => {
  const c = createM2mChallenge(key, opts);
  const header = `Altcha algorithm=SHA-256, number=12, challenge=${c.challenge}, salt=${c.salt}, signature=${c.signature}`;
  assert.deepEqual(parseAltchaAuthorization(header), { algorithm: 'SHA-256', number: 12, challenge: c.challenge, salt: c.salt, signature: c.signature });
  assert.deepEqual(
    parseAltchaAuthorization(`altcha signature="${c.signature}",salt="${c.salt}",challenge=${c.challenge},number="12",algorithm=SHA-256`),
    { algorithm: 'SHA-256', number: 12, challenge: c.challenge, salt: c.salt, signature: c.signature });
  for (const bad of [
    '', 'Altcha', 'Bearer x', header.replace('number=12', 'number=-1'), header.replace('number=12', 'number=1e3'),
    header.replace('number=12', 'number=12345678901'), header.replace(', number=12', ''), `${header}, number=13`,
    header.replace('number=12', 'number'), `${header}${' '.repeat(1024)}`, header.replace('Altcha ', 'Altcha-'),
  ]) {
    assert.equal(parseAltchaAuthorization(bad), null, bad.slice(0, 80));
  }
});

test('interoperability: altcha-lib solves our challenge, and accepts our solution as a valid v1 payload', async () => {
  const c = createM2mChallenge(key, opts);
  const { promise } = solveChallenge(c.challenge, c.salt, 'SHA-256', c.maxnumber);
  const solution = await promise;
  assert.ok(solution);
  assert.equal(verifyM2mSolution(key, { algorithm: 'SHA-256', number: solution.number, challenge: c.challenge, salt: c.salt, signature: c.signature }, opts), 'ok');
  const payload = { algorithm: 'SHA-256' as const, challenge: c.challenge, number: solution.number, salt: c.salt, signature: c.signature };
  assert.equal(await verifySolution(payload, SECRET), true);
  assert.equal(await verifySolution({ ...payload, number: solution.number + 1 }, SECRET), false);
});

test('a key shorter than 16 bytes is refused', () => {
  assert.throws(() => prepareM2mKey('short'), /at least 16/);
});
