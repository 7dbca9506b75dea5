// Baseline L: the practical limit of the machine. A bare uWebSockets.js "hello world" on a
// node:cluster of the same worker count as the service; each worker listens on PORT itself (uSockets
// sets SO_REUSEPORT, so the kernel spreads connections, as with the service). A GET is answered at
// once; a body is read to the end first, so a POST costs what reading the same request costs.
//   PORT=8080 WORKERS=2 node dist/bench/baselines/uws-hello.js
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import uWS from 'uWebSockets.js';

const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);
const workers = Number(process.env.WORKERS || availableParallelism());
const BODY = Buffer.from('Hello World!');

if (cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('exit', (_w, code, signal) => {
    if (signal !== 'SIGTERM') console.error(`worker exited with ${code ?? signal}`);
  });
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    setTimeout(() => process.exit(0), 100);
  });
} else {
  uWS.App()
    .get('/*', (res) => {
      res.end(BODY);
    })
    .any('/*', (res) => {
      let aborted = false;
      res.onAborted(() => { aborted = true; });
      res.onData((_chunk, isLast) => {
        if (isLast && !aborted) res.cork(() => res.end(BODY));
      });
    })
    .listen(port, (socket) => {
      if (!socket) {
        console.error(`cannot listen on port ${port}`);
        process.exit(1);
      }
    });
}
