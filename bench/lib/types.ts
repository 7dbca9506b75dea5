// Shapes several bench modules share, kept apart from the code so that no module imports another
// only for a type (which made import cycles: load ↔ payloads, and drivers, targets, stocked-pool and
// scenarios/scenario.ts in one ring).

/** Bodies back to back in shared memory; `next` counts claims (see feed-request.cjs). Built by payloads.ts, sent by load.ts. */
export interface Feed {
  readonly data: SharedArrayBuffer;
  /** Int32Array of count + 1 offsets into data. */
  readonly offsets: SharedArrayBuffer;
  /** Int32Array(1): the next body to claim. */
  readonly next: SharedArrayBuffer;
  readonly count: number;
  /** The last body is meant to be sent again and again (L's stand-in body), not a used-up feed. */
  readonly repeat?: boolean;
}

/** S4's stocked-pool measurement (stocked-pool.ts), as a scenario asks for it (scenarios/scenario.ts). */
export interface StockedPoolPlan {
  /** CHALLENGE_POOL_SIZE: ready challenges per worker. */
  readonly size: number;
  /** Requests of the warm-up burst and of each measured burst, as fractions of all workers' pools together. */
  readonly warmupShare: number;
  readonly burstShare: number;
}
