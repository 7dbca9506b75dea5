// The claims of used challenges in the shared-memory store (native/claim-store.h): kept until their
// moment and gone after it, buckets deleted whole, sized from traffic, bounded by
// STATE_STORE_MAX_MEMORY, never displaced by soft state. The simulated clock (setClock) drives time.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ClaimStore } from '../../src/native/index.js';
import { createChallenge } from '../../src/pow/challenge.js';
import { resolvePolicy } from '../../src/pow/policy.js';
import { preparePowSecrets } from '../../src/pow/secrets.js';
import { verifyPayload } from '../../src/pow/verify.js';
import { claimMemoryBytes } from '../../src/primary/resources.js';
import { openSharedMemoryStore } from '../../src/store/shared-memory-store.js';
import { captureLogger } from '../helpers/memory-store.js';
import { solveV2 } from '../helpers/pow-test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'palisade-claims-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `s${n++}`, 'state.shm');
const MINUTE = 60_000;
/** A whole minute well in the future of the real clock, so simulated times are never "the past". */
const T0 = (Math.floor(Date.now() / MINUTE) + 10) * MINUTE;

test('a claim is kept until its moment and its bucket is deleted whole after it', () => {
  const path = fresh();
  const store = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0 });
  try {
    store.setClock(T0);
    const until = T0 + 21 * MINUTE + 5_000; // a 20-minute challenge's expiry plus the 60 s margin, mid-bucket
    assert.equal(store.claimOnceSync('a', until), true);
    assert.equal(store.claimOnceSync('a', until), false, 'a replay before the moment is refused');
    store.setClock(until - 1);
    assert.equal(store.claimOnceSync('a', until), false, 'still refused one millisecond before');
    // At its moment the claim protects nothing: an attempt naming a moment that has passed is refused
    // (verification refuses such a challenge as expired before it asks).
    store.setClock(until);
    assert.equal(store.claimOnceSync('a', until), false);
    assert.deepEqual(readdirSync(`${path}.claims`).sort(), [`${Math.floor(until / MINUTE)}.0`, 'meta']);
    // The sweep deletes a bucket once its minute has ended and 10 s of grace have passed, not before.
    const bucketEnd = (Math.floor(until / MINUTE) + 1) * MINUTE;
    store.setClock(bucketEnd + 9_000);
    store.sweep();
    assert.equal(readdirSync(`${path}.claims`).length, 2, 'inside the grace the bucket stays');
    store.setClock(bucketEnd + 10_001);
    store.sweep();
    assert.deepEqual(readdirSync(`${path}.claims`), ['meta']);
    assert.equal(store.claimMemory().bytes, 0);
  } finally {
    void store.close();
  }
});

test('claims of different moments are filed apart; the same id with its one moment is refused in every process', () => {
  const path = fresh();
  const a = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0 });
  const b = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0 });
  try {
    a.setClock(T0);
    b.setClock(T0);
    for (let i = 0; i < 5000; i++) assert.equal(a.claimOnceSync(`id${i}`, T0 + MINUTE + (i % 20) * MINUTE), true);
    for (let i = 0; i < 5000; i++) assert.equal(b.claimOnceSync(`id${i}`, T0 + MINUTE + (i % 20) * MINUTE), false, `id${i}`);
    const m = b.claimMemory();
    assert.equal(m.claims, 5000);
    assert.equal(m.buckets, 20);
  } finally {
    void a.close();
    void b.close();
  }
});

test('a bucket overflows into generations that grow fourfold; the next bucket starts at twice the last one\'s claims', () => {
  const path = fresh();
  const store = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0, minClaimSlots: 1024 });
  try {
    store.setClock(T0);
    const first = T0 + 30 * MINUTE;
    for (let i = 0; i < 5000; i++) assert.equal(store.claimOnceSync(`f${i}`, first), true);
    for (let i = 0; i < 5000; i++) assert.equal(store.claimOnceSync(`f${i}`, first), false, `f${i}`);
    const bucket = Math.floor(first / MINUTE);
    const gens = readdirSync(`${path}.claims`).filter((f) => f.startsWith(`${bucket}.`)).sort();
    // 1,024 + 1,024 + 4,096 (+ 16,384) slots hold 5,000 claims: a probe sequence can be full before
    // its segment is.
    assert.ok(gens.length >= 3 && gens.length <= 4, gens.join(' '));
    assert.equal(statSync(join(`${path}.claims`, `${bucket}.0`)).size, 64 + 1024 * 8);
    assert.equal(statSync(join(`${path}.claims`, `${bucket}.1`)).size, 64 + 1024 * 8);
    assert.equal(statSync(join(`${path}.claims`, `${bucket}.2`)).size, 64 + 4096 * 8);
    // The next minute's first segment: twice 5,000 claims, rounded up to whole 4 KiB pages of slots.
    assert.equal(store.claimOnceSync('next', first + MINUTE), true);
    assert.equal(statSync(join(`${path}.claims`, `${bucket + 1}.0`)).size, 64 + 10_240 * 8);
  } finally {
    void store.close();
  }
});

test('the primary prepares the next bucket ahead of its first claim; workers only map it', () => {
  const path = fresh();
  const primary = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0, minClaimSlots: 1024 });
  const worker = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0, minClaimSlots: 1024, sweepFiles: false });
  try {
    primary.setClock(T0);
    worker.setClock(T0);
    const until = T0 + 21 * MINUTE;
    const bucket = Math.floor(until / MINUTE);
    for (let i = 0; i < 3000; i++) assert.equal(worker.claimOnceSync(`p${i}`, until), true);
    const files = () => readdirSync(`${path}.claims`).filter((f) => f !== 'meta').sort();
    worker.sweep();
    assert.deepEqual(files().filter((f) => f.startsWith(`${bucket + 1}.`)), [], 'a worker prepares nothing');
    primary.sweep();
    // Twice the 3,000 claims of the bucket before, in whole pages: 6,144 slots.
    assert.equal(statSync(join(`${path}.claims`, `${bucket + 1}.0`)).size, 64 + 6144 * 8);
    // A bucket with no claims gets no successor: preparation never runs ahead of traffic.
    primary.sweep();
    assert.deepEqual(files().filter((f) => f.startsWith(`${bucket + 2}.`)), []);
    // The worker's first claim in the next minute maps the prepared segment: no new file.
    const before = files();
    assert.equal(worker.claimOnceSync('next', until + MINUTE), true);
    assert.deepEqual(files(), before);
    assert.equal(primary.claimOnceSync('next', until + MINUTE), false, 'both processes see the one claim');
  } finally {
    void worker.close();
    void primary.close();
  }
});

test('STATE_STORE_MAX_MEMORY is the only reason for STORE_FULL; the log warns past 80 % first', () => {
  const path = fresh();
  const { logger, records } = captureLogger();
  // Room for exactly four first segments of 4,096 slots (32,832 bytes each).
  const store = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0, maxClaimBytes: 4 * 32_832, logger });
  try {
    store.setClock(T0);
    for (let m = 0; m < 4; m++) assert.equal(store.claimOnceSync(`m${m}`, T0 + (m + 2) * MINUTE), true);
    store.sweep();
    assert.equal(records.filter((r) => /near STATE_STORE_MAX_MEMORY/.test(String(r.msg))).length, 1);
    assert.throws(() => store.claimOnceSync('fifth-bucket', T0 + 7 * MINUTE), { code: 'STORE_FULL', statusCode: 503 });
    assert.equal(store.stats().full, 1);
    // Buckets that exist still take claims, and a refused claim left nothing behind.
    assert.equal(store.claimOnceSync('more', T0 + 2 * MINUTE), true);
    // Once the first buckets end, their room is free again.
    store.setClock(T0 + 4 * MINUTE + 11_000);
    store.sweep();
    assert.equal(store.claimOnceSync('fifth-bucket', T0 + 7 * MINUTE), true);
  } finally {
    void store.close();
  }
});

test('a damaged segment fails closed (STORE_FULL) and is never replaced by an empty one', () => {
  const path = fresh();
  const store = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0 });
  try {
    store.setClock(T0);
    const until = T0 + 5 * MINUTE;
    assert.equal(store.claimOnceSync('kept', until), true);
    void store.close();
    const segment = join(`${path}.claims`, `${Math.floor(until / MINUTE)}.0`);
    writeFileSync(segment, 'not a segment');
    const again = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0 });
    again.setClock(T0);
    assert.throws(() => again.claimOnceSync('kept', until), { code: 'STORE_FULL' });
    assert.equal(statSync(segment).size, 13, 'left as it was for the operator');
    void again.close();
  } finally {
    void store.close();
  }
});

test('the claims directory: a foreign meta file is refused with what to do; bad arguments are refused', () => {
  const path = fresh();
  void openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0 }).close();
  writeFileSync(join(`${path}.claims`, 'meta'), 'x'.repeat(64));
  assert.throws(() => openSharedMemoryStore(path, { capacity: 1024 }), /is not a Palisade claims file/);
  const rawDir = join(dir, `raw${n++}`);
  mkdirSync(rawDir);
  const claims = new ClaimStore(rawDir, 1 << 20, 4096);
  try {
    for (const until of [-1, 0.5, Number.NaN, 2 ** 48]) assert.throws(() => claims.claim('x', until), { name: 'RangeError' }, String(until));
    assert.throws(() => claims.claim(7 as unknown as string, Date.now() + 1000), { name: 'TypeError' });
    assert.equal(claims.claim('past', Date.now() - 1), -3, 'a moment that has passed is refused');
  } finally {
    claims.close();
  }
  assert.throws(() => new ClaimStore(join(dir, 'missing-dir', 'x'), 1 << 20, 4096), /cannot create the claims file/);
  assert.throws(() => new ClaimStore(dir, 100, 4096), { name: 'RangeError' });
});

test('sustained load: 2,000 claims/s for 24 simulated hours on the default configuration, 0 STORE_FULL', () => {
  const path = fresh();
  const maxClaimBytes = claimMemoryBytes(null, null);
  const store = openSharedMemoryStore(path, { sweepEveryMs: 0, maxClaimBytes });
  const RATE = 2000;
  const HOURS = 24;
  const EXPIRY = 20 * MINUTE;
  let peakBytes = 0;
  let peakClaims = 0;
  let full = 0;
  let refusedReplays = 0;
  const started = performance.now();
  try {
    for (let s = 0; s < HOURS * 3600; s++) {
      const now = T0 + s * 1000;
      store.setClock(now);
      // Each second: 2,000 challenges issued over the last 30 s are solved now; their claims are
      // kept until expiry plus the 60 s margin.
      for (let i = 0; i < RATE; i++) {
        const id = `c${s}-${i}`;
        const until = now - (i % 30) * 1000 + EXPIRY + 60_000;
        try {
          if (!store.claimOnceSync(id, until)) throw new Error(`${id} refused`);
        } catch (err) {
          if ((err as { code?: string }).code === 'STORE_FULL') full++;
          else throw err;
        }
      }
      // One replay a second of a claim made 10 minutes ago: still refused.
      if (s >= 600 && !store.claimOnceSync(`c${s - 600}-1`, T0 + (s - 600) * 1000 - 1000 + EXPIRY + 60_000)) refusedReplays++;
      if (s % 5 === 0) store.sweep();
      if (s % 60 === 0) {
        const m = store.claimMemory();
        if (m.bytes > peakBytes) peakBytes = m.bytes;
        if (m.claims > peakClaims) peakClaims = m.claims;
      }
    }
  } finally {
    void store.close();
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`[claims] 24 simulated hours at ${RATE}/s (${(RATE * HOURS * 3600 / 1e6).toFixed(1)}M claims in ${seconds.toFixed(1)} s): ` +
    `peak ${(peakBytes / 1048576).toFixed(1)} MiB for ${peakClaims} live claims (${(peakBytes / peakClaims).toFixed(1)} bytes per claim), ` +
    `bound ${(maxClaimBytes / 1048576).toFixed(0)} MiB, STORE_FULL ${full}`);
  assert.equal(full, 0);
  assert.equal(refusedReplays, HOURS * 3600 - 600);
  assert.ok(peakBytes / peakClaims <= 32, `${(peakBytes / peakClaims).toFixed(1)} bytes per claim`);
  // About 21 minutes of claims live at once (2.5 million), up to a minute more until a bucket goes.
  assert.ok(peakClaims >= 2_400_000 && peakClaims <= 2_800_000, String(peakClaims));
});

test('claim lifetime through verification: refused as used until expiry plus the margin, as expired after, and gone once its minute has passed', async () => {
  const path = fresh();
  const store = openSharedMemoryStore(path, { capacity: 1024, sweepEveryMs: 0 });
  const secrets = preparePowSecrets('claim-lifetime-hmac-secret-0123456789');
  const apiKeyId = 'key_claimlifetime000000000000';
  const policy = resolvePolicy({ counterMin: 0, counterMax: 20, expiresInMs: 20 * MINUTE }, { maxMemoryBytes: 2 ** 27 });
  let now = T0;
  const deps = { secrets, claimOnce: (id: string, until: number) => store.claimOnceSync(id, until), now: () => now };
  try {
    store.setClock(now);
    const { payload, challenge } = await solveV2(await createChallenge(policy, { secrets, apiKeyId, now }));
    const expiresAt = challenge.parameters.expiresAt! * 1000;
    const first = await verifyPayload(payload, deps, apiKeyId);
    assert.deepEqual([first.verified, first.verified && first.expiresAt], [true, expiresAt / 1000]);
    // Just before expiry: the replay is refused by the claim.
    now = expiresAt - 1000;
    store.setClock(now);
    assert.deepEqual(await verifyPayload(payload, deps, apiKeyId), { verified: false, reason: 'PAYLOAD_ALREADY_USED' });
    // Between expiry and expiry + 60 s the claim is still there, and the expiry check refuses first.
    now = expiresAt + 30_000;
    store.setClock(now);
    assert.deepEqual(await verifyPayload(payload, deps, apiKeyId), { verified: false, reason: 'CHALLENGE_EXPIRED' });
    const bucket = Math.floor((expiresAt + 60_000) / MINUTE);
    assert.ok(readdirSync(`${path}.claims`).includes(`${bucket}.0`), 'the claim is kept until expiry plus the margin');
    // Once the claim's minute (and the 10 s grace) has passed, its bucket is deleted; the replay is still refused as expired.
    now = (bucket + 1) * MINUTE + 11_000;
    store.setClock(now);
    store.sweep();
    assert.equal(readdirSync(`${path}.claims`).some((f) => f.startsWith(`${bucket}.`)), false, 'gone after it');
    assert.deepEqual(await verifyPayload(payload, deps, apiKeyId), { verified: false, reason: 'CHALLENGE_EXPIRED' });
  } finally {
    void store.close();
  }
});
