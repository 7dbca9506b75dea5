// SECRET_SEED: the strength rule (seedProblem, exact accept/refuse cases), and a seed that derives
// other secrets than DATA_DIR/secrets.json holds: refused (service and CLI alike) unless
// SECRET_SEED_ROTATE=1, which replaces them and rewrites the file; a file written from a seed keeps
// the service's secrets when it later starts without the seed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, loadConfig, type Config } from '../../src/config/index.js';
import { deriveSecret, SECRET_NAMES, seedEntropyBits, seedProblem } from '../../src/secrets.js';
import { runCli } from '../helpers/cli.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'palisade-seed-'));
  dirs.push(d);
  return d;
};
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

const SEED = 'Vb7Kq2Xw9Lr4Tz1Nm8Pc3Hs6Jd5Fg0Ye';
const OTHER_SEED = 'Wc8Lr3Yx0Ms5Ua2On9Qd4It7Ke6Gh1Zf';
const KEPT = ['PALISADE_HMAC_SECRET', 'CODE_CHALLENGE_SECRET', 'JWT_SECRET', 'HASHING_SALT'] as const;

const load = (dir: string, env: Record<string, string> = {}, persistSecrets = true): Config =>
  loadConfig({ env: { DATA_DIR: dir, ...env }, persistSecrets, detectedCpus: 1 });
const stored = (dir: string) => JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')) as Record<string, string>;

function refusal(dir: string, env: Record<string, string>, persistSecrets = true): string {
  try {
    load(dir, env, persistSecrets);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.problems.length, 1);
    return err.problems[0]!;
  }
  assert.fail('expected a ConfigError');
}

/** Neither the seed nor any secret, kept or derived, appears in `text`. */
function assertNoSecretIn(text: string, ...secrets: string[]): void {
  for (const s of secrets) assert.ok(!text.includes(s), 'no secret in the message');
}

test('seed rule: repeats, runs, short or few-character seeds are refused; random ones and a four-word passphrase accepted', () => {
  const refused: [string, RegExp][] = [
    ['a'.repeat(24), /24 characters, 1 different, about 0 bits/],
    ['ab'.repeat(12), /24 characters, 2 different, about 24 bits/],
    ['ab'.repeat(200), /400 characters, 2 different, about 400 bits/], // long enough, but 2 different characters
    ['abcdefghijklmnopqrstuvwx', /24 characters, 24 different, about 0 bits/], // a run: every step +1
    ['012345678901234567890123', /24 characters, 10 different, about 10 bits/],
    ['password1234567890123456', /24 characters, 17 different, about 53 bits/],
    ['kQ3v9Zx7Lm2Pw8Rt5Yn4Bc6', /23 characters, 23 different/], // random but one short
    ['Tr0ub4dor&3Tr0ub4dor&3Tr', /24 characters, 10 different, about 78 bits/], // the boundary, just under
    ['correct horse battery', /21 characters/],
  ];
  for (const [seed, detail] of refused) {
    const problem = seedProblem(seed);
    assert.ok(problem !== null, `refused: ${seed.slice(0, 12)}`);
    assert.match(problem, /^must have at least 24 characters, 10 different ones and an estimated 80 bits of entropy \(this one: /);
    assert.match(problem, detail);
    assert.ok(!problem.includes(seed), 'the seed is not quoted');
  }
  const accepted = [
    'Vb7Kq2Xw9Lr4Tz1Nm8Pc3Hs6Jd5Fg0Ye', // 32 random base64 characters
    'q8Hf2+Kd0/Zp7Lw3Nx5Rv9Tb1Jm6Ys4C', // with + and /
    'correct horse battery staple', // about 97 bits by the estimate (its words count as random characters)
    'Tr0ub4dor&3Tr0ub4dor&3ab', // the boundary: 11 different characters, about 81 bits
  ];
  for (const seed of accepted) assert.equal(seedProblem(seed), null, seed);
  // The estimate's arithmetic: 24 characters × min(1 bit for a/b, H(12/23, 11/23) for the +1/-1 steps).
  const steps = -(12 / 23) * Math.log2(12 / 23) - (11 / 23) * Math.log2(11 / 23);
  assert.equal(seedEntropyBits('ab'.repeat(12)), 24 * steps);
  assert.equal(seedEntropyBits('a'.repeat(24)), 0);
  assert.equal(Math.round(seedEntropyBits('correct horse battery staple')), 98);
  // What `openssl rand -base64 24` and `-base64 32` print is always accepted.
  for (let i = 0; i < 2000; i++) {
    const seed = randomBytes(i % 2 === 0 ? 24 : 32).toString('base64');
    assert.equal(seedProblem(seed), null, seed);
  }
});

test('seed rule in the configuration: SECRET_SEED is refused with the rule, never echoed', () => {
  const dir = tempDir();
  for (const seed of ['a'.repeat(24), 'ab'.repeat(16)]) {
    const problem = refusal(dir, { SECRET_SEED: seed });
    assert.match(problem, /^SECRET_SEED: must have at least 24 characters, 10 different ones and an estimated 80 bits/);
    assertNoSecretIn(problem, seed);
  }
  assert.equal(load(dir, { SECRET_SEED: SEED, NODE_NAME: 'n1' }).secrets.PALISADE_HMAC_SECRET, deriveSecret(SEED, 'PALISADE_HMAC_SECRET'));
});

test('a seed on a DATA_DIR with generated secrets: refused, naming them and what to do, file untouched; the CLI (no persisting) alike', () => {
  const dir = tempDir();
  const first = load(dir);
  const before = readFileSync(join(dir, 'secrets.json'), 'utf8');
  for (const persist of [true, false]) {
    const problem = refusal(dir, { SECRET_SEED: SEED }, persist);
    assert.equal(problem.split(' different from ')[0], 'secrets: SECRET_SEED derives PALISADE_HMAC_SECRET, CODE_CHALLENGE_SECRET, JWT_SECRET, HASHING_SALT');
    assert.match(problem, /every existing API key secret \(401 API_KEY_INVALID\)/);
    assert.match(problem, /Unset SECRET_SEED .* or set SECRET_SEED_ROTATE=1 to replace them: secrets\.json is rewritten/);
    assertNoSecretIn(problem, SEED, ...KEPT.map((n) => first.secrets[n]), ...KEPT.map((n) => deriveSecret(SEED, n)));
  }
  assert.equal(readFileSync(join(dir, 'secrets.json'), 'utf8'), before);
  // Only the one that differs is named: a value given in the environment wins and is not compared.
  const given = Object.fromEntries(['PALISADE_HMAC_SECRET', 'CODE_CHALLENGE_SECRET', 'JWT_SECRET'].map((n) => [n, first.secrets[n as 'JWT_SECRET']]));
  assert.match(refusal(dir, { SECRET_SEED: SEED, ...given }), /^secrets: SECRET_SEED derives HASHING_SALT different from /);
  // Without the seed the kept secrets load as before.
  assert.deepEqual(load(dir).secrets, first.secrets);
});

test('SECRET_SEED_ROTATE=1: the derived secrets replace the kept ones and secrets.json is rewritten, so every later start agrees', () => {
  const dir = tempDir();
  const first = load(dir);
  // A reader (CLI, worker) never rotates: the file would disagree with what it uses.
  assert.match(refusal(dir, { SECRET_SEED: SEED, SECRET_SEED_ROTATE: '1' }, false), /still holds the secrets SECRET_SEED_ROTATE=1 replaces; start the service once with it first$/);
  const rotated = load(dir, { SECRET_SEED: SEED, SECRET_SEED_ROTATE: '1' });
  for (const name of KEPT) assert.equal(rotated.secrets[name], deriveSecret(SEED, name));
  assert.equal(rotated.secrets.NODE_ID, first.secrets.NODE_ID, 'NODE_ID (no NODE_NAME) is kept');
  const file = stored(dir);
  for (const name of KEPT) assert.equal(file[name], deriveSecret(SEED, name));
  assert.equal(file.NODE_ID, first.secrets.NODE_ID);
  assert.equal(statSync(join(dir, 'secrets.json')).mode & 0o777, 0o600);
  // Later starts: with the seed and without the switch, as a reader, and without the seed at all.
  assert.deepEqual(load(dir, { SECRET_SEED: SEED }).secrets, rotated.secrets);
  assert.deepEqual(load(dir, { SECRET_SEED: SEED }, false).secrets, rotated.secrets);
  assert.deepEqual(load(dir, { SECRET_SEED: SEED, SECRET_SEED_ROTATE: '1' }).secrets, rotated.secrets);
  assert.deepEqual(load(dir).secrets, rotated.secrets);
  // Another seed on that directory is a mismatch again.
  assert.match(refusal(dir, { SECRET_SEED: OTHER_SEED }), /^secrets: SECRET_SEED derives PALISADE_HMAC_SECRET, CODE_CHALLENGE_SECRET, JWT_SECRET, HASHING_SALT different from /);
});

test('reverse: secrets.json written from a seed keeps the same secrets when the service later starts without the seed', () => {
  const dir = tempDir();
  const seeded = load(dir, { SECRET_SEED: SEED });
  const file = stored(dir);
  for (const name of KEPT) assert.equal(file[name], deriveSecret(SEED, name), `${name} written`);
  assert.deepEqual(Object.keys(file).sort(), [...SECRET_NAMES].sort());
  assert.deepEqual(load(dir).secrets, seeded.secrets);
  assert.deepEqual(load(dir, {}, false).secrets, seeded.secrets);
});

test('a secrets.json from before derived values were written (NODE_ID only): the seed fills it in, nothing refused', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify({ NODE_ID: '0123456789abcdef' }), { mode: 0o600 });
  // A reader uses the derived values without writing.
  const read = load(dir, { SECRET_SEED: SEED }, false);
  assert.deepEqual(stored(dir), { NODE_ID: '0123456789abcdef' });
  const started = load(dir, { SECRET_SEED: SEED });
  assert.deepEqual(started.secrets, read.secrets);
  assert.equal(started.secrets.NODE_ID, '0123456789abcdef');
  for (const name of KEPT) assert.equal(stored(dir)[name], deriveSecret(SEED, name));
});

test('the CLI loads secrets as the service does: a mismatching seed is refused with the same message, exit 1', async () => {
  const dir = tempDir();
  load(dir);
  const run = await runCli(['accounts', 'list'], { DATA_DIR: dir, SECRET_SEED: SEED });
  assert.equal(run.code, 1);
  assert.equal(run.out, '');
  assert.match(run.err, /^Invalid configuration:\n {2}- secrets: SECRET_SEED derives PALISADE_HMAC_SECRET, CODE_CHALLENGE_SECRET, JWT_SECRET, HASHING_SALT different from /);
  assertNoSecretIn(run.err, SEED, ...Object.values(stored(dir)));
  const weak = await runCli(['accounts', 'list'], { DATA_DIR: dir, SECRET_SEED: 'ab'.repeat(12) });
  assert.equal(weak.code, 1);
  assert.match(weak.err, /^Invalid configuration:\n {2}- SECRET_SEED: must have at least 24 characters/);
});
