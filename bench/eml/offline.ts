// Running a bench script offline: the script starts itself again inside a new network namespace
// (`unshare -n`, loopback up), where no address but 127.0.0.1 exists, so that "offline" is a fact
// of the run rather than a list of settings. The inner run is told by `--inner`.
import { spawnSync } from 'node:child_process';

/** Runs `script` again with `--inner` and `args` in a namespace with loopback only; exits the process when that run fails. */
export function rerunOffline(script: string, args: readonly string[]): void {
  const r = spawnSync('unshare', ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, script, '--inner', ...args], { stdio: 'inherit' });
  if (r.error !== undefined || r.status !== 0) {
    console.error(r.error !== undefined
      ? `${r.error.message} (unshare -n, from util-linux, needs root or CAP_SYS_ADMIN: the filters must run without a network)`
      : `the run ended with ${r.status ?? r.signal}`);
    process.exit(1);
  }
}
