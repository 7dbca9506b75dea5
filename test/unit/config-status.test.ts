// src/config/status.ts tells the truth: a variable marked implemented is read somewhere outside the
// modules that load the configuration (directly, or through the property loadConfig derives from
// it), and one marked planned or ignored is read nowhere. Reads are found with the TypeScript parser
// (test/helpers/config-reads.ts), so a mention in a comment or a string does not count.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { IMPLEMENTED, STATUS, VARIABLES, type VariableName } from '../../src/config/index.js';
import { propertyReads } from '../helpers/config-reads.js';

const root = new URL('../../../', import.meta.url).pathname;
const reads = propertyReads(root);

/**
 * Variables that loadConfig (src/config/load.ts) or the secrets resolver (src/secrets.ts) turn into
 * another property of Config: the rest of the code reads that property instead.
 */
const DERIVED: Partial<Record<VariableName, readonly string[]>> = {
  WORKERS: ['workers'],
  CONTAINER_CPUS: ['workers', 'powMaxThreads'],
  POW_MAX_THREADS: ['powMaxThreads'],
  SECRET_SEED: ['secrets'],
  SECRET_SEED_ROTATE: ['secrets'],
};

const names = Object.keys(VARIABLES) as VariableName[];

test('every variable has a status, and a planned or ignored one says what happens today', () => {
  assert.deepEqual(Object.keys(STATUS).sort(), [...names].sort());
  for (const name of names) {
    const status = STATUS[name];
    if (status === IMPLEMENTED) continue;
    assert.ok(status.status === 'planned' || status.status === 'ignored', name);
    assert.ok(status.today.length >= 20 && !status.today.includes('\n'), `${name}: one line saying what happens today`);
  }
});

test('a variable marked implemented is read outside src/config/ (or its derived property is)', () => {
  const unread = names.filter((name) => {
    if (STATUS[name] !== IMPLEMENTED) return false;
    const via = [name, ...(DERIVED[name] ?? [])];
    return !via.some((property) => (reads.get(property)?.size ?? 0) > 0);
  });
  assert.deepEqual(unread, [], 'marked implemented in src/config/status.ts, but nothing outside src/config/ reads them');
});

test('a variable marked planned or ignored is read nowhere outside src/config/ (flip it to IMPLEMENTED once it is)', () => {
  const read = names
    .filter((name) => STATUS[name] !== IMPLEMENTED && (reads.get(name)?.size ?? 0) > 0)
    .map((name) => `${name} (${[...reads.get(name)!].join(', ')})`);
  assert.deepEqual(read, []);
});

test('the scanner counts property reads, not mentions in comments, strings or the configuration modules', () => {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-config-reads-'));
  try {
    mkdirSync(join(dir, 'src/config'), { recursive: true });
    mkdirSync(join(dir, 'src/routes'), { recursive: true });
    writeFileSync(join(dir, 'src/config/load.ts'), 'export const x = (c: any) => c.IN_CONFIG;\n');
    writeFileSync(join(dir, 'src/secrets.ts'), 'export const y = (c: any) => c.IN_SECRETS;\n');
    writeFileSync(join(dir, 'src/routes/a.ts'), [
      '// config.IN_COMMENT',
      "const s = 'IN_STRING config.IN_STRING_TOO';",
      'type T = Pick<Config, \'IN_TYPE\'>;',
      'export function f(config: any) {',
      '  const { DESTRUCTURED, RENAMED: other } = config;',
      "  return [config.ACCESSED, config['BRACKETED'], DESTRUCTURED, other, s];",
      '}',
    ].join('\n'));
    const found = propertyReads(dir);
    assert.deepEqual([...found.keys()].filter((k) => /^[A-Z_]+$/.test(k)).sort(), ['ACCESSED', 'BRACKETED', 'DESTRUCTURED', 'RENAMED']);
    assert.deepEqual([...found.get('ACCESSED')!], ['src/routes/a.ts']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // In this tree: MYSQL_URL is named in src/db/engines.ts only as a string of a list.
  assert.equal(reads.get('MYSQL_URL'), undefined);
  assert.ok(reads.get('REDIS_URL')?.has('src/primary/data.ts'));
});
