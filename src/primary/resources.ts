// CPU and memory limits as a container sees them: cgroup v2 (cpu.max, memory.max) or v1
// (cpu.cfs_quota_us / cpu.cfs_period_us, memory.limit_in_bytes); null when there is no limit.
import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';

function read(path: string): string | null {
  try { return readFileSync(path, 'utf8').trim(); } catch { return null; }
}

export function cgroupCpus(root = '/sys/fs/cgroup'): number | null {
  const v2 = read(`${root}/cpu.max`);
  if (v2) {
    const [quota, period] = v2.split(/\s+/);
    if (quota && quota !== 'max' && Number(period) > 0) return Math.max(1, Math.ceil(Number(quota) / Number(period)));
    return null;
  }
  const quota = Number(read(`${root}/cpu/cpu.cfs_quota_us`) ?? read(`${root}/cpu,cpuacct/cpu.cfs_quota_us`));
  const period = Number(read(`${root}/cpu/cpu.cfs_period_us`) ?? read(`${root}/cpu,cpuacct/cpu.cfs_period_us`));
  if (quota > 0 && period > 0) return Math.max(1, Math.ceil(quota / period));
  return null;
}

export function cgroupMemoryMb(root = '/sys/fs/cgroup'): number | null {
  const raw = read(`${root}/memory.max`) ?? read(`${root}/memory/memory.limit_in_bytes`);
  if (!raw || raw === 'max') return null;
  const bytes = Number(raw);
  // v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX).
  if (!Number.isFinite(bytes) || bytes <= 0 || bytes >= 2 ** 60) return null;
  return Math.floor(bytes / 1024 / 1024);
}

/** CPUs to size the cluster by: the cgroup quota, else the machine's. */
export function detectCpus(): number {
  return Math.min(cgroupCpus() ?? Infinity, availableParallelism());
}

/**
 * --max-old-space-size per worker: HEAP_LIMIT_MB when given; else 75 % of the memory limit shared by
 * the workers (and the primary, counted as one more); null when nothing limits memory.
 */
export function workerHeapMb(heapLimitMb: number | null, memoryLimitMb: number | null, workers: number): number | null {
  if (heapLimitMb) return heapLimitMb;
  const limit = memoryLimitMb ?? cgroupMemoryMb();
  if (!limit) return null;
  return Math.max(64, Math.floor((limit * 0.75) / (Math.max(1, workers) + 1)));
}

/** Share of the container memory the used-challenge claims may take by default (STATE_STORE_MAX_MEMORY). */
export const CLAIM_MEMORY_SHARE = 0.2;

/**
 * STATE_STORE_MAX_MEMORY: the configured bytes; else 20 % of the memory limit (CONTAINER_MEMORY_LIMIT_MB,
 * else the cgroup limit, else the machine's memory). Workers' heaps default to 75 % of the same limit.
 */
export function claimMemoryBytes(configured: number | null, memoryLimitMb: number | null, totalBytes = totalmem()): number {
  if (configured !== null) return configured;
  const limitMb = memoryLimitMb ?? cgroupMemoryMb();
  const bytes = limitMb !== null ? limitMb * 1024 * 1024 : totalBytes;
  return Math.max(1 << 20, Math.floor(bytes * CLAIM_MEMORY_SHARE));
}
