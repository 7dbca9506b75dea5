// Real Redis topologies on loopback ports for the state store's tests: a Redis Cluster of three
// masters with a replica each (redis-server --cluster-enabled yes, joined by redis-cli --cluster
// create), and a master with a replica watched by three Redis Sentinels. Failover is fast (node
// timeout and down-after of 1 s) so a test can kill a master and watch a replica take over.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spareLocalPort, startThrowawayRedis, type ThrowawayRedis } from './redis-server.js';

/**
 * Whether redis-server and redis-cli are installed: under CI=true their absence throws (the tests
 * must run); elsewhere it says loudly that `what` is skipped.
 */
export function redisToolsAvailable(what: string): boolean {
  const missing = ['redis-server', 'redis-cli'].filter((bin) => spawnSync(bin, ['--version']).status !== 0);
  if (missing.length === 0) return true;
  if (process.env['CI'] === 'true') throw new Error(`${missing.join(' and ')} missing (CI=true: ${what} must run)`);
  console.error(`\n*** SKIPPING ${what}: ${missing.join(' and ')} not installed ***\n`);
  return false;
}

/** The cluster's node timeout: a master unreachable this long is failed over. */
export const NODE_TIMEOUT_MS = 1000;

export interface TestCluster {
  readonly nodes: readonly ThrowawayRedis[];
  /** `redis+cluster://` naming the first two nodes (a subset, as users may). */
  readonly url: string;
  /** The node currently master of `slot`. */
  masterOf(slot: number): ThrowawayRedis;
  /** Resolves once every slot is served by a reachable master and every node agrees (cluster_state:ok). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function cli(port: number, ...args: string[]): string {
  const r = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) throw new Error(`redis-cli -p ${port} ${args.join(' ')}: ${r.stderr || r.error?.message}`);
  return r.stdout.trim();
}

/** Three masters and three replicas (one each), all slots assigned, replicas in sync. */
export async function startTestCluster(): Promise<TestCluster> {
  const nodes: ThrowawayRedis[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      nodes.push(await startThrowawayRedis([
        '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(NODE_TIMEOUT_MS),
        '--maxmemory-policy', 'noeviction', '--cluster-replica-validity-factor', '0',
      ]));
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], {
      encoding: 'utf8', timeout: 60_000,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create: ${create.stdout}\n${create.stderr}`);
  } catch (err) {
    for (const n of nodes) await n.stop();
    throw err;
  }
  const alive = () => nodes.filter((n) => {
    try { return cli(n.port, 'PING') === 'PONG'; } catch { return false; }
  });
  const cluster: TestCluster = {
    nodes,
    url: `redis+cluster://127.0.0.1:${nodes[0]!.port},127.0.0.1:${nodes[1]!.port}`,
    masterOf(slot) {
      // CLUSTER NODES: "<id> <ip:port@bus> <flags> <master id> <ping> <pong> <epoch> <link> <slot ranges…>".
      for (const line of cli(alive()[0]!.port, 'CLUSTER', 'NODES').split('\n')) {
        const f = line.trim().split(' ');
        if (!/(^|,)master(,|$)/.test(f[2] ?? '') || /fail/.test(f[2] ?? '')) continue;
        for (const range of f.slice(8)) {
          const [from, to = from] = range.split('-').map(Number);
          if (slot >= from! && slot <= to!) return nodes.find((n) => n.port === Number(/:(\d+)@/.exec(f[1]!)?.[1]))!;
        }
      }
      throw new Error(`no master serves slot ${slot}`);
    },
    async waitHealthy(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const up = alive();
        const ok = up.length > 0 && up.every((n) => /cluster_state:ok/.test(cli(n.port, 'CLUSTER', 'INFO')) && /cluster_slots_ok:16384/.test(cli(n.port, 'CLUSTER', 'INFO')));
        // Every live master has its replica attached and caught up (a claim must be able to wait for it).
        const synced = ok && up.every((n) => {
          const info = cli(n.port, 'INFO', 'replication');
          if (!/role:master/.test(info)) return /master_link_status:up/.test(info);
          return true;
        });
        if (ok && synced) return;
        if (Date.now() > deadline) throw new Error(`the test cluster did not become healthy within ${timeoutMs} ms`);
        await sleep(100);
      }
    },
    async stop() {
      for (const n of nodes) await n.stop();
    },
  };
  await cluster.waitHealthy();
  return cluster;
}

export interface TestSentinels {
  readonly master: ThrowawayRedis;
  readonly replica: ThrowawayRedis;
  readonly sentinelPorts: readonly number[];
  /** `redis+sentinel://` naming the sentinels and the master name. */
  readonly url: string;
  /** The port of the master the sentinels report now. */
  currentMasterPort(): number;
  stop(): Promise<void>;
}

export const SENTINEL_MASTER_NAME = 'palisade-test';

/** A master, its replica, and three sentinels (quorum 2, down-after 1 s). */
export async function startTestSentinels(): Promise<TestSentinels> {
  const master = await startThrowawayRedis(['--maxmemory-policy', 'noeviction']);
  const replica = await startThrowawayRedis(['--maxmemory-policy', 'noeviction', '--replicaof', '127.0.0.1', String(master.port)]);
  const dir = mkdtempSync(join(tmpdir(), 'palisade-sentinel-'));
  const sentinels: ChildProcess[] = [];
  const sentinelPorts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await spareLocalPort();
    const file = join(dir, `sentinel-${i}.conf`);
    writeFileSync(file, [
      `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
      `sentinel monitor ${SENTINEL_MASTER_NAME} 127.0.0.1 ${master.port} 2`,
      `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} 1000`,
      `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 10000`,
      `sentinel parallel-syncs ${SENTINEL_MASTER_NAME} 1`, '',
    ].join('\n'));
    sentinels.push(spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' }));
    sentinelPorts.push(port);
  }
  process.on('exit', () => {
    for (const s of sentinels) if (s.exitCode === null && s.signalCode === null) s.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const currentMasterPort = () => Number(cli(sentinelPorts[0]!, 'SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER_NAME).split('\n')[1]);
  // Ready once every sentinel knows the master, its replica and the other sentinels.
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const ready = sentinelPorts.every((p) => {
        const info = cli(p, 'SENTINEL', 'master', SENTINEL_MASTER_NAME);
        return /num-slaves\n1\b/.test(info) && /num-other-sentinels\n2\b/.test(info);
      });
      if (ready && /master_link_status:up/.test(replica.command('INFO', 'replication'))) break;
    } catch {
      // a sentinel not listening yet
    }
    if (Date.now() > deadline) throw new Error('the test sentinels did not see the master, its replica and each other within 30 s');
    await sleep(200);
  }
  return {
    master, replica, sentinelPorts,
    url: `redis+sentinel://${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${SENTINEL_MASTER_NAME}`,
    currentMasterPort,
    async stop() {
      for (const s of sentinels) {
        if (s.exitCode !== null || s.signalCode !== null) continue;
        const exited = new Promise((resolve) => s.once('exit', resolve));
        s.kill('SIGKILL');
        await exited;
      }
      await master.stop();
      await replica.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
