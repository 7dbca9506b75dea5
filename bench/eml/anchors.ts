// The two anchors of the e-mail comparison, as Debian ships them: rspamd (3.4) and SpamAssassin's
// spamd (4.0), each started here with its packaged rules and a private configuration directory
// that turns off what would learn from the corpus (Bayes, auto-learning) and the rules that ask the
// network (rspamd's blocklist, SPF/DKIM/DMARC/ARC, ASN and fuzzy modules; spamd's -L), and points
// DNS at a loopback server that refuses every query at once. They run, like Palisade, inside the benchmark's network namespace with only
// loopback, so no network rule, DNS blocklist or map download can reach anything. Each answers
// "spam or not" by its default thresholds:
//   rspamd       the action is "add header", "rewrite subject" or "reject" (score ≥ 6 by default;
//                "greylist" at 4 is a delay, not a verdict)
//   SpamAssassin spamd's "Spam: True" (score ≥ required_score, 5.0 by default)
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Verdict {
  readonly spam: boolean;
  readonly score: number;
}

export interface Anchor {
  readonly name: string;
  readonly version: string;
  /** The main process (its tree is watched until start-up work is done). */
  readonly pid: number;
  check(message: Buffer): Promise<Verdict>;
  stop(): Promise<void>;
}

/** Installs rspamd, spamassassin, spamc and spamd from Debian when one is missing (root needed). */
export function ensureInstalled(log: (line: string) => void): void {
  const missing = ['/usr/bin/rspamd', '/usr/sbin/spamd', '/usr/bin/spamassassin'].filter((p) => spawnSync('test', ['-x', p]).status !== 0);
  if (missing.length === 0) return;
  log(`installing rspamd and SpamAssassin from Debian (missing: ${missing.join(', ')})`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'rspamd', 'spamassassin', 'spamc', 'spamd']]) {
    const r = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${r.status}); run it as root, then retry`);
  }
}

const RSPAMD_PORT = 11333;
const SPAMD_PORT = 7830;
const START_TIMEOUT_MS = 180_000;

/** rspamd modules whose rules are DNS or network lookups: blocklists, SPF/DKIM/DMARC/ARC, ASN, fuzzy hashes. */
const NETWORK_MODULES = ['rbl', 'emails', 'asn', 'spf', 'dkim', 'dmarc', 'arc', 'fuzzy_check', 'neural', 'mx_check', 'dcc', 'bimi'];

export async function startRspamd(workers: number, dnsServer: string): Promise<Anchor> {
  const dir = mkdtempSync(join(tmpdir(), 'eml-rspamd-'));
  for (const d of ['local.d', 'override.d', 'run', 'db', 'log']) mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'local.d', 'logging.inc'), `type = "file";\nfilename = "${join(dir, 'log', 'rspamd.log')}";\nlevel = "error";\n`);
  // Every lookup is refused at once (dns-refuser.ts); the modules that exist to ask the network are off.
  writeFileSync(join(dir, 'local.d', 'options.inc'), `dns { nameserver = ["${dnsServer}"]; timeout = 0.5s; retransmits = 0; }\n`);
  for (const module of NETWORK_MODULES) writeFileSync(join(dir, 'local.d', `${module}.conf`), 'enabled = false;\n');
  // hfilter's HELO and host name checks resolve names; its From, recipient and URL checks are local.
  writeFileSync(join(dir, 'local.d', 'hfilter.conf'), 'helo_enabled = false;\nhostname_enabled = false;\n');
  writeFileSync(join(dir, 'local.d', 'worker-normal.inc'), `count = ${workers};\n`);
  // Bayes needs Redis and learning; without a Redis server it stays off, as does everything else that needs one.
  chownTree(dir, '_rspamd');
  const proc = spawn('rspamd', ['-f', '-u', '_rspamd', '-g', '_rspamd', '-c', '/etc/rspamd/rspamd.conf', `--var=LOCAL_CONFDIR=${dir}`,
    `--var=RUNDIR=${join(dir, 'run')}`, `--var=DBDIR=${join(dir, 'db')}`, `--var=LOGDIR=${join(dir, 'log')}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = `http://127.0.0.1:${RSPAMD_PORT}`;
  await waitFor(async () => (await fetch(`${url}/ping`)).ok, proc, 'rspamd');
  return {
    name: 'rspamd', pid: proc.pid!,
    version: firstLine(spawnSync('rspamd', ['--version']).stdout.toString()).replace(/^Rspamd daemon version /, ''),
    async check(message) {
      const res = await fetch(`${url}/checkv2`, { method: 'POST', body: message });
      const j = (await res.json()) as { action?: string; score?: number };
      if (typeof j.action !== 'string') throw new Error(`rspamd answered ${res.status} without an action`);
      return { spam: j.action === 'add header' || j.action === 'rewrite subject' || j.action === 'reject', score: j.score ?? 0 };
    },
    stop: () => stopProcess(proc, dir),
  };
}

export async function startSpamd(workers: number): Promise<Anchor> {
  const dir = mkdtempSync(join(tmpdir(), 'eml-spamd-'));
  const site = join(dir, 'site');
  mkdirSync(site);
  mkdirSync(join(dir, 'home'));
  for (const f of readdirSync('/etc/spamassassin').filter((n) => n.endsWith('.pre'))) {
    writeFileSync(join(site, f), spawnSync('cat', [join('/etc/spamassassin', f)]).stdout);
  }
  // -L (below) already skips network tests; these keep the run from learning the corpus.
  writeFileSync(join(site, 'local.cf'), 'use_bayes 0\nbayes_auto_learn 0\nskip_rbl_checks 1\ndns_available no\n');
  chownTree(dir, 'debian-spamd');
  const proc = spawn('/usr/sbin/spamd', ['-L', '-x', '-u', 'debian-spamd', `--siteconfigpath=${site}`, '-i', '127.0.0.1', '-A', '127.0.0.1',
    '-p', String(SPAMD_PORT), '-m', String(workers), `--min-children=${workers}`, '--min-spare=1', `--max-spare=${workers}`,
    `--helper-home-dir=${join(dir, 'home')}`, '-s', 'stderr'], { stdio: ['ignore', 'ignore', 'pipe'] });
  await waitFor(async () => (await spamdRequest('PING SPAMC/1.5\r\n\r\n')).startsWith('SPAMD/1.5 0 PONG'), proc, 'spamd');
  return {
    name: 'SpamAssassin', pid: proc.pid!,
    version: firstLine(spawnSync('spamassassin', ['--version']).stdout.toString()).replace(/^SpamAssassin version /, ''),
    async check(message) {
      const head = `CHECK SPAMC/1.5\r\nContent-length: ${message.length}\r\n\r\n`;
      const answer = await spamdRequest(Buffer.concat([Buffer.from(head), message]));
      const m = /^Spam: (True|False) ; (-?[\d.]+) \//m.exec(answer);
      if (m === null) throw new Error(`spamd answered ${JSON.stringify(answer.slice(0, 200))}`);
      return { spam: m[1] === 'True', score: Number(m[2]) };
    },
    stop: () => stopProcess(proc, dir),
  };
}

function spamdRequest(request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(SPAMD_PORT, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.setTimeout(60_000, () => socket.destroy(new Error('spamd did not answer in 60 s')));
    socket.end(request);
  });
}

async function waitFor(ready: () => Promise<boolean>, proc: ChildProcess, name: string): Promise<void> {
  let stderr = '';
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (c: string) => { stderr = (stderr + c).slice(-4000); });
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode} during start-up:\n${stderr}`);
    try {
      if (await ready()) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 250));
  }
  proc.kill('SIGTERM');
  throw new Error(`${name} did not start within ${START_TIMEOUT_MS / 1000} s:\n${stderr}`);
}

async function stopProcess(proc: ChildProcess, dir: string): Promise<void> {
  if (proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(dir, { recursive: true, force: true });
}

function chownTree(dir: string, user: string): void {
  const id = spawnSync('id', ['-u', user]).stdout.toString().trim();
  const gid = spawnSync('id', ['-g', user]).stdout.toString().trim();
  if (id === '' || gid === '') throw new Error(`user ${user} is missing (is the Debian package installed?)`);
  const walk = (p: string) => {
    chownSync(p, Number(id), Number(gid));
    for (const e of readdirSync(p, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(p, e.name));
      else chownSync(join(p, e.name), Number(id), Number(gid));
    }
  };
  walk(dir);
}

function firstLine(s: string): string {
  return s.split('\n', 1)[0]!.trim();
}
