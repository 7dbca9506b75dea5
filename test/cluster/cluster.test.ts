import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { availableParallelism } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { childPids, createTestKey, startService, type Service } from '../helpers/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET on a fresh connection each time, so the kernel spreads requests over the workers. */
async function get(url: string): Promise<Response> {
  return fetch(url, { headers: { connection: 'close' } });
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('cluster of two workers', () => {
  let svc: Service;
  before(async () => { svc = await startService({ env: { WORKERS: '2', LOG_LEVEL: 'info' } }); });
  after(async () => { await svc.stop(); });

  test('metrics: every spec metric, request counts aggregated across workers', async () => {
    const pids = await childPids(svc.proc.pid!);
    assert.equal(pids.length, 2);
    const before = await (await get(`${svc.url}/.metrics`)).text();
    const count = (text: string) => Number(/^palisade_http_request_duration_seconds_count (\d+)/m.exec(text)?.[1]);
    const n0 = count(before);
    for (let i = 0; i < 40; i++) assert.equal((await get(`${svc.url}/.live`)).status, 200);
    const res = await get(`${svc.url}/.metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    // The /.metrics request before is counted too.
    assert.equal(count(text), n0 + 41);
    for (const name of [
      'palisade_api_challenges_total', 'palisade_api_verifications_success_total', 'palisade_api_verifications_failed_total',
      'palisade_http_requests_per_minute', 'palisade_http_status_4xx_total', 'palisade_http_status_5xx_total',
      'palisade_http_request_duration_seconds_bucket', 'palisade_process_cpu_seconds_total',
      'palisade_process_resident_memory_bytes', 'palisade_nodejs_heap_size_used_bytes', 'palisade_process_cpu_usage',
    ]) assert.match(text, new RegExp(`^(# TYPE )?${name}`, 'm'), name);
    // The spec's CPU usage gauge, summed over the workers: cores busy, between 0 and the machine's cores.
    const cpu = Number(/^palisade_process_cpu_usage ([\d.e-]+)$/m.exec(text)?.[1]);
    assert.ok(cpu >= 0 && cpu <= availableParallelism(), `cpu usage ${cpu}`);
    assert.ok(Number(/^palisade_http_requests_per_minute (\d+)/m.exec(text)?.[1]) >= 41);
    // The workers share one state table: its capacity is STATE_STORE_CAPACITY's default, not twice it,
    // and a service that has answered a few dozen requests has next to nothing live in it.
    assert.match(text, /^palisade_state_store_capacity_slots 4194304$/m);
    const load = Number(/^palisade_state_store_load ([\d.e-]+)$/m.exec(text)?.[1]);
    assert.ok(load >= 0 && load < 0.001, `state store load ${load}`);
  });

  test('/.logs streams the lines of both workers, as NDJSON or plain', async () => {
    const controller = new AbortController();
    const res = await fetch(`${svc.url}/.logs?format=json`, { signal: controller.signal });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
    const reader = res.body!.getReader();
    const workers = new Set<number>();
    let buffered = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      while (workers.size < 2) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        for (const line of buffered.split('\n').slice(0, -1)) {
          const record = JSON.parse(line) as { type?: string; worker?: number; path?: string };
          if (record.type === 'access' && record.path === '/logs-probe') workers.add(record.worker!);
        }
      }
    })();
    await sleep(200);
    for (let i = 0; i < 60 && workers.size < 2; i++) {
      await get(`${svc.url}/logs-probe`);
      await sleep(10);
    }
    await Promise.race([reading, sleep(5000)]);
    controller.abort();
    assert.deepEqual([...workers].sort(), [1, 2]);

    const plain = new AbortController();
    const res2 = await fetch(`${svc.url}/.logs`, { signal: plain.signal });
    assert.equal(res2.headers.get('content-type'), 'text/plain; charset=utf-8');
    const r2 = res2.body!.getReader();
    const first = new TextDecoder().decode((await r2.read()).value);
    assert.match(first, /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO log stream opened\n/);
    await sleep(100);
    await get(`${svc.url}/plain-probe`);
    let text = '';
    while (!text.includes('plain-probe')) text += new TextDecoder().decode((await r2.read()).value);
    plain.abort();
    assert.match(text, /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO .*method=GET path=\/plain-probe status=404/m);
  });

  test('/.logs drops a reader that does not keep up; the service is not slowed', async () => {
    const socket = connect(svc.port, '127.0.0.1');
    socket.setNoDelay(true);
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /.logs?format=json HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.pause();
    // Each request logs one access line of ~6 KB: 6,000 lines is far more than socket buffers hold.
    const long = `/${'x'.repeat(6000)}`;
    const started = Date.now();
    for (let i = 0; i < 6000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, () => fetch(`${svc.url}${long}`).then((r) => r.arrayBuffer())));
    }
    assert.ok(Date.now() - started < 60_000);
    // Reading now, the connection must end: the server dropped the reader.
    const ended = new Promise<boolean>((resolve) => {
      socket.on('close', () => resolve(true));
      setTimeout(() => resolve(false), 10_000);
    });
    socket.resume();
    socket.on('data', () => {});
    assert.equal(await ended, true);
    socket.destroy();
    assert.equal((await get(`${svc.url}/.live`)).status, 200);
  });

  test('security.txt is served by default', async () => {
    const res = await get(`${svc.url}/.well-known/security.txt`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(await res.text(), /^Contact: .+\nExpires: /);
  });

  test('a killed worker is replaced and the service keeps answering', async () => {
    const pids = await childPids(svc.proc.pid!);
    assert.equal(pids.length, 2);
    process.kill(pids[0]!, 'SIGKILL');
    let ok = 0;
    for (let i = 0; i < 30; i++) {
      try {
        if ((await get(`${svc.url}/.live`)).status === 200) ok++;
      } catch { /* a connection queued on the dying worker */ }
    }
    assert.ok(ok >= 28, `answered ${ok} of 30 while a worker was down`);
    const replaced = await waitFor('a new worker', async () => {
      const now = await childPids(svc.proc.pid!);
      return now.length === 2 && !now.includes(pids[0]!) ? now : undefined;
    });
    assert.ok(replaced.includes(pids[1]!));
    await svc.waitForOutput(/worker died; restarting/);
  });
});

describe('crash loop and shutdown', () => {
  test('SIGTERM drains: a request in flight is answered in full, then the service exits 0', async () => {
    const svc = await startService({ env: { WORKERS: '2' } });
    const key = await createTestKey(svc);
    const socket = connect(svc.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let answer = '';
    socket.on('data', (d: Buffer) => { answer += d.toString(); });
    const closed = new Promise((r) => socket.once('close', r));
    const body = JSON.stringify({ payload: 'bm90IGEgcGF5bG9hZA==' });
    socket.write(`POST /v1/verify?apiKey=${key.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    await sleep(200);
    const exited = svc.stop('SIGTERM');
    await sleep(500);
    // Still draining: the request in flight completes.
    socket.write(body.slice(10));
    await closed;
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, /\{"verified":false,"reason":"INVALID_PAYLOAD"\}$/);
    assert.equal(await exited, 0);
  });


  test('five deaths within a minute make /.ready 503; SIGTERM exits 0', async () => {
    const svc = await startService({ env: { WORKERS: '1' } });
    try {
      assert.equal((await get(`${svc.url}/.ready`)).status, 200);
      for (let i = 0; i < 5; i++) {
        const [pid] = await waitFor('a worker', async () => {
          const p = await childPids(svc.proc.pid!);
          return p.length === 1 ? p : undefined;
        });
        process.kill(pid!, 'SIGKILL');
        await waitFor('the worker to die', async () => ((await childPids(svc.proc.pid!)).includes(pid!) ? undefined : true));
      }
      await svc.waitForOutput(/worker crash loop/);
      const res = await waitFor('the worker back', async () => {
        try { return await get(`${svc.url}/.ready`); } catch { return undefined; }
      }, 15_000);
      assert.equal(res.status, 503);
      const body = (await res.json()) as { error: string; reasons: string[]; version: string };
      assert.equal(body.error, 'NOT_READY');
      assert.deepEqual(body.reasons, ['worker crash loop']);
      assert.match(body.version, /^\d+\.\d+\.\d+/);
    } finally {
      assert.equal(await svc.stop('SIGTERM'), 0);
    }
  });
});

describe('resources', () => {
  test('CONTAINER_CPUS sizes the cluster; HEAP_LIMIT_MB reaches every worker; SECURITY_TXT=0 disables it', async () => {
    const svc = await startService({ env: { WORKERS: '', CONTAINER_CPUS: '3', HEAP_LIMIT_MB: '200', SECURITY_TXT: '0' } });
    try {
      const pids = await waitFor('three workers', async () => {
        const p = await childPids(svc.proc.pid!);
        return p.length === 3 ? p : undefined;
      });
      for (const pid of pids) {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        assert.ok(argv.includes('--max-old-space-size=200'), argv.join(' '));
      }
      assert.equal((await get(`${svc.url}/.well-known/security.txt`)).status, 404);
    } finally {
      assert.equal(await svc.stop(), 0);
    }
  });
});
