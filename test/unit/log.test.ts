// The logger: the access log's hand-written line is exactly pino's, goes to the same destination and
// tap, honours the level and the plain format; logger.flush() reaches the destination.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { accessLog, BATCH_MS, createLogger, plainLine, type LoggerOptions } from '../../src/log.js';

function capture(options: Omit<LoggerOptions, 'destination'> = {}) {
  const lines: string[] = [];
  const tapped: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, done) { lines.push(chunk.toString()); done(); },
  });
  const logger = createLogger({ ...options, destination, tap: (l) => tapped.push(l) });
  return { logger, lines, tapped };
}
const untimed = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"');

const RECORDS = [
  { ip: '203.0.113.0', method: 'GET', path: '/v1/challenge', status: 200, ms: 0.42 },
  { ip: '2001:db8:1::', method: 'POST', path: '/v1/verify', status: 503, ms: 12 },
  { ip: '198.51.100.0', method: 'GET', path: '/a "quoted"\\path\n\u2028é\u0000/../../etc/passwd', status: 404, ms: 1.5 },
];

test('accessLog writes the line pino writes for child({type:"access"}).info(record)', () => {
  for (const base of [undefined, { worker: 3 }, { role: 'primary' }]) {
    const { logger, lines, tapped } = capture({ base });
    const access = accessLog(logger);
    const child = logger.child({ type: 'access' });
    for (const record of RECORDS) {
      child.info(record);
      access(record);
    }
    assert.equal(lines.length, 2 * RECORDS.length);
    for (let i = 0; i < RECORDS.length; i++) {
      const [viaPino, direct] = [lines[2 * i]!, lines[2 * i + 1]!];
      assert.equal(untimed(direct), untimed(viaPino));
      assert.ok(direct.endsWith('}\n'));
      const parsed = JSON.parse(direct) as Record<string, unknown>;
      assert.equal(parsed.path, RECORDS[i]!.path);
      assert.equal(parsed.pid, process.pid);
      assert.match(parsed.time as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.deepEqual(tapped, lines.map((l) => l.trimEnd()));
  }
});

test('accessLog writes nothing below level info, and plain lines in the plain format', () => {
  const quiet = capture({ level: 'warn' });
  accessLog(quiet.logger)(RECORDS[0]!);
  assert.deepEqual(quiet.lines, []);

  const plain = capture({ format: 'plain', base: { worker: 1 } });
  accessLog(plain.logger)(RECORDS[0]!);
  assert.equal(plain.lines.length, 1);
  assert.match(plain.lines[0]!, /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO  worker=1 type=access ip=203\.0\.113\.0 method=GET path=\/v1\/challenge status=200 ms=0\.42\n$/);
  assert.equal(plain.lines[0], `${plainLine(plain.tapped[0]!)}\n`);
});

test('a non-finite duration is written as null, keeping the line JSON', () => {
  const { logger, lines } = capture();
  accessLog(logger)({ ...RECORDS[0]!, ms: Number.NaN });
  assert.equal((JSON.parse(lines[0]!) as { ms: unknown }).ms, null);
});

test('logger.flush() flushes a destination that buffers (flushSync) and calls back', () => {
  let flushed = 0;
  const destination = Object.assign(new Writable({ write(_c, _e, done) { done(); } }), { flushSync: () => { flushed++; } });
  const logger = createLogger({ destination });
  let called = false;
  logger.flush(() => { called = true; });
  logger.flush();
  assert.equal(flushed, 2);
  assert.equal(called, true);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('batch: the lines of BATCH_MS reach the destination as one write, in order; 16 KB hands over early; flush() hands over at once', async () => {
  const { logger, lines, tapped } = capture({ batch: true, base: { worker: 2 } });
  const access = accessLog(logger);
  logger.warn({ n: 1 }, 'first');
  access(RECORDS[0]!);
  assert.equal(tapped.length, 2, 'the tap still gets each line at once');
  await new Promise((resolve) => setImmediate(resolve));
  logger.error({ n: 2 }, 'third');
  assert.equal(lines.length, 0, 'nothing written at the end of the turn: the batch waits for BATCH_MS');
  await sleep(BATCH_MS + 30);
  assert.equal(lines.length, 1, 'the lines of two turns in one write');
  assert.deepEqual(lines[0]!.split('\n'), [...tapped, '']);
  assert.deepEqual(lines[0]!.split('\n').slice(0, 3).map((l) => (JSON.parse(l) as { msg?: string; type?: string }).msg ?? 'access'),
    ['first', 'access', 'third']);

  // 200 access lines of ~150 bytes in one turn: handed over each time 16 KB is reached, nothing lost.
  lines.length = 0;
  tapped.length = 0;
  for (let i = 0; i < 200; i++) access({ ...RECORDS[1]!, status: 200 + (i % 100) });
  assert.ok(lines.length >= 1, 'handed over before the turn ended');
  for (const chunk of lines) assert.ok(chunk.length < 16 * 1024 + 200, String(chunk.length));
  logger.flush();
  const all = lines.join('');
  assert.equal(all, tapped.map((l) => `${l}\n`).join(''));
  assert.equal(all.split('\n').length - 1, 200);
  await sleep(BATCH_MS + 30);
  assert.equal(lines.join(''), all, 'nothing written twice after the flush');

  // A line after a hand-over starts a new batch, which is written on its own timer.
  lines.length = 0;
  logger.info('late');
  await sleep(BATCH_MS + 30);
  assert.equal(lines.length, 1);
  assert.equal((JSON.parse(lines[0]!) as { msg: string }).msg, 'late');
});

test('batch: a process whose last act is to log still writes the line (the batch timer keeps it alive)', async () => {
  const { spawnSync } = await import('node:child_process');
  const logModule = new URL('../../src/log.js', import.meta.url).href;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e',
    `import { createLogger } from ${JSON.stringify(logModule)}; createLogger().info('last words');`], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(child.status, 0, child.stderr);
  assert.equal((JSON.parse(child.stdout.trim()) as { msg: string }).msg, 'last words');
});

test('without batch (the default for a given destination) every line is written at once', () => {
  const { logger, lines } = capture();
  logger.info('a');
  accessLog(logger)(RECORDS[0]!);
  assert.equal(lines.length, 2);
});

test('secrets stay redacted in pino records', () => {
  const { logger, lines } = capture();
  logger.info({ secret: 'sec_abc', nested: { secret: 'x' }, authorization: 'Bearer y' }, 'm');
  assert.doesNotMatch(lines[0]!, /sec_abc|Bearer y|"x"/);
  assert.equal((JSON.parse(lines[0]!) as { secret: string }).secret, '<hidden>');
});
