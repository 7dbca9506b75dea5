// API key ids and derived secrets: formats, uniform alphabet, determinism, keyed hashes.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import {
  createKeySecrets, deriveApiKeySecretKey, isKeyId, isSecret, keyKindOf, newKeyId, newSecretNonce, randomBase62,
} from '../../src/keys/secrets.js';

const K = deriveApiKeySecretKey('palisade-hmac-secret-for-tests-0123');
const secrets = createKeySecrets(K, 'hashing-salt-0123456789');

test('key ids: key_/ckey_ + 24 base62, all distinct', () => {
  const ids = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const id = newKeyId(i % 2 === 0 ? 'standard' : 'free');
    assert.match(id, i % 2 === 0 ? /^key_[0-9A-Za-z]{24}$/ : /^ckey_[0-9A-Za-z]{24}$/);
    assert.ok(isKeyId(id));
    ids.add(id);
  }
  assert.equal(ids.size, 2000);
  assert.match(newSecretNonce(), /^[0-9A-Za-z]{24}$/);
});

test('random base62 uses all 62 characters evenly (rejection sampling, no modulo bias)', () => {
  const counts = new Map<string, number>();
  const text = randomBase62(62 * 2000);
  assert.equal(text.length, 124_000);
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 62);
  // Expected 2000 each; with modulo bias ('0'–'7' would get 5/4 as often) the first ones would stand out.
  let chi = 0;
  for (const n of counts.values()) chi += (n - 2000) ** 2 / 2000;
  assert.ok(chi < 130, `chi-square ${chi.toFixed(1)} for 61 degrees of freedom`);
  const low = [...'01234567'].reduce((n, c) => n + counts.get(c)!, 0) / 8;
  assert.ok(low < 2150, `characters 0-7 appear ${low} times on average`);
});

test('the secret is derived from K, key id and nonce; prefix follows the key kind', () => {
  const s = secrets.derive('key_AAAAAAAAAAAAAAAAAAAAAAAA', 'nonce-1');
  assert.match(s, /^sec_[0-9A-Za-z]{32}$/);
  assert.ok(isSecret(s));
  assert.equal(secrets.derive('key_AAAAAAAAAAAAAAAAAAAAAAAA', 'nonce-1'), s);
  assert.notEqual(secrets.derive('key_AAAAAAAAAAAAAAAAAAAAAAAA', 'nonce-2'), s);
  assert.notEqual(secrets.derive('key_BAAAAAAAAAAAAAAAAAAAAAAA', 'nonce-1'), s);
  assert.match(secrets.derive('ckey_AAAAAAAAAAAAAAAAAAAAAAAA', 'nonce-1'), /^csec_[0-9A-Za-z]{32}$/);
  const other = createKeySecrets(deriveApiKeySecretKey('another-palisade-secret-012345'), 'hashing-salt-0123456789');
  assert.notEqual(other.derive('key_AAAAAAAAAAAAAAAAAAAAAAAA', 'nonce-1'), s);
  // Known answer: base62 digits of HMAC-SHA-256(K, "key_…:nonce-1") mod 62^32.
  const digest = createHmac('sha256', K).update('key_AAAAAAAAAAAAAAAAAAAAAAAA:nonce-1').digest();
  let n = BigInt(`0x${digest.toString('hex')}`);
  let expected = '';
  for (let i = 0; i < 32; i++) { expected = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[Number(n % 62n)] + expected; n /= 62n; }
  assert.equal(s, `sec_${expected}`);
  assert.equal(keyKindOf('ckey_x'), 'free');
  assert.equal(keyKindOf('key_x'), 'standard');
});

test('K is HKDF-SHA256 of PALISADE_HMAC_SECRET with the label "palisade api-key secrets"', () => {
  assert.equal(K.length, 32);
  assert.equal(deriveApiKeySecretKey('palisade-hmac-secret-for-tests-0123').toString('hex'), K.toString('hex'));
  assert.notEqual(deriveApiKeySecretKey('palisade-hmac-secret-for-tests-0124').toString('hex'), K.toString('hex'));
});

test('hash = hex HMAC-SHA-256(HASHING_SALT, secret); equal() compares whole strings', () => {
  const s = secrets.derive('key_AAAAAAAAAAAAAAAAAAAAAAAA', 'n');
  assert.equal(secrets.hash(s), createHmac('sha256', 'hashing-salt-0123456789').update(s).digest('hex'));
  assert.ok(secrets.equal(s, s));
  assert.ok(!secrets.equal(s, `${s.slice(0, -1)}x`));
  assert.ok(!secrets.equal(s, s.slice(0, -1)));
  assert.ok(!secrets.equal(s, ''));
});

test('malformed ids and secrets are recognised without a lookup; short keys are refused', () => {
  for (const bad of ['', 'key_', 'key_short', `key_${'A'.repeat(25)}`, `key_${'A'.repeat(23)}!`, `KEY_${'A'.repeat(24)}`,
    `key_${'A'.repeat(24)}\n`, `xkey_${'A'.repeat(24)}`, 'key_' + 'é'.repeat(24)]) {
    assert.equal(isKeyId(bad), false, JSON.stringify(bad));
  }
  for (const bad of ['', 'sec_', `sec_${'A'.repeat(31)}`, `sec_${'A'.repeat(33)}`, `csec_${'A'.repeat(31)}-`, `key_${'A'.repeat(32)}`]) {
    assert.equal(isSecret(bad), false, JSON.stringify(bad));
  }
  assert.throws(() => createKeySecrets(Buffer.alloc(16), 'hashing-salt-0123456789'), /32 bytes/);
  assert.throws(() => createKeySecrets(K, 'short'), /HASHING_SALT/);
});
