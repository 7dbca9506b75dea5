// A child process for test/cluster/store-concurrency.test.ts (forked as dist/test/helpers/store-child.js).
// Protocol over IPC: the parent sends one `open` message; the child answers `ready`, waits for
// `go` (so every child starts at the same moment), runs its task and answers `done`. Chaos
// children instead run until `stop` (or SIGKILL), reporting grants in small `granted` batches.
import { setTimeout as sleep } from 'node:timers/promises';
import { openRedisStore } from '../../src/store/redis-store.js';
import { openSharedMemoryStore, type SharedMemoryStore } from '../../src/store/shared-memory-store.js';
import { parseRateRule } from '../../src/parse.js';
import type { StateStore } from '../../src/store/state-store.js';

export type StoreSpec =
  | { readonly kind: 'shm'; readonly path: string; readonly capacity: number }
  | { readonly kind: 'redis'; readonly url: string; readonly keyPrefix: string };

export type ChildTask =
  | {
    readonly type: 'claim'; readonly ids: number; readonly idPrefix: string; readonly inFlight: number;
    /** The claims' moment (epoch ms), the same in every child: a claim's moment comes with its id. */
    readonly untilMs: number;
    /** 0: run freely; else claim `chunk` ids per time slice of this length, all children in step. */
    readonly sliceMs: number; readonly chunk: number;
  }
  | { readonly type: 'hit'; readonly key: string; readonly rule: string; readonly hits: number }
  | { readonly type: 'chaos'; readonly ids: number; readonly idPrefix: string; readonly key: string; readonly rule: string; readonly untilMs: number };

export type ToChild = { type: 'open'; store: StoreSpec; task: ChildTask } | { type: 'go'; at: number } | { type: 'stop' };

export type FromChild =
  | { type: 'ready' }
  | { type: 'done'; granted: number; bitmap: string; allowed: number; hits: number }
  | { type: 'granted'; ids: number[]; allowed: number; hits: number }
  | { type: 'error'; message: string };

let store: StateStore | undefined;
let task: ChildTask | undefined;
let stopping = false;
let startAt = 0;

process.on('message', (msg: ToChild) => {
  if (msg.type === 'open') {
    task = msg.task;
    void open(msg.store).then(() => send({ type: 'ready' }), fail);
  } else if (msg.type === 'go') {
    startAt = msg.at;
    void run().catch(fail);
  } else {
    stopping = true;
  }
});

async function open(spec: StoreSpec): Promise<void> {
  store = spec.kind === 'shm'
    ? openSharedMemoryStore(spec.path, { capacity: spec.capacity })
    : await openRedisStore(spec.url, { keyPrefix: spec.keyPrefix, commandTimeout: 10_000 });
}

async function run(): Promise<void> {
  const t = task!;
  if (t.type === 'claim') await claimAll(t);
  else if (t.type === 'hit') await hitMany(t);
  else await chaos(t);
  await store!.close();
  process.disconnect();
}

/**
 * Claims every id once, in the same order as the other children, with `inFlight` outstanding.
 * With time slices, chunk k starts at `startAt + k * sliceMs` in every child, so children running
 * at the same moment race for the same ids instead of one running ahead of the others.
 */
async function claimAll(t: Extract<ChildTask, { type: 'claim' }>): Promise<void> {
  const bitmap = Buffer.alloc(Math.ceil(t.ids / 8));
  let granted = 0;
  let next = 0;
  let end = t.sliceMs > 0 ? 0 : t.ids;
  const worker = async () => {
    while (next < end) {
      const i = next++;
      if (await store!.claimOnce(`${t.idPrefix}${i}`, t.untilMs)) {
        bitmap[i >> 3]! |= 1 << (i & 7);
        granted++;
      }
    }
  };
  if (t.sliceMs === 0) {
    await Promise.all(Array.from({ length: t.inFlight }, worker));
  } else {
    for (let k = 0; next < t.ids; k++) {
      const wait = startAt + k * t.sliceMs - Date.now();
      if (wait > 0) await sleep(wait);
      end = Math.min(t.ids, (k + 1) * t.chunk);
      if (next < end) await Promise.all(Array.from({ length: t.inFlight }, worker));
    }
  }
  send({ type: 'done', granted, bitmap: bitmap.toString('base64'), allowed: 0, hits: 0 });
}

async function hitMany(t: Extract<ChildTask, { type: 'hit' }>): Promise<void> {
  const rule = parseRateRule(t.rule);
  let allowed = 0;
  for (let i = 0; i < t.hits; i++) if ((await store!.hit(t.key, rule)).allowed) allowed++;
  send({ type: 'done', granted: 0, bitmap: '', allowed, hits: t.hits });
}

/** Hammers the table synchronously until told to stop; the parent SIGKILLs some of us meanwhile. */
async function chaos(t: Extract<ChildTask, { type: 'chaos' }>): Promise<void> {
  const shm = store as SharedMemoryStore;
  const rule = parseRateRule(t.rule);
  let ids: number[] = [];
  let allowed = 0;
  let hits = 0;
  while (!stopping) {
    for (let n = 0; n < 64; n++) {
      const i = Math.floor(Math.random() * t.ids);
      if (shm.claimOnceSync(`${t.idPrefix}${i}`, t.untilMs)) ids.push(i);
      if (shm.hitSync(t.key, rule).allowed) allowed++;
      hits++;
      shm.addPenaltySync(t.key, 1, 600_000);
    }
    if (ids.length > 0 || hits > 0) {
      send({ type: 'granted', ids, allowed, hits });
      ids = [];
      allowed = 0;
      hits = 0;
    }
    await new Promise((resolve) => setImmediate(resolve)); // let 'stop' arrive
  }
  send({ type: 'done', granted: 0, bitmap: '', allowed: 0, hits: 0 });
}

function send(msg: FromChild): void {
  process.send!(msg);
}

function fail(err: unknown): void {
  send({ type: 'error', message: err instanceof Error ? `${err.message}\n${err.stack}` : String(err) });
  process.exitCode = 1;
  process.disconnect();
}
