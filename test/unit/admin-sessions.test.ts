// Session JWTs, cookies and passwords of the admin area (src/admin/auth/): the secret's minimum
// length, the lifetime (JWT_TTL), the issuer, HS256 only, the cookie's attributes, the CSRF
// comparison, Argon2id at OWASP's parameters and TOTP codes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SignJWT, UnsecuredJWT } from 'jose';
import { hashPassword, verifyPassword } from '../../src/admin/auth/passwords.js';
import {
  clearedSessionCookie, createSessions, csrfMatches, sessionCookie, sessionTokenOf,
} from '../../src/admin/auth/sessions.js';
import { newTotpSecret, totpCode, totpValid } from '../../src/admin/auth/totp.js';

const SECRET = 'unit-test-jwt-secret-0123456789';

test('JWT_SECRET shorter than 24 characters is refused', () => {
  assert.throws(() => createSessions({ secret: 'x'.repeat(23), issuer: 'p', ttlSeconds: 60 }), /at least 24 characters/);
  assert.doesNotThrow(() => createSessions({ secret: 'x'.repeat(24), issuer: 'p', ttlSeconds: 60 }));
});

test('a session lives JWT_TTL; another issuer, another secret or alg none is refused', async () => {
  let now = Date.UTC(2026, 0, 1);
  const s = createSessions({ secret: SECRET, issuer: 'palisade', ttlSeconds: 3600, now: () => now });
  const { token, claims } = await s.issue('usr_0123456789abcdef', 3);
  assert.deepEqual(await s.verify(token), claims);
  assert.equal(claims.sessionVersion, 3);
  assert.equal(claims.expiresAt, now / 1000 + 3600);
  now += 3599_000;
  assert.notEqual(await s.verify(token), null, 'still valid a second before the end');
  now += 2000;
  assert.equal(await s.verify(token), null, 'expired');
  now = Date.UTC(2026, 0, 1);
  const other = createSessions({ secret: SECRET, issuer: 'someone-else', ttlSeconds: 3600, now: () => now });
  assert.equal(await other.verify(token), null, 'another issuer');
  const key = new TextEncoder().encode(SECRET);
  const t = now / 1000;
  const hs512 = await new SignJWT({ sv: 3, csrf: 'c'.repeat(32) }).setProtectedHeader({ alg: 'HS512' }).setSubject('u').setIssuer('palisade').setIssuedAt(t).setExpirationTime(t + 60).sign(key);
  assert.equal(await s.verify(hs512), null, 'HS512 with the right key: only HS256 is accepted');
  const none = new UnsecuredJWT({ sv: 3, csrf: 'c'.repeat(32) }).setSubject('u').setIssuer('palisade').setIssuedAt(t).setExpirationTime(t + 60).encode();
  assert.equal(await s.verify(none), null, 'alg none');
  const noCsrf = await new SignJWT({ sv: 3 }).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setIssuer('palisade').setIssuedAt(t).setExpirationTime(t + 60).sign(key);
  assert.equal(await s.verify(noCsrf), null, 'a token without a CSRF token');
  assert.equal(await s.verify('x'.repeat(5000)), null, 'oversized');
  assert.equal(await s.verify(''), null);
});

test('the session cookie: HttpOnly, SameSite=Strict, Secure over HTTPS; read back from a Cookie header', () => {
  assert.equal(sessionCookie('T', { path: '/captcha/', maxAgeSeconds: 60, secure: false }), 'palisade_session=T; Path=/captcha/; Max-Age=60; HttpOnly; SameSite=Strict');
  assert.match(sessionCookie('T', { path: '/', maxAgeSeconds: 60, secure: true }), /; Secure$/);
  assert.match(clearedSessionCookie({ path: '/', secure: false }), /^palisade_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/);
  assert.equal(sessionTokenOf('a=1; palisade_session=abc.def; b=2'), 'abc.def');
  assert.equal(sessionTokenOf('palisade_session='), null);
  assert.equal(sessionTokenOf('other=1'), null);
  assert.equal(sessionTokenOf(undefined), null);
  assert.equal(sessionTokenOf('x'.repeat(9000)), null);
});

test('CSRF tokens are compared whole', () => {
  assert.equal(csrfMatches('abc', 'abc'), true);
  assert.equal(csrfMatches('abd', 'abc'), false);
  assert.equal(csrfMatches('ab', 'abc'), false);
  assert.equal(csrfMatches(undefined, 'abc'), false);
});

test('passwords: Argon2id at m=19 MiB, t=2, p=1; an unknown user fails after a verification as long', async () => {
  const hash = await hashPassword('correct horse');
  assert.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  assert.equal(await verifyPassword(hash, 'correct horse'), true);
  assert.equal(await verifyPassword(hash, 'correct hors'), false);
  assert.equal(await verifyPassword(null, 'correct horse'), false);
  assert.equal(await verifyPassword('not a hash', 'x'), false);
});

test('TOTP: the current code is valid, one step either side too, others not', () => {
  const secret = newTotpSecret();
  assert.match(secret, /^[A-Z2-7]{32}$/);
  const now = Date.UTC(2026, 0, 1, 12);
  assert.equal(totpValid(secret, totpCode(secret, now), now), true);
  assert.equal(totpValid(secret, totpCode(secret, now - 30_000), now), true);
  assert.equal(totpValid(secret, totpCode(secret, now - 90_000), now), false);
  assert.equal(totpValid(secret, '12345', now), false);
  assert.equal(totpValid(secret, 123456, now), false);
});
