// Which code challenges were submitted, for the audio route (410 CODE_CHALLENGE_SOLVED): when
// /v1/verify claims a challenge carrying a codeHash it leaves a mark, a state-store counter that
// never counts (limit 0, seed 0), kept as long as the claim; the audio route reads it with a null
// seed, which creates nothing (StateStore.countUpTo). Soft state: under memory pressure a mark may
// go early, and then the clip of a spent challenge can still be fetched, of no use since the
// challenge itself stays claimed. Marking never fails a verification.
import type { StateStore } from '../store/state-store.js';

export interface SpentMarks {
  /** After the claim of a code challenge with `nonce`, kept until epoch ms `untilMs` (the claim's moment). */
  mark(nonce: string, untilMs: number): void;
  /** True once `nonce` was marked (a boolean at once with the shared-memory store). */
  isSpent(nonce: string): boolean | Promise<boolean>;
}

/** How far ahead a read names its (unused) moment: countUpTo checks it even when it creates nothing. */
const READ_UNTIL_MS = 60_000;

export function createSpentMarks(store: StateStore): SpentMarks {
  const keyOf = (nonce: string) => `code|${nonce}`;
  return {
    mark(nonce, untilMs) {
      const sync = store.sync;
      try {
        if (sync !== undefined) sync.countUpToSync(keyOf(nonce), 0, 0, untilMs);
        else store.countUpTo(keyOf(nonce), 0, 0, untilMs).catch(() => {});
      } catch {
        // A full store loses this mark only: the claim, which decides, was already made.
      }
    },
    isSpent(nonce) {
      const until = Date.now() + READ_UNTIL_MS;
      const sync = store.sync;
      if (sync !== undefined) return sync.countUpToSync(keyOf(nonce), 0, null, until) !== null;
      return store.countUpTo(keyOf(nonce), 0, null, until).then((r) => r !== null);
    },
  };
}
