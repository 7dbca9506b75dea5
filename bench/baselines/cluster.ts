// The node:cluster frame every baseline shares: the primary forks WORKERS workers (default: the
// cores), reports a worker that exits other than by SIGTERM, and passes SIGTERM on; each worker
// serves on its own (the baselines listen on PORT from every worker, as the service does).
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';

/** Runs `serve` in each worker, the primary's frame in the primary; `env` goes to every worker. */
export async function runClustered(serve: () => void | Promise<void>, env: Record<string, string> = {}): Promise<void> {
  if (!cluster.isPrimary) {
    await serve();
    return;
  }
  const workers = Number(process.env.WORKERS || availableParallelism());
  for (let i = 0; i < workers; i++) cluster.fork(env);
  cluster.on('exit', (_w, code, signal) => {
    if (signal !== 'SIGTERM') console.error(`worker exited with ${code ?? signal}`);
  });
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    setTimeout(() => process.exit(0), 100);
  });
}
