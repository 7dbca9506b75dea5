// Smuggling-shaped framing (src/abuse/smuggling.ts), with headers as the HTTP layer copies them
// (repeated headers joined with ", ").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { smugglingShape } from '../../src/abuse/smuggling.js';

test('ordinary framing is not smuggling', () => {
  assert.equal(smugglingShape({}), null);
  assert.equal(smugglingShape({ 'content-length': '0' }), null);
  assert.equal(smugglingShape({ 'content-length': '1234' }), null);
  assert.equal(smugglingShape({ 'transfer-encoding': 'chunked' }), null);
  assert.equal(smugglingShape({ 'transfer-encoding': 'Chunked' }), null);
});

test('Content-Length with Transfer-Encoding (CL.TE / TE.CL)', () => {
  assert.equal(smugglingShape({ 'content-length': '5', 'transfer-encoding': 'chunked' }), 'cl_te');
  assert.equal(smugglingShape({ 'content-length': '0', 'transfer-encoding': 'identity' }), 'cl_te');
});

test('duplicate or malformed Content-Length', () => {
  assert.equal(smugglingShape({ 'content-length': '5, 5' }), 'duplicate_cl');
  assert.equal(smugglingShape({ 'content-length': '5, 6' }), 'duplicate_cl');
  for (const v of ['+5', '-1', '5 ', ' 5', '0x10', '5e2', '', '١٢']) assert.equal(smugglingShape({ 'content-length': v }), 'bad_cl', JSON.stringify(v));
});

test('obfuscated or repeated Transfer-Encoding (TE.TE)', () => {
  for (const v of ['chunked, chunked', 'xchunked', 'chunked ', ' chunked', 'chunked;q=1', 'gzip, chunked', 'identity', 'chunk', '']) {
    assert.equal(smugglingShape({ 'transfer-encoding': v }), 'bad_te', JSON.stringify(v));
  }
});
