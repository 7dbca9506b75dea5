// Three Palisade nodes sharing one Redis and one PostgreSQL database, each on a host of its own: a
// network namespace with its own address (ip netns + a veth pair, made here and removed after),
// reaching the shared servers through the host side of its link. Where namespaces cannot be made
// (no CAP_NET_ADMIN), the nodes run on three loopback ports instead, and the test says so.
//
// It proves: a payload verified on one node is refused on the others, with every submission racing
// across nodes; the flood and key rate limits are exact across nodes; a key revoked through one
// node stops working on every node within CACHE_DURATION_API_KEYS; /usage sums every node's traffic
// with nothing lost after one node is SIGKILLed (every process of it) and restarted on its data
// directory, and another drained with SIGTERM; NODE_ID/NODE_NAME appear in logs, metric labels and
// the request log.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { loadConfig } from '../../src/config/index.js';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { openDatabase } from '../../src/db/client.js';
import { listRequestLogs } from '../../src/db/request-logs.js';
import { createApiKey, revokeApiKey } from '../../src/keys/api-keys.js';
import { createKeySecrets, deriveApiKeySecretKey } from '../../src/keys/secrets.js';
import { baseEnv, pollUntilReady } from '../helpers/child-process.js';
import { solveV2 } from '../helpers/pow-test-server.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../helpers/redis-server.js';
import { MAIN } from '../helpers/service.js';
import { POSTGRES_URL, requireService } from '../helpers/services.js';
import { awayFromWindowEnd } from '../helpers/windows.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const postgresUp = await requireService('postgres');
const tag = `${process.pid % 1000}${randomBytes(1).toString('hex')}`;
const SEED = 'Zq7vN3pL1xR8kT5mW2cY9bH4gF6dJ0sA';
const PORT = 28_000 + (process.pid % 1000);
const CACHE_MS = 1000;
const ORIGIN = 'https://shop.example';

/** Can this process make network namespaces? */
function namespacesAllowed(): boolean {
  const probe = `palprobe${tag}`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0) return false;
  spawnSync('ip', ['netns', 'del', probe]);
  return true;
}

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}

interface Host {
  /** Where the test reaches the node. */
  readonly address: string;
  /** Where the node reaches Redis and PostgreSQL (the host's side of its link, or loopback). */
  readonly gateway: string;
  /** The command that runs a program on this host. */
  readonly wrap: (argv: string[]) => string[];
  readonly namespace: string | null;
}

// PALISADE_TEST_LOOPBACK_NODES=1 runs the loopback fallback even where namespaces can be made.
const useNamespaces = process.env.PALISADE_TEST_LOOPBACK_NODES !== '1' && namespacesAllowed();
const hosts: Host[] = [];
const proxies: Server[] = [];
const sockets = new Set<Socket>();

/** Forwards host:port to 127.0.0.1:target (Redis and PostgreSQL listen on loopback only). */
async function proxy(host: string, port: number, target: number): Promise<void> {
  const server = createServer((inbound) => {
    const outbound = connect(target, '127.0.0.1');
    sockets.add(inbound);
    sockets.add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const done = () => { inbound.destroy(); outbound.destroy(); sockets.delete(inbound); sockets.delete(outbound); };
    inbound.on('error', done).on('close', done);
    outbound.on('error', done).on('close', done);
  });
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve); });
  proxies.push(server);
}

interface Node {
  readonly name: string;
  readonly host: Host;
  readonly url: string;
  readonly dataDir: string;
  proc: ChildProcess;
  readonly output: string[];
}

let redis: ThrowawayRedis | null = null;
const dbName = `palisade_mn_${tag}`;
const nodes: Node[] = [];
let secrets: ReturnType<typeof createKeySecrets>;
let dbUrl = '';

function envFor(i: number, host: Host): Record<string, string> {
  return {
    ...baseEnv(), PORT: String(PORT), NODE_NAME: `node-${i + 1}`, SECRET_SEED: SEED, WORKERS: '2', LOG_LEVEL: 'info',
    REDIS_URL: `redis://${host.gateway}:${useNamespaces ? 6379 : redis!.port}`,
    POSTGRES_URL: `postgres://postgres@${host.gateway}:${useNamespaces ? 5432 : new URL(POSTGRES_URL).port || 5432}/${dbName}`,
    CACHE_DURATION_API_KEYS: `${CACHE_MS}ms`, FLOOD_RATE_LIMIT: '90/1m',
    X_FORWARDED_FOR_TRUSTED: useNamespaces ? '10.211.0.0/16' : '127.0.0.1/32',
    THREATS_ENABLED: '0', GEO_EMBEDDED_ASN: '0',
    FIREHOL_LEVEL1_URL: '', FIREHOL_PROXIES_URL: '', FIREHOL_TOR_EXITS_URL: '', EMAIL_LIST_DISPOSABLE: '', PHISHING_LIST_URL: '',
  };
}

async function startNode(i: number, dataDir: string): Promise<Node> {
  const host = hosts[i]!;
  const port = useNamespaces ? PORT : PORT + i;
  const env = { ...envFor(i, host), PORT: String(port) };
  const [cmd, ...args] = host.wrap([process.execPath, MAIN]);
  const proc = spawn(cmd!, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  for (const s of [proc.stdout!, proc.stderr!]) {
    s.setEncoding('utf8');
    let rest = '';
    s.on('data', (chunk: string) => { const lines = (rest + chunk).split('\n'); rest = lines.pop()!; output.push(...lines); });
  }
  const url = `http://${host.address}:${port}`;
  const state = await pollUntilReady(`${url}/.live`, proc, Date.now() + 60_000, 100);
  if (state !== 'ready') throw new Error(`node-${i + 1} did not start (${state}):\n${output.join('\n')}`);
  return { name: `node-${i + 1}`, host, url, dataDir, proc, output };
}

/** Every process of the node: all of its namespace's, or the primary and its workers. */
function nodePids(node: Node): number[] {
  if (node.host.namespace !== null) {
    const r = spawnSync('ip', ['netns', 'pids', node.host.namespace], { encoding: 'utf8' });
    return r.stdout.split('\n').filter((l) => /^\d+$/.test(l)).map(Number);
  }
  const r = spawnSync('pgrep', ['-P', String(node.proc.pid)], { encoding: 'utf8' });
  return [node.proc.pid!, ...r.stdout.split('\n').filter((l) => /^\d+$/.test(l)).map(Number)];
}

async function stopNode(node: Node, signal: NodeJS.Signals): Promise<void> {
  if (node.proc.exitCode !== null || node.proc.signalCode !== null) return;
  const exited = new Promise((r) => node.proc.once('exit', r));
  if (signal === 'SIGKILL') {
    for (const pid of nodePids(node)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  } else {
    node.proc.kill(signal);
  }
  await Promise.race([exited, sleep(30_000)]);
}

before(async () => {
  if (!postgresUp) return;
  if (useNamespaces) {
    for (let i = 0; i < 3; i++) {
      const ns = `pal${tag}n${i}`;
      const outer = `pv${tag}${i}`;
      const inner = `pi${tag}${i}`;
      const gateway = `10.211.${i}.1`;
      const address = `10.211.${i}.2`;
      ip('netns', 'add', ns);
      ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
      ip('link', 'set', inner, 'netns', ns);
      ip('addr', 'add', `${gateway}/30`, 'dev', outer);
      ip('link', 'set', outer, 'up');
      ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${address}/30`, 'dev', inner);
      ip('netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up');
      ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
      hosts.push({ address, gateway, namespace: ns, wrap: (argv) => ['ip', 'netns', 'exec', ns, ...argv] });
    }
    console.log('multi-node: three network namespaces (10.211.0.2, 10.211.1.2, 10.211.2.2), one veth link each');
  } else {
    for (let i = 0; i < 3; i++) hosts.push({ address: '127.0.0.1', gateway: '127.0.0.1', namespace: null, wrap: (argv) => argv });
    console.log(process.env.PALISADE_TEST_LOOPBACK_NODES === '1'
      ? 'multi-node: PALISADE_TEST_LOOPBACK_NODES=1: three loopback ports instead of network namespaces'
      : 'multi-node: network namespaces cannot be made here (no CAP_NET_ADMIN): three loopback ports instead');
  }
  redis = await startThrowawayRedis();
  if (useNamespaces) {
    for (const h of hosts) {
      await proxy(h.gateway, 6379, redis.port);
      await proxy(h.gateway, 5432, Number(new URL(POSTGRES_URL).port || 5432));
    }
  }
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  await admin.end();
  const local = new URL(POSTGRES_URL);
  local.pathname = `/${dbName}`;
  dbUrl = local.toString();
  for (let i = 0; i < 3; i++) nodes.push(await startNode(i, mkdtempSync(join(tmpdir(), `pal-mn-${i}-`))));
  const config = loadConfig({ env: { ...envFor(0, hosts[0]!), DATA_DIR: nodes[0]!.dataDir }, persistSecrets: false });
  secrets = createKeySecrets(deriveApiKeySecretKey(config.secrets.PALISADE_HMAC_SECRET), config.secrets.HASHING_SALT);
});

after(async () => {
  for (const n of nodes) await stopNode(n, 'SIGKILL');
  for (const n of nodes) rmSync(n.dataDir, { recursive: true, force: true });
  for (const s of sockets) s.destroy();
  for (const p of proxies) p.close();
  await redis?.stop();
  for (const h of hosts) {
    if (h.namespace === null) continue;
    spawnSync('ip', ['netns', 'del', h.namespace]);
  }
  if (postgresUp) {
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
});

async function withDb<T>(fn: (sql: ReturnType<typeof openDatabase>['sql']) => Promise<T>): Promise<T> {
  const db = openDatabase({ postgresUrl: dbUrl, maxConnections: 2 });
  try {
    return await fn(db.sql);
  } finally {
    await db.close(1000);
  }
}

async function newKey(input: { rateLimit?: string } = {}): Promise<{ id: string; secret: string; accountId: string }> {
  return withDb(async (sql) => {
    const account = await ensureDefaultAccount(sql, 'Default Account');
    const created = await createApiKey(sql, secrets, { accountId: account.id, hostnames: ['shop.example'], ...input }, 'test');
    return { id: created.key.id, secret: created.secret, accountId: account.id };
  });
}

let clientIp = 0;
/** A client address of its own (X-Forwarded-For from a trusted proxy), so subtests never share a flood count. */
const nextIp = () => { clientIp++; return `198.18.${clientIp >> 8 & 255}.${clientIp & 255}`; };

const skip = postgresUp ? false : 'postgres unreachable';

test('a payload verified on one node is refused on every other, with submissions racing across nodes', { skip }, async () => {
  const key = await newKey();
  const payloads = await Promise.all(Array.from({ length: 60 }, async (_, i) => {
    const node = nodes[i % 3]!;
    const res = await fetch(`${node.url}/v1/challenge?apiKey=${key.id}`, { headers: { 'x-forwarded-for': nextIp(), origin: ORIGIN } });
    assert.equal(res.status, 200);
    return (await solveV2(await res.text())).payload;
  }));
  const commands = () => redis!.command('INFO', 'commandstats').split('\n')
    .reduce((sum, l) => sum + Number(/calls=(\d+)/.exec(l)?.[1] ?? 0), 0);
  const before = commands();
  const outcomes = new Map<string, number>();
  const winners = new Map<string, number>();
  await Promise.all(payloads.flatMap((payload) => Array.from({ length: 9 }, async (_, k) => {
    const node = nodes[k % 3]!;
    const res = await fetch(`${node.url}/v1/verify?apiKey=${key.id}`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': nextIp(), origin: ORIGIN }, body: JSON.stringify({ payload }),
    });
    const json = (await res.json()) as { verified?: boolean; reason?: string; error?: string };
    const outcome = res.status === 200 && json.verified === true ? 'OK' : `${res.status}:${json.reason ?? json.error}`;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    if (outcome === 'OK') winners.set(node.name, (winners.get(node.name) ?? 0) + 1);
  })));
  const used = commands() - before - 1;
  console.log(`multi-node: 540 verifications (60 payloads × 9, over 3 nodes) cost ${used} Redis commands: ${(used / 540).toFixed(2)} per verification`);
  assert.deepEqual(Object.fromEntries(outcomes), { OK: 60, '200:PAYLOAD_ALREADY_USED': 480 });
  assert.equal([...winners.values()].reduce((a, b) => a + b, 0), 60);
});

test('the flood limit and a key rate limit are exact across nodes', { skip }, async () => {
  await awayFromWindowEnd(60_000, 15_000);
  // One client address on all three nodes: 90 per minute in total.
  const flooder = nextIp();
  const open = await newKey();
  const statuses = await Promise.all(Array.from({ length: 150 }, (_, i) =>
    fetch(`${nodes[i % 3]!.url}/v1/challenge?apiKey=${open.id}`, { headers: { 'x-forwarded-for': flooder, origin: ORIGIN } })
      .then(async (r) => { await r.arrayBuffer(); return r.status; })));
  assert.deepEqual([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 429).length], [90, 60]);
  // A key limited to 40 challenges a minute as a whole, whichever node and client asks.
  const key = await newKey({ rateLimit: '40/1m(key=apiKey)' });
  const keyed = await Promise.all(Array.from({ length: 75 }, (_, i) =>
    fetch(`${nodes[i % 3]!.url}/v1/challenge?apiKey=${key.id}`, { headers: { 'x-forwarded-for': nextIp(), origin: ORIGIN } }).then(async (r) => { await r.arrayBuffer(); return r.status; })));
  assert.deepEqual([keyed.filter((s) => s === 200).length, keyed.filter((s) => s === 429).length], [40, 35]);
});

test('a key revoked through one node stops working on every node within CACHE_DURATION_API_KEYS', { skip }, async () => {
  const key = await newKey();
  const ask = (node: Node) => fetch(`${node.url}/v1/challenge?apiKey=${key.id}`, { headers: { 'x-forwarded-for': nextIp(), origin: ORIGIN } })
    .then(async (r) => { await r.arrayBuffer(); return r.status; });
  // Every worker of every node has the key cached.
  for (let i = 0; i < 12; i++) assert.equal(await ask(nodes[i % 3]!), 200);
  await withDb((sql) => revokeApiKey(sql, key.id, 'test'));
  const revokedAt = Date.now();
  await sleep(CACHE_MS + 300);
  for (let i = 0; i < 30; i++) assert.equal(await ask(nodes[i % 3]!), 401, `node ${nodes[i % 3]!.name} still accepted it ${Date.now() - revokedAt} ms after the revocation`);
});

test('/usage sums every node after one node is SIGKILLed and restarted and another drained; node names everywhere', { skip }, async () => {
  const key = await newKey();
  const send = (node: Node, n: number) => Promise.all(Array.from({ length: n }, () =>
    fetch(`${node.url}/v1/challenge?apiKey=${key.id}`, { headers: { 'x-forwarded-for': nextIp(), origin: ORIGIN } })
      .then(async (r) => { await r.arrayBuffer(); assert.equal(r.status, 200); })));
  await Promise.all([send(nodes[0]!, 70), send(nodes[1]!, 80), send(nodes[2]!, 90)]);
  // node-3 dies at once, every process of it (no flush); node-2 drains.
  await stopNode(nodes[2]!, 'SIGKILL');
  await stopNode(nodes[1]!, 'SIGTERM');
  // node-3 comes back on its data directory: what its processes had counted is in its usage ledger.
  nodes[2] = await startNode(2, nodes[2]!.dataDir);
  const deadline = Date.now() + 20_000;
  let usage: { requests: { apiKey: number } } | null = null;
  for (;;) {
    const res = await fetch(`${nodes[0]!.url}/usage`, { headers: { authorization: `Bearer ${key.secret}`, 'x-forwarded-for': nextIp() } });
    usage = (await res.json()) as { requests: { apiKey: number } };
    if (usage.requests.apiKey === 240 || Date.now() > deadline) break;
    await sleep(250);
  }
  assert.equal(usage!.requests.apiKey, 240, 'every node\'s requests counted, none lost');
  // The request log names the node that served each request.
  const logs = await withDb((sql) => listRequestLogs(sql, { apiKeyId: key.id, limit: 1000 }));
  const byNode = new Map<string, number>();
  for (const l of logs) byNode.set(String(l.node), (byNode.get(String(l.node)) ?? 0) + 1);
  assert.ok((byNode.get('node-1') ?? 0) >= 70, `node-1 logged ${byNode.get('node-1')}`);
  assert.equal(byNode.get('node-2'), 80, 'the drained node wrote every row');
  assert.ok((byNode.get('node-3') ?? 0) <= 90);
  console.log(`request-log rows per node after the SIGKILL: ${JSON.stringify(Object.fromEntries(byNode))} (node-3 sent 90)`);
  // Logs carry node and nodeName; the info metric carries node and node_name labels.
  const listening = async (node: Node) => {
    for (let i = 0; i < 100; i++) {
      const found = node.output.find((l) => l.includes('palisade listening'));
      if (found !== undefined) return JSON.parse(found) as { node?: string; nodeName?: string };
      await sleep(100);
    }
    throw new Error(`${node.name} never logged "palisade listening"`);
  };
  const line = await listening(nodes[0]!);
  assert.equal(line.nodeName, 'node-1');
  assert.match(line.node ?? '', /^[0-9a-f]{16}$/);
  const metrics = await (await fetch(`${nodes[0]!.url}/.metrics`)).text();
  assert.match(metrics, new RegExp(`^palisade_node_info\\{node="${line.node}",node_name="node-1"\\} 1$`, 'm'));
  const other = await listening(nodes[2]!);
  assert.equal(other.nodeName, 'node-3');
  assert.notEqual(other.node, line.node, 'each node has an id of its own');
});
