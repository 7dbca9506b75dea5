// The MX lookups' cache and deadline against a loopback DNS server: found, non-existent and failed
// verdicts are each cached for their own time (counted as hits, no query sent), entries expire,
// the least recently used is dropped past the size, concurrent lookups of one domain share one
// query, a lookup past the in-flight bound is unknown at once, SERVFAIL is unknown, and an answer
// that misses the deadline still fills the cache.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMxLookup } from '../../src/classifier/mx-lookup.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';

describe('MX lookups', () => {
  let dns: DnsServer;
  before(async () => {
    dns = await startDnsServer();
    dns.zones.set('good.com', { kind: 'records', mx: [{ preference: 10, exchange: 'mx.good.com' }] });
    dns.zones.set('other.com', { kind: 'records', mx: [{ preference: 10, exchange: 'mx.other.com' }] });
    dns.zones.set('third.com', { kind: 'records', mx: [{ preference: 10, exchange: 'mx.third.com' }] });
    dns.zones.set('slow.com', { kind: 'records', mx: [{ preference: 10, exchange: 'mx.slow.com' }], delayMs: 150 });
    dns.zones.set('aslow.com', { kind: 'records', a: ['192.0.2.1'], delayMs: 60 });
    dns.zones.set('broken.com', { kind: 'servfail' });
    dns.zones.set('hang.com', { kind: 'hang' });
  });
  after(async () => { await dns.close(); });
  const queries = (name: string, type = 'MX') => dns.queries.get(`${name} ${type}`) ?? 0;

  test('found, non-existent and failed verdicts are cached for their own time', async () => {
    let clock = 1_000_000;
    const mx = createMxLookup({
      servers: [dns.server], timeoutMs: 200, positiveTtlMs: 60_000, negativeTtlMs: 10_000, failureTtlMs: 1000, now: () => clock,
    });
    try {
      const q0 = [queries('good.com'), queries('nx-cache.com'), queries('hang.com')];
      assert.equal(await mx.lookup('good.com'), 'mx');
      assert.equal(await mx.lookup('nx-cache.com'), 'nxdomain');
      assert.equal(await mx.lookup('hang.com'), 'unknown');
      for (let i = 0; i < 3; i++) {
        assert.equal(await mx.lookup('good.com'), 'mx');
        assert.equal(await mx.lookup('nx-cache.com'), 'nxdomain');
        assert.equal(await mx.lookup('hang.com'), 'unknown');
      }
      assert.deepEqual([queries('good.com'), queries('nx-cache.com'), queries('hang.com')], q0.map((q) => q + 1));
      assert.deepEqual(mx.stats(), { lookups: 3, positiveHits: 3, negativeHits: 3, failureHits: 3, joined: 0, cached: 3 });
      clock += 1001; // the failure expires
      assert.equal(await mx.lookup('hang.com'), 'unknown');
      assert.equal(queries('hang.com'), q0[2]! + 2);
      clock += 9000; // and the negative answer
      assert.equal(await mx.lookup('nx-cache.com'), 'nxdomain');
      assert.equal(queries('nx-cache.com'), q0[1]! + 2);
      assert.equal(await mx.lookup('good.com'), 'mx');
      assert.equal(queries('good.com'), q0[0]! + 1, 'the found answer is still fresh');
      clock += 60_000;
      assert.equal(await mx.lookup('good.com'), 'mx');
      assert.equal(queries('good.com'), q0[0]! + 2);
    } finally {
      mx.close();
    }
  });

  test('the least recently used domain is dropped past the cache size', async () => {
    const mx = createMxLookup({ servers: [dns.server], timeoutMs: 500, cacheSize: 2 });
    try {
      const q0 = queries('good.com');
      await mx.lookup('good.com');
      await mx.lookup('other.com');
      await mx.lookup('good.com'); // hit: good.com is now the most recent
      await mx.lookup('third.com'); // drops other.com
      assert.equal(mx.stats().cached, 2);
      const q1 = queries('other.com');
      await mx.lookup('good.com');
      assert.equal(queries('good.com'), q0 + 1);
      await mx.lookup('other.com');
      assert.equal(queries('other.com'), q1 + 1);
    } finally {
      mx.close();
    }
  });

  test('concurrent lookups of one domain share one query', async () => {
    const mx = createMxLookup({ servers: [dns.server], timeoutMs: 1000 });
    try {
      const q0 = queries('slow.com');
      const verdicts = await Promise.all(Array.from({ length: 5 }, () => mx.lookup('slow.com')));
      assert.deepEqual(verdicts, ['mx', 'mx', 'mx', 'mx', 'mx']);
      assert.equal(queries('slow.com'), q0 + 1);
      assert.equal(mx.stats().joined, 4);
    } finally {
      mx.close();
    }
  });

  test('past the in-flight bound a new domain is unknown at once, without a query', async () => {
    const mx = createMxLookup({ servers: [dns.server], timeoutMs: 300, maxInFlight: 1 });
    try {
      const pending = mx.lookup('hang.com');
      const q0 = queries('good.com');
      const started = performance.now();
      assert.equal(await mx.lookup('good.com'), 'unknown');
      assert.ok(performance.now() - started < 150);
      assert.equal(queries('good.com'), q0);
      assert.equal(await pending, 'unknown');
      assert.equal(await mx.lookup('good.com'), 'mx', 'room again: looked up');
    } finally {
      mx.close();
    }
  });

  test('SERVFAIL is unknown', async () => {
    const mx = createMxLookup({ servers: [dns.server], timeoutMs: 500 });
    try {
      assert.equal(await mx.lookup('broken.com'), 'unknown');
    } finally {
      mx.close();
    }
  });

  test('an answer that misses the deadline still fills the cache', async () => {
    // Every answer 60 ms late: the 40 ms deadline passes during the MX query; c-ares waits longer
    // (80 ms), gets "no MX", asks A (60 ms more) and the lookup caches the implicit MX.
    const mx = createMxLookup({ servers: [dns.server], timeoutMs: 40 });
    try {
      assert.equal(await mx.lookup('aslow.com'), 'unknown');
      await sleep(250);
      assert.equal(await mx.lookup('aslow.com'), 'implicit');
      assert.equal(queries('aslow.com', 'A'), 1);
      assert.equal(mx.stats().positiveHits, 1);
    } finally {
      mx.close();
    }
  });
});
