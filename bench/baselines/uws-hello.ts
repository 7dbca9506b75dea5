// Baseline L: the practical limit of the machine. A bare uWebSockets.js "hello world" on a
// node:cluster of the same worker count as the service; each worker listens on PORT itself (uSockets
// sets SO_REUSEPORT, so the kernel spreads connections, as with the service). A GET is answered at
// once; a body is read to the end first, so a POST costs what reading the same request costs.
//   PORT=8080 WORKERS=2 node dist/bench/baselines/uws-hello.js
import uWS from 'uWebSockets.js';
import { runClustered } from './cluster.js';

const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);
const BODY = Buffer.from('Hello World!');

await runClustered(() => {
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
});
