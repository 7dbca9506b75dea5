// The classifier's lists in the running clustered service: the primary downloads
// EMAIL_LIST_DISPOSABLE and PHISHING_LIST_URL from a loopback server at start (no list on disk
// yet) and keeps them in DATA_DIR/lists with their status; the workers start and serve meanwhile.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DISPOSABLE_LIST, PHISHING_LIST } from '../../src/classifier/classifier-lists.js';
import { listPaths, readStatusSync } from '../../src/lists/list-store.js';
import { startListServer, type ListServer } from '../helpers/list-server.js';
import { startService } from '../helpers/service.js';

let lists: ListServer;
before(async () => {
  lists = await startListServer();
  lists.routes.set('/disposable.conf', { kind: 'body', body: '# test\ntempmail.dev\nburner.example\n' });
  lists.routes.set('/online-valid.csv', {
    kind: 'body',
    body: 'phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target\n'
      + '9001,https://evil.example/login,http://www.phishtank.com/phish_detail.php?phish_id=9001,2025-09-19T19:02:10+00:00,yes,2025-09-19T19:30:00+00:00,yes,PayPal\n',
  });
});
after(async () => { await lists.close(); });

test('the primary downloads both classifier lists at start', async () => {
  const svc = await startService({
    env: { EMAIL_LIST_DISPOSABLE: `${lists.url}/disposable.conf`, PHISHING_LIST_URL: `${lists.url}/online-valid.csv` },
  });
  try {
    const disposable = listPaths(svc.dataDir, DISPOSABLE_LIST);
    const phishing = listPaths(svc.dataDir, PHISHING_LIST, 'tsv');
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !(existsSync(disposable.status) && existsSync(phishing.status))) await sleep(100);
    assert.equal(readFileSync(disposable.file, 'utf8'), 'tempmail.dev\nburner.example\n');
    assert.equal(readFileSync(phishing.file, 'utf8'), '9001\t1758308530\tPayPal\thttps://evil.example/login\n');
    assert.deepEqual([readStatusSync(disposable.status)?.entries, readStatusSync(phishing.status)?.entries], [2, 1]);
    assert.equal(lists.hits.get('/disposable.conf'), 1);
    assert.equal((await fetch(`${svc.url}/.live`)).status, 200);
  } finally {
    await svc.stop();
  }
});
