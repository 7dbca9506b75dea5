// What the numbers were measured on: CPU model and count (from /proc/cpuinfo when present), memory,
// Node and OS versions, and the load average (sampled before and after each scenario: a high one
// means other work shared the cores and the absolute numbers are low).
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';

export interface MachineInfo {
  readonly cpuModel: string;
  /** Logical CPUs this process may use. */
  readonly cores: number;
  /** CPU flags that matter for the hashing paths (SHA-NI, AVX2). */
  readonly cpuFlags: readonly string[];
  readonly memoryMb: number;
  readonly node: string;
  readonly os: string;
}

export function machineInfo(): MachineInfo {
  let cpuModel = cpus()[0]?.model ?? 'unknown';
  let flags: string[] = [];
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? cpuModel;
    const all = /^flags\s*:\s*(.+)$/m.exec(info)?.[1]?.split(/\s+/) ?? [];
    flags = ['sha_ni', 'avx2', 'avx512f'].filter((f) => all.includes(f));
  } catch { /* not Linux: os.cpus() is enough */ }
  return {
    cpuModel, cores: availableParallelism(), cpuFlags: flags, memoryMb: Math.round(totalmem() / 2 ** 20),
    node: process.version, os: `${process.platform} ${release()}`,
  };
}

/** 1, 5 and 15-minute load averages, two decimals. */
export function loadAverage(): [number, number, number] {
  const [a, b, c] = loadavg().map((x) => Math.round(x * 100) / 100);
  return [a!, b!, c!];
}

/** "Intel(R) Xeon(R) Processor, 2 cores, SHA-NI": how the README names the machine. */
export function describeMachine(m: MachineInfo): string {
  const sha = m.cpuFlags.includes('sha_ni') ? ', SHA-NI' : '';
  return `${m.cpuModel}, ${m.cores} cores${sha}, ${Math.round(m.memoryMb / 1024)} GB, Node ${m.node}`;
}
