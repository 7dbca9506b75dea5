// The embedded database's files readable by the service's user only. PGlite's Emscripten file
// system ignores the process umask: it creates each file and then chmods it to the mode asked for,
// 0666 for most of them (measured: 968 of 1,027 files of a new data directory), so only the data
// directory's 0700 kept other users out. OwnerOnlyNodeFS applies a 077 umask to every such chmod;
// restrictToOwner mends files that were copied in (the build-time template keeps its 0666 modes)
// or written by an earlier version.
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { NodeFS } from '@electric-sql/pglite/nodefs';

type InitResult = Awaited<ReturnType<NodeFS['init']>>;
type EmscriptenFs = { chmod: (path: unknown, mode: number, dontFollow?: boolean) => unknown };

const GROUP_OTHER = 0o077;

/** PGlite's NodeFS (a directory on disk) whose chmods never grant group or other permissions. */
export class OwnerOnlyNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS['init']>): Promise<InitResult> {
    const result = await super.init(...args);
    const opts = result.emscriptenOpts;
    // NodeFS mounts the directory in its own preRun; this one runs after it, before any file is made.
    opts.preRun = [...(opts.preRun ?? []), (mod: { FS: EmscriptenFs }) => {
      const fs = mod.FS;
      const chmod = fs.chmod.bind(fs);
      fs.chmod = (path, mode, dontFollow) => chmod(path, mode & ~GROUP_OTHER, dontFollow);
    }] as typeof opts.preRun;
    return result;
  }
}

/**
 * Creates `dir` (0700) when missing, else removes group and other permission bits from it and
 * everything under it (symlinks left alone).
 */
export function restrictToOwner(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stack = [dir];
  while (stack.length > 0) {
    const path = stack.pop()!;
    const st = lstatSync(path);
    if (st.isSymbolicLink()) continue;
    if ((st.mode & GROUP_OTHER) !== 0) chmodSync(path, st.mode & 0o7700);
    if (st.isDirectory()) for (const name of readdirSync(path)) stack.push(join(path, name));
  }
}
