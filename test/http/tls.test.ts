import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Router } from '../../src/http/router.js';
import { createHttpServer } from '../../src/http/server.js';
import { json } from '../../src/http/types.js';
import { createLogger } from '../../src/log.js';
import { parseCidrList } from '../../src/parse.js';

const dir = mkdtempSync(join(tmpdir(), 'palisade-tls-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('HTTP2_CERT / HTTP2_KEY: the server speaks TLS with the given certificate, HTTP/1.1 only', async () => {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert,
    '-days', '1', '-subj', '/CN=palisade.test'], { stdio: 'ignore' });
  const server = createHttpServer(new Router().add('GET', '/hello', () => json({ tls: true })), {
    port: 0, tls: { certFile: cert, keyFile: key }, logger: createLogger({ level: 'silent' }),
    clientIp: { trustedProxies: parseCidrList(''), ipHeadersSecret: '' },
  });
  const port = await server.listen();
  try {
    const { status, body, subject } = await new Promise<{ status: number; body: string; subject: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/hello', rejectUnauthorized: false }, (res) => {
        const subject = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN as string;
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode!, body, subject }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 200);
    assert.deepEqual(JSON.parse(body), { tls: true });
    assert.equal(subject, 'palisade.test');
    // HTTPS over HTTP/1.1 only: a client offering h2 first is not given it in ALPN.
    const alpn = await new Promise<string | false>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
        resolve(socket.alpnProtocol ?? false);
        socket.destroy();
      });
      socket.on('error', reject);
    });
    assert.notEqual(alpn, 'h2');
    // Plain HTTP on the TLS port gets no HTTP answer.
    await assert.rejects(fetch(`http://127.0.0.1:${port}/hello`, { signal: AbortSignal.timeout(1000) }));
  } finally {
    server.close();
  }
});
