// `snapshot [FILE]` writes a snapshot of the database now (default: the scheduled snapshots' path,
// SNAPSHOTS_STORAGE_LOCAL_DIR/SNAPSHOTS_DB_PREFIX); `restore FILE` replaces the database's rows with
// a snapshot's (any engine's snapshot into any engine), or puts a Redis snapshot's keys back into
// REDIS_URL (those not expired since). Stop the service's nodes before a restore:
// their caches and buffered usage would otherwise mix with the restored rows.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { snapshotFile } from '../db/snapshot-files.js';
import { restoreSnapshot, writeSnapshot } from '../db/snapshot.js';
import { isRedisSnapshot, restoreRedisSnapshot } from '../store/redis-snapshot.js';
import { type Context, UsageError } from './context.js';

export async function snapshotCommand(rest: string[], ctx: Context): Promise<void> {
  if (rest.length > 1) throw new UsageError('snapshot takes at most one FILE');
  const at = new Date();
  const c = ctx.config;
  const file = rest[0] !== undefined ? resolve(rest[0]) : snapshotFile(c.dataDir, c.SNAPSHOTS_STORAGE_LOCAL_DIR, c.SNAPSHOTS_DB_PREFIX, at);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const stats = await writeSnapshot(ctx.db.sql, file, at);
  const total = Object.values(stats.rows).reduce((a, b) => a + b, 0);
  ctx.out(`${file}  ${total} rows`, { file, rows: stats.rows });
}

export async function restoreCommand(rest: string[], ctx: Context): Promise<void> {
  const file = rest[0];
  if (file === undefined || rest.length > 1) throw new UsageError('restore needs FILE');
  if (!existsSync(file)) throw new Error(`no such file: ${file}`);
  if (await isRedisSnapshot(file)) {
    if (!ctx.config.REDIS_URL) throw new Error('a Redis snapshot restores into REDIS_URL, which is not set');
    const r = await restoreRedisSnapshot(ctx.config.REDIS_URL, resolve(file));
    ctx.out(`restored ${r.restored} Redis keys from ${file} (snapshot of ${r.header.createdAt}; ${r.expired} had expired since)`,
      { file, createdAt: r.header.createdAt, keys: r.restored, expired: r.expired });
    return;
  }
  const result = await restoreSnapshot(ctx.db.sql, resolve(file));
  const total = Object.values(result.rows).reduce((a, b) => a + b, 0);
  ctx.out(`restored ${total} rows from ${file} (snapshot of ${result.header.createdAt}, ${result.header.engine})`,
    { file, createdAt: result.header.createdAt, engine: result.header.engine, rows: result.rows });
}
