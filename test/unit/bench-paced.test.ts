// The paced generator (bench/lib/paced.ts) keeps its connections open between requests; a server
// closes a keep-alive connection that stays idle long enough (uWS after 10 s, which the last
// connections of a 10 s run can reach). A connection closed while idle must leave the pool rather
// than take the next request and lose it (it then waited for an answer until the end of the run).
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { runPaced } from '../../bench/lib/paced.js';

test('bench paced: a connection the server closes while idle leaves the pool, and every request is answered', async () => {
  let connections = 0;
  const sockets = new Set<Socket>();
  // Answers each request, then closes the connection once it has been idle for 30 ms; the generator
  // sends one request every 100 ms.
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    let idle: NodeJS.Timeout | undefined;
    socket.on('data', () => {
      clearTimeout(idle);
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      idle = setTimeout(() => socket.end(), 30);
    });
    socket.on('close', () => { clearTimeout(idle); sockets.delete(socket); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    // 1.05 s: ten requests are due, whatever the rounding of the run's last tick.
    const r = await runPaced({ url: `http://127.0.0.1:${port}`, request: { method: 'GET', path: '/' }, rate: 10, durationS: 1.05, connections: 2 });
    assert.deepEqual({ statusCodes: r.statusCodes, errors: r.errors, timeouts: r.timeouts }, { statusCodes: { 200: 10 }, errors: 0, timeouts: 0 });
    assert.ok(connections > 2, `the closed connections were replaced (${connections} opened)`);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});
