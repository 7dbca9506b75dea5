// Palisade as the e-mail comparison runs it: a fresh data directory with one API key (its secret
// kept for the Bearer header), the service on every core, the flood limit off (the runner is one
// client sending thousands of messages) and DNS pointed at the loopback server that refuses every
// query, as for the anchors (the MX rule then scores 0). Messages go to POST /v1/eml without X-Authenticate (SPF, DKIM and DMARC need DNS, which
// none of the three may use here); spam is a BAD classification (the default bands).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/index.js';
import { ensureDefaultAccount } from '../../src/db/accounts.js';
import { openDatabase } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { createApiKey } from '../../src/keys/api-keys.js';
import { createKeySecrets, deriveApiKeySecretKey } from '../../src/keys/secrets.js';
import { startEmbeddedDatabase } from '../../src/primary/embedded-db.js';
import { spawnServer } from '../lib/processes.js';
import type { Anchor, Verdict } from './anchors.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface PalisadeVerdict extends Verdict {
  /** NEUTRAL or BAD: the "flag for review" band. */
  readonly neutralOrWorse: boolean;
}

export interface PalisadeTarget extends Omit<Anchor, 'check'> {
  check(message: Buffer): Promise<PalisadeVerdict>;
}

export async function startPalisadeEml(workers: number, secretSeed: string, dnsServer: string): Promise<PalisadeTarget> {
  // Short paths: the embedded database's socket path must fit in sun_path (107 bytes).
  const root = mkdtempSync(join(tmpdir(), 'pe-'));
  const dataDir = join(root, 'd');
  const config = loadConfig({ env: { DATA_DIR: dataDir, SECRET_SEED: secretSeed }, persistSecrets: true, detectedCpus: 1 });
  const embedded = await startEmbeddedDatabase({ dataDir: config.dataDir, location: config.EMBEDDED_DB_DATABASE_LOCATION });
  const db = openDatabase({ socketPath: embedded.socketPath, maxConnections: 2 });
  let secret: string;
  try {
    await migrate(db.sql);
    const account = await ensureDefaultAccount(db.sql, config.DEFAULT_ACCOUNT_NAME);
    const secrets = createKeySecrets(deriveApiKeySecretKey(config.secrets.PALISADE_HMAC_SECRET), config.secrets.HASHING_SALT);
    ({ secret } = await createApiKey(db.sql, secrets, { accountId: account.id, name: 'bench-eml', hostnames: [], challengePolicy: null }, 'bench'));
  } finally {
    await db.close();
    await embedded.close();
  }
  const server = await spawnServer({
    name: 'palisade', script: MAIN, readyPath: '/.live', timeoutMs: 120_000,
    env: {
      WORKERS: String(workers), DATA_DIR: dataDir, SECRET_SEED: secretSeed, LOG_LEVEL: 'warn', FLOOD_RATE_LIMIT: '',
      DNS_SERVERS: dnsServer, DNS_TIMEOUT: '500ms',
    },
  });
  const authorization = `Bearer ${secret}`;
  const url = `${server.url}/v1/eml`;
  const version = (JSON.parse((await import('node:fs')).readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return {
    name: 'Palisade', version, pid: server.proc.pid!,
    async check(message) {
      const res = await fetch(url, { method: 'POST', headers: { authorization, 'content-type': 'message/rfc822' }, body: message });
      const j = (await res.json()) as { classification?: { classification: string; score: number }; error?: string };
      if (res.status !== 200 || j.classification === undefined) throw new Error(`/v1/eml answered ${res.status} ${j.error ?? ''}`);
      const c = j.classification.classification;
      return { spam: c === 'BAD', neutralOrWorse: c !== 'GOOD', score: j.classification.score };
    },
    async stop() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
