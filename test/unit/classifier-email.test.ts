// The e-mail block against a loopback DNS server (test/helpers/dns-server.ts) and the embedded
// lists: exact rule scores for ordinary, free, disposable, non-existent and mail-less domains,
// the widget's "@domain" form, invalid addresses (no DNS query for them), hostile input, IDN
// domains and homographs, role and generated local parts, disabled rules, and a DNS server that
// never answers (the block comes back within the deadline, MX not fired).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { analyzeEmail, EMAIL_RULES, splitAddress, type EmailDeps } from '../../src/classifier/email.js';
import { embeddedDisposableDomains, embeddedFreeProviders } from '../../src/classifier/email-domains.js';
import { createMxLookup, type MxLookup } from '../../src/classifier/mx-lookup.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';

const NONE: ReadonlySet<string> = new Set();
const TIMEOUT_MS = 300;

/** Every rule at 0 except those given. */
function rules(fired: Record<string, number> = {}, without: readonly string[] = []): Record<string, { score: number }> {
  const out: Record<string, { score: number }> = {};
  for (const r of EMAIL_RULES) if (!without.includes(r.name)) out[r.name] = { score: fired[r.name] ?? 0 };
  return out;
}

describe('e-mail analysis', () => {
  let dns: DnsServer;
  let mx: MxLookup;
  let deps: EmailDeps;
  before(async () => {
    dns = await startDnsServer();
    dns.zones.set('acme-widgets.com', { kind: 'records', mx: [{ preference: 10, exchange: 'mx1.acme-widgets.com' }] });
    dns.zones.set('xn--bcher-kva.de', { kind: 'records', mx: [{ preference: 10, exchange: 'mail.xn--bcher-kva.de' }] });
    dns.zones.set('sub.mailinator.com', { kind: 'records', mx: [{ preference: 10, exchange: 'mail.mailinator.com' }] });
    dns.zones.set('aonly.net', { kind: 'records', a: ['192.0.2.10'] });
    dns.zones.set('v6only.net', { kind: 'records', aaaa: ['2001:db8::10'] });
    dns.zones.set('nomail.org', { kind: 'records' });
    dns.zones.set('nullmx.com', { kind: 'records', mx: [{ preference: 0, exchange: '.' }] });
    dns.zones.set('hang.io', { kind: 'hang' });
    mx = createMxLookup({ servers: [dns.server], timeoutMs: TIMEOUT_MS });
    deps = { disposable: embeddedDisposableDomains(), freeProviders: embeddedFreeProviders(), mx };
  });
  after(async () => {
    mx.close();
    await dns.close();
  });

  test('catalogue: names, scores and the e-mail dimension', () => {
    assert.deepEqual(EMAIL_RULES.map((r) => [r.name, r.score, r.dimension]), [
      ['SYNTAX', 3, 'email'], ['DISPOSABLE', 3, 'email'], ['FREE_PROVIDER', 0.2, 'email'], ['MX', 3, 'email'],
      ['IDN_HOMOGRAPH', 2, 'email'], ['ROLE', 0.5, 'email'], ['RANDOM', 1, 'email'],
    ]);
  });

  test('a gmail address scores 0.2 (FREE_PROVIDER) without any DNS query, in both forms', async () => {
    const before = dns.total();
    for (const email of ['jane.doe@gmail.com', '@gmail.com', '  Jane.Doe+forms@GMAIL.com ']) {
      const block = await analyzeEmail(email, deps, { disabled: NONE });
      assert.deepEqual(block.rules, rules({ FREE_PROVIDER: 0.2 }), email);
      assert.equal(block.score, 0.2);
      assert.equal(block.domain, 'gmail.com');
      assert.ok(block.time >= 0 && block.time < 1000);
    }
    assert.equal(dns.total(), before);
  });

  test('MX outcomes: MX 0, implicit MX (A or AAAA only) 0, no mail host 2, null MX 2, NXDOMAIN 3', async () => {
    const cases: [string, number][] = [
      ['bob@acme-widgets.com', 0], ['bob@aonly.net', 0], ['bob@v6only.net', 0], ['bob@nomail.org', 2], ['bob@nullmx.com', 2], ['bob@gone-away.de', 3],
    ];
    for (const [email, score] of cases) {
      const block = await analyzeEmail(email, deps, { disabled: NONE });
      assert.deepEqual(block.rules, rules({ MX: score }), email);
      assert.equal(block.score, score, email);
    }
    assert.equal(dns.queries.get('acme-widgets.com MX'), 1);
    assert.equal(dns.queries.get('acme-widgets.com A'), undefined, 'an MX answer needs no fallback');
    assert.equal(dns.queries.get('aonly.net A'), 1);
    assert.equal(dns.queries.get('gone-away.de MX'), 1);
    assert.equal(dns.queries.get('gone-away.de A'), undefined, 'NXDOMAIN needs no fallback');
  });

  test('a DNS server that never answers: MX does not fire and the block returns within the deadline', async () => {
    const started = performance.now();
    const block = await analyzeEmail('bob@hang.io', deps, { disabled: NONE });
    const elapsed = performance.now() - started;
    assert.deepEqual(block.rules, rules());
    assert.equal(block.score, 0);
    // c-ares alone would wait 2 × 300 ms or more; the deadline ends the lookup at 300 ms.
    assert.ok(elapsed >= TIMEOUT_MS - 20 && elapsed < TIMEOUT_MS + 250, `${elapsed} ms`);
    // The failure is cached briefly: the next request does not wait again.
    const again = performance.now();
    await analyzeEmail('alice@hang.io', deps, { disabled: NONE });
    assert.ok(performance.now() - again < 150);
    assert.equal(dns.queries.get('hang.io MX'), 1);
  });

  test('disposable domains and their subdomains score 3; DISPOSABLE wins over FREE_PROVIDER', async () => {
    const block = await analyzeEmail('x@sub.mailinator.com', deps, { disabled: NONE });
    assert.deepEqual(block.rules, rules({ DISPOSABLE: 3 }));
    assert.equal(block.score, 3);
    assert.equal(block.domain, 'sub.mailinator.com');
    assert.ok(embeddedFreeProviders().has('mailinator.com'), 'the free-provider list holds it too');
  });

  test('role and generated local parts', async () => {
    const cases: [string, Record<string, number>][] = [
      ['noreply@acme-widgets.com', { ROLE: 0.5 }], ['Postmaster+x@acme-widgets.com', { ROLE: 0.5 }],
      ['a8f3k2p9@acme-widgets.com', { RANDOM: 1 }], ['qwrtzpkxmnb@acme-widgets.com', { RANDOM: 1 }],
      ['x7.k2-m9_q4@acme-widgets.com', { RANDOM: 1 }],
      ['john.smith1985@acme-widgets.com', {}], ['schwarzkopf@acme-widgets.com', {}], ['mike2k19@acme-widgets.com', {}],
      ['info@acme-widgets.com', {}], ['support@acme-widgets.com', {}], ['josé.garcía@acme-widgets.com', {}],
    ];
    for (const [email, fired] of cases) {
      const block = await analyzeEmail(email, deps, { disabled: NONE });
      assert.deepEqual(block.rules, rules(fired), email);
    }
  });

  test('IDN: the domain is compared and reported in ASCII; mixed-script and Latin-looking Cyrillic labels are homographs', async () => {
    const idn = await analyzeEmail('leser@Bücher.de', deps, { disabled: NONE });
    assert.equal(idn.domain, 'xn--bcher-kva.de');
    assert.deepEqual(idn.rules, rules());
    // gmаil.com with a Cyrillic а: a homograph of a free provider, and it does not exist (fixture).
    const mixed = await analyzeEmail('jane@gmаil.com', deps, { disabled: NONE });
    assert.equal(mixed.domain, 'xn--gmil-63d.com');
    assert.deepEqual(mixed.rules, rules({ IDN_HOMOGRAPH: 2, MX: 3 }));
    assert.equal(mixed.score, 5);
    const cyrillic = await analyzeEmail('jane@раураl.com', deps, { disabled: new Set(['MX']) });
    assert.deepEqual(cyrillic.rules, rules({ IDN_HOMOGRAPH: 2 }, ['MX']));
    const russian = await analyzeEmail('ivan@пример.рф', deps, { disabled: new Set(['MX']) });
    assert.deepEqual(russian.rules, rules({}, ['MX']), 'Cyrillic under a Cyrillic TLD is no homograph');
  });

  test('invalid addresses: SYNTAX 3, domain null, no DNS query', async () => {
    const invalid = [
      '', '@', 'plainaddress', 'a@b@acme-widgets.com', 'a..b@acme-widgets.com', '.a@acme-widgets.com', 'a.@acme-widgets.com',
      'a b@acme-widgets.com', 'a@acme-widgets', 'a@-acme.com', 'a@acme..com', 'a@acme-widgets.com.', 'a@host.invalid',
      'a@x.local', 'a@co.uk', 'a@1.2.3.4', 'a@[192.0.2.1]', `${'x'.repeat(65)}@acme-widgets.com`, `a@${'x'.repeat(64)}.com`,
      `a@${'abc.'.repeat(64)}com`, 'a@acme_widgets.com', 'a"b@acme-widgets.com', 'a@acme-widgets.com\nb', 'n',
    ];
    const before = dns.total();
    for (const email of invalid) {
      const block = await analyzeEmail(email, deps, { disabled: NONE });
      assert.deepEqual(block.rules, rules({ SYNTAX: 3 }), JSON.stringify(email));
      assert.equal(block.score, 3);
      assert.equal(block.domain, null);
    }
    assert.equal(dns.total(), before);
  });

  test('an address under a wildcard public suffix (*.sch.uk) is an address', async () => {
    const block = await analyzeEmail('office@example-primary.sch.uk', deps, { disabled: new Set(['MX']) });
    assert.deepEqual(block.rules, rules({}, ['MX']));
    assert.equal(block.domain, 'example-primary.sch.uk');
    const bare = await analyzeEmail('office@sch.uk', deps, { disabled: new Set(['MX']) });
    assert.equal(bare.rules.SYNTAX?.score, 3);
  });

  test('hostile input: a 10,000-character address and one full of @ are refused at once', async () => {
    for (const email of [`${'a'.repeat(10_000)}@acme-widgets.com`, '@'.repeat(10_000), `a@${'b.'.repeat(5000)}com`, '\u0000'.repeat(10_000)]) {
      const started = performance.now();
      const block = await analyzeEmail(email, deps, { disabled: NONE });
      assert.equal(block.rules.SYNTAX?.score, 3);
      assert.ok(performance.now() - started < 150);
    }
  });

  test('disabled rules are absent and not run; without DNS the MX rule is absent', async () => {
    const before = dns.total();
    const block = await analyzeEmail('noreply@aonly-other.net', deps, { disabled: new Set(['MX', 'ROLE']) });
    assert.deepEqual(block.rules, rules({}, ['MX', 'ROLE']));
    assert.equal(dns.total(), before);
    const offline = await analyzeEmail('x@gone-away.de', { ...deps, mx: null }, { disabled: NONE });
    assert.deepEqual(offline.rules, rules({}, ['MX']));
    const invalid = await analyzeEmail('nope', deps, { disabled: new Set(['SYNTAX']) });
    assert.deepEqual(invalid.rules, rules({}, ['SYNTAX']), 'SYNTAX disabled: an invalid address scores 0');
  });

  test('splitAddress: the widget form, plus tags, quoted and Unicode local parts', () => {
    assert.deepEqual(splitAddress('@example.com'), { local: '', domain: 'example.com' });
    assert.deepEqual(splitAddress('A.B+tag@Example.COM'), { local: 'A.B+tag', domain: 'example.com' });
    assert.deepEqual(splitAddress('用户@例子.中国'), { local: '用户', domain: 'xn--fsqu00a.xn--fiqs8s' });
    assert.deepEqual(splitAddress(' a@example.com\r\n'), { local: 'a', domain: 'example.com' }, 'white space around is dropped');
    assert.equal(splitAddress('"quoted"@example.com'), null, 'quoted local parts are refused (forms never need them)');
  });
});
