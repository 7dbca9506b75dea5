// Rate-limit windows are fixed and aligned to the Unix epoch in both stores (native/shm-table.cc,
// src/store/redis-scripts.ts): a test that needs a few hits in one window starts well inside one.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * When less than `marginMs` of the current `windowMs` window is left, waits until `afterMs` into
 * the next one.
 */
export async function awayFromWindowEnd(windowMs: number, marginMs: number, afterMs = 100): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await sleep(left + afterMs);
}
