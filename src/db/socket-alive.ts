// Is the embedded database served? (a connect attempt on its Unix socket; cheap, loads no PGlite)
import { connect } from 'node:net';

/** Does something accept connections on this Unix socket? */
export function socketAlive(path: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const done = (alive: boolean) => { socket.destroy(); resolve(alive); };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
