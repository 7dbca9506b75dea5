// `npm run cli -- state`: how full the shared-memory state table is, read from the file the service
// uses (docs/operations.md, "Sizing"). No database is opened for it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';
import { runCli as cli } from '../helpers/cli.js';

const SECRETS = {
  PALISADE_HMAC_SECRET: 'cli-state-palisade-hmac-secret-0123456789',
  CODE_CHALLENGE_SECRET: 'cli-state-code-challenge-secret-0123456789',
  JWT_SECRET: 'cli-state-jwt-secret-0123456789-0123456789',
  HASHING_SALT: 'cli-state-hashing-salt-0123456789',
  NODE_ID: '0123456789abcdef',
};

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cli-state-'));
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify(SECRETS), { mode: 0o600 });
  return dir;
}

test('state: live, expired and never-used slots of the table and the claims, as JSON and as text with a warning past half', async () => {
  const dir = dataDir();
  try {
    const store = openSharedMemoryStore(join(dir, 'db', 'state.shm'), { capacity: 1024 });
    for (let i = 0; i < 600; i++) assert.equal(store.seenOnceSync(`seen-${i}`, 60_000), true);
    assert.equal(store.seenOnceSync('short-lived', 1), true);
    const until = Date.now() + 10 * 60_000;
    for (let i = 0; i < 300; i++) assert.equal(store.claimOnceSync(`claim-${i}`, until), true);
    await new Promise((r) => setTimeout(r, 20));
    await store.close();

    const env = { STATE_STORE_CAPACITY: '1024', STATE_STORE_MAX_MEMORY: '1MB' };
    const json = await cli(['--data-dir', dir, '--json', 'state'], env);
    assert.equal(json.code, 0, json.err);
    assert.deepEqual(JSON.parse(json.out), {
      path: join(dir, 'db', 'state.shm'), capacity: 1024, live: 600, expired: 1, empty: 423, load: 600 / 1024,
      // One bucket: one first segment of the smallest size, 4,096 slots of 8 bytes and a 64-byte header.
      claims: { claims: 300, buckets: 1, segments: 1, bytes: 64 + 4096 * 8, maxBytes: 1024 * 1024 },
    });

    const text = await cli(['--data-dir', dir, 'state'], env);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /^live: {7}600 \(58\.6 %\)$/m);
    assert.match(text.out, /^expired: {4}1 \(0\.1 %, reusable\)$/m);
    assert.match(text.out, /^claims: {5}300 used challenges in 1 buckets, 0\.0 MB of 1\.0 MB \(STATE_STORE_MAX_MEMORY\)$/m);
    assert.match(text.out, /More than half the slots are live/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('state: a table below half says nothing more', async () => {
  const dir = dataDir();
  try {
    const store = openSharedMemoryStore(join(dir, 'db', 'state.shm'), { capacity: 1024 });
    for (let i = 0; i < 10; i++) store.seenOnceSync(`seen-${i}`, 60_000);
    await store.close();
    const text = await cli(['--data-dir', dir, 'state'], { STATE_STORE_CAPACITY: '1024' });
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /^live: {7}10 \(1\.0 %\)$/m);
    assert.doesNotMatch(text.out, /More than half/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('state: no state file, another capacity, Redis configured, an extra argument', async () => {
  const dir = dataDir();
  try {
    const missing = await cli(['--data-dir', dir, 'state']);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^error: no state file at .*state\.shm/);
    assert.equal(existsSync(join(dir, 'db', 'state.shm')), false, 'the CLI never creates a state file');

    const store = openSharedMemoryStore(join(dir, 'db', 'state.shm'), { capacity: 1024 });
    await store.close();
    const other = await cli(['--data-dir', dir, 'state'], { STATE_STORE_CAPACITY: '2048' });
    assert.equal(other.code, 1);
    assert.match(other.err, /holds 1024 slots but 2048 are configured/);

    const redis = await cli(['--data-dir', dir, 'state'], { REDIS_URL: 'redis://127.0.0.1:6379' });
    assert.equal(redis.code, 1);
    assert.match(redis.err, /REDIS_URL is set/);

    const extra = await cli(['--data-dir', dir, 'state', 'now'], { STATE_STORE_CAPACITY: '1024' });
    assert.equal(extra.code, 2);
    assert.match(extra.err, /^unexpected argument now/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('state: a data directory the service has never run in is refused with the configuration error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cli-state-'));
  try {
    const run = await cli(['--data-dir', dir, 'state']);
    assert.equal(run.code, 1);
    assert.match(run.err, /^error: Invalid configuration:/);
    assert.match(run.err, /secrets\.json does not hold the generated secrets yet/);
    assert.equal(existsSync(join(dir, 'db', 'state.shm')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
