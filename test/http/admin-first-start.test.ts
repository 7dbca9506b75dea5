// The admin area's first start without DEFAULT_ROOT_PASSWORD: the generated root password is
// written to the log once (and not again at the next start); a session lives JWT_TTL; a restart with
// PASSWORD_LOGIN_ENABLED=0 refuses every login.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { newDataDir, startService } from '../helpers/service.js';

const login = (url: string, password: string) => fetch(`${url}/api/admin/login`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'root', password }),
});

const loginAs = (url: string, username: string, password: string) => fetch(`${url}/api/admin/login`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }),
});

test('generated root password, JWT_TTL, the login limit per IP, PASSWORD_LOGIN_ENABLED=0', async () => {
  const dataDir = await newDataDir();
  try {
    const svc = await startService({ dataDir, env: { WORKERS: '0', JWT_TTL: '2s', ADMIN_LOGIN_RATE_LIMIT: '4/15m(block=15m)' } });
    let password: string;
    try {
      const line = await svc.waitForOutput(/generated first password is/);
      password = /generated first password is (\S+) /.exec(line)![1]!;
      assert.match(password, /^[A-Za-z0-9_-]{24}$/);
      assert.equal(svc.output.filter((l) => l.includes(password)).length, 1, 'written once');
      assertWrong(await login(svc.url, `${password}x`));
      const res = await login(svc.url, password);
      assert.equal(res.status, 200);
      const body = await res.json() as { user: { mustChangePassword: boolean } };
      assert.equal(body.user.mustChangePassword, true);
      const cookie = res.headers.get('set-cookie')!;
      assert.match(cookie, /Max-Age=2;/);
      const session = cookie.split(';')[0]!;
      assert.equal((await fetch(`${svc.url}/api/admin/me`, { headers: { cookie: session } })).status, 200);
      await new Promise((r) => setTimeout(r, 3100));
      const expired = await fetch(`${svc.url}/api/admin/me`, { headers: { cookie: session } });
      assert.deepEqual([expired.status, await expired.json()], [401, { error: 'SESSION_REQUIRED', statusCode: 401 }]);
      // ADMIN_LOGIN_RATE_LIMIT counts failures from one IP whatever the username (one so far; successes do not count).
      for (let i = 0; i < 3; i++) assertWrong(await loginAs(svc.url, `nobody-${i}`, 'guess-password'));
      const limited = await login(svc.url, password);
      assert.equal(limited.status, 429, 'the right password too, from this IP');
      assert.deepEqual(await limited.json(), { error: 'RATE_LIMITED', statusCode: 429 });
      assert.ok(Number(limited.headers.get('retry-after')) > 60);
    } finally {
      await svc.stop();
    }
    // Under APP_BASE_PATH the console and the admin API move with every other route.
    const again = await startService({ dataDir, waitReady: false, env: { WORKERS: '0', PASSWORD_LOGIN_ENABLED: '0', APP_BASE_PATH: '/captcha' } });
    try {
      const deadline = Date.now() + 45_000;
      for (;;) {
        const live = await fetch(`${again.url}/captcha/.live`).then((r) => r.status, () => 0);
        if (live === 200) break;
        if (Date.now() > deadline) throw new Error(`not ready:\n${again.output.join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const page = await fetch(`${again.url}/captcha/app/`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type')!, /^text\/html/);
      assert.match(page.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      assert.match(await page.text(), /<script type="module" crossorigin src="\.\/assets\/index-[\w-]+\.js"><\/script>/);
      const bare = await fetch(`${again.url}/captcha/app`, { redirect: 'manual' });
      assert.deepEqual([bare.status, bare.headers.get('location')], [308, '/captcha/app/']);
      assert.equal((await fetch(`${again.url}/app/`)).status, 404, 'only under the base path');
      assert.equal((await fetch(`${again.url}/captcha/app/assets/missing.js`)).status, 404);
      assert.deepEqual(await (await fetch(`${again.url}/captcha/api/admin/session`)).json(), { user: null, account: null, csrfToken: null });
      const refused = await fetch(`${again.url}/captcha/api/admin/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'root', password }),
      });
      assert.deepEqual([refused.status, await refused.json()], [403, { error: 'LOGIN_DISABLED', statusCode: 403 }]);
      assert.equal(again.output.some((l) => l.includes('root user created')), false, 'root is created once');
    } finally {
      await again.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

function assertWrong(res: Response): void {
  assert.equal(res.status, 401);
}
