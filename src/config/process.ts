// What a process learns from its environment besides settings: the worker slot the supervisor gives
// each worker it forks (src/primary/supervisor.ts), for the logs.

/** This worker's slot (1, 2, …), or 0 in the primary and in a single process. */
export function workerSlot(env: NodeJS.ProcessEnv = process.env): number {
  return Number(env.PALISADE_WORKER ?? 0);
}
