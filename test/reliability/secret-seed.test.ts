// SECRET_SEED on an existing install, through the real service: a seed that derives other secrets
// than DATA_DIR/secrets.json holds used to replace them silently, and every API key secret then failed
// with 401 API_KEY_INVALID with nothing in the log. Now the service exits 78 with the reason on stderr
// and never listens; SECRET_SEED_ROTATE=1 replaces them (the old key secret fails, a rotated one
// works), and a later start without the seed keeps the rotated secrets.
import assert from 'node:assert/strict';
import { rmSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { deriveSecret } from '../../src/secrets.js';
import { runCli } from '../helpers/cli.js';
import { createTestKey, newDataDir, startService, type Service } from '../helpers/service.js';

const SEED = 'Vb7Kq2Xw9Lr4Tz1Nm8Pc3Hs6Jd5Fg0Ye';

async function usageStatus(svc: Service, secret: string): Promise<[number, unknown]> {
  const res = await fetch(`${svc.url}/usage`, { headers: { authorization: `Bearer ${secret}` } });
  return [res.status, await res.json()];
}

/** The exit code, or 'running' when the process has not exited within `ms`. */
function exitCode(svc: Service, ms = 20_000): Promise<number | null | 'running'> {
  return new Promise((resolve) => {
    if (svc.proc.exitCode !== null) return resolve(svc.proc.exitCode);
    const timer = setTimeout(() => resolve('running'), ms);
    svc.proc.once('exit', (code) => { clearTimeout(timer); resolve(code); });
  });
}

function refusedConnection(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve('connected'); });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

test('a SECRET_SEED that derives other secrets than secrets.json holds: exit 78, the reason on stderr, nothing listening; SECRET_SEED_ROTATE=1 starts', async () => {
  const dataDir = await newDataDir();
  try {
    const first = await startService({ dataDir });
    const key = await createTestKey(first);
    assert.deepEqual((await usageStatus(first, key.secret))[0], 200, 'the key works before');
    assert.equal(await first.stop(), 0);
    const before = readFileSync(join(dataDir, 'secrets.json'), 'utf8');
    const kept = Object.values(JSON.parse(before) as Record<string, string>);

    const seeded = await startService({ dataDir, env: { SECRET_SEED: SEED }, waitReady: false });
    let stderr = '';
    seeded.proc.stderr!.on('data', (chunk: string) => { stderr += chunk; });
    assert.equal(await exitCode(seeded), 78);
    assert.match(stderr, /^Invalid configuration:\n {2}- secrets: SECRET_SEED derives PALISADE_HMAC_SECRET, CODE_CHALLENGE_SECRET, JWT_SECRET, HASHING_SALT different from /);
    assert.match(stderr, /set SECRET_SEED_ROTATE=1 to replace them/);
    for (const secret of [SEED, ...kept, deriveSecret(SEED, 'PALISADE_HMAC_SECRET')]) assert.ok(!stderr.includes(secret), 'no secret on stderr');
    assert.equal(await refusedConnection(seeded.port), 'ECONNREFUSED', 'nothing listening');
    assert.equal(readFileSync(join(dataDir, 'secrets.json'), 'utf8'), before, 'secrets.json untouched');
    await seeded.stop();

    // The rotation switch: the service starts with the derived secrets; the old key secret fails as
    // documented, a secret rotated with the CLI (same seed) works.
    const rotated = await startService({ dataDir, env: { SECRET_SEED: SEED, SECRET_SEED_ROTATE: '1' } });
    assert.deepEqual(await usageStatus(rotated, key.secret), [401, { error: 'API_KEY_INVALID', statusCode: 401 }]);
    const stored = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
    assert.equal(stored.PALISADE_HMAC_SECRET, deriveSecret(SEED, 'PALISADE_HMAC_SECRET'));
    assert.equal(stored.HASHING_SALT, deriveSecret(SEED, 'HASHING_SALT'));
    const cli = await runCli(['--json', 'keys', 'rotate', key.id], { DATA_DIR: dataDir, SECRET_SEED: SEED });
    assert.equal(cli.code, 0, cli.err);
    const { secret } = JSON.parse(cli.out) as { secret: string };
    assert.equal((await usageStatus(rotated, secret))[0], 200, 'the rotated secret works');
    assert.equal(await rotated.stop(), 0);

    // A later start without the seed keeps what the rotation wrote.
    const unseeded = await startService({ dataDir });
    assert.equal((await usageStatus(unseeded, secret))[0], 200, 'the rotated secret still works without the seed');
    assert.equal(await unseeded.stop(), 0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
