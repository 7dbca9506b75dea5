// Scanner paths (src/abuse/probe-paths.ts): one test per family, Palisade's own paths are never
// probes, and hostile input stays fast.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PROBE_FAMILIES, probeFamily, type ProbeFamily } from '../../src/abuse/probe-paths.js';

function all(family: ProbeFamily, paths: string[]): void {
  for (const p of paths) assert.equal(probeFamily(p), family, p);
}

test('env and config files', () => {
  all('env-config', [
    '/.env', '/.env.local', '/.env.production', '/api/.env', '/laravel/.env.bak', '/.git/config', '/.git/HEAD', '/.git',
    '/.svn/entries', '/.hg/hgrc', '/.aws/credentials', '/.ssh/id_rsa', '/.DS_Store', '/.htaccess', '/.htpasswd',
    '/.npmrc', '/.docker/config.json', '/config.json', '/config.yml', '/app/config.php', '/settings.py.bak'.replace('.py', ''),
    '/appsettings.json', '/secrets.yaml', '/web.config', '/docker-compose.yml', '/sftp-config.json', '/id_rsa',
    '/composer.json', '/package.json', '/.vscode/sftp.json', '/wp-config.php.bak', '/.ENV',
  ]);
});

test('WordPress', () => {
  all('wordpress', [
    '/wp-login.php', '/wp-admin', '/wp-admin/', '/wp-admin/install.php', '/xmlrpc.php', '/wp-content/plugins/x/readme.txt',
    '/wp-includes/wlwmanifest.xml', '/blog/wp-login.php', '/wordpress/', '/wp-json/wp/v2/users', '/WP-LOGIN.PHP', '/wp-config.php',
  ]);
});

test('admin panels', () => {
  all('admin-panel', [
    '/phpmyadmin', '/phpMyAdmin/', '/phpmyadmin/index.php', '/pma', '/pma/', '/adminer.php', '/adminer-4.8.1.php', '/myadmin',
    '/mysqladmin', '/administrator/', '/manager/html', '/solr/admin/', '/HNAP1/', '/boaform/admin/formLogin', '/webmin',
  ]);
});

test('actuator and debug endpoints', () => {
  all('debug', [
    '/actuator', '/actuator/env', '/actuator/heapdump', '/server-status', '/server-info', '/debug/pprof/', '/debug/pprof/goroutine',
    '/debug/vars', '/_profiler/phpinfo', '/telescope/requests', '/_ignition/execute-solution', '/phpinfo.php', '/info.php',
    '/console', '/jolokia/list', '/trace.axd', '/env', '/_cat/indices',
  ]);
});

test('backup files and dumps', () => {
  all('backup', [
    '/backup.zip', '/site.tar.gz', '/www.tgz', '/db.sql', '/dump.sql', '/database.sql.gz', '/index.php.bak', '/backup.7z',
    '/html.rar', '/old.tar', '/data/backup/db.sql', '/index.html~', '/backup/', '/backups', '/.index.php.swp',
  ]);
});

test('path traversal, raw and encoded, in the path or the query', () => {
  all('traversal', [
    '/../../etc/passwd', '/static/../../../etc/passwd', '/..%2f..%2fetc/passwd', '/%2e%2e/%2e%2e/etc/passwd',
    '/%252e%252e/%252e%252e/etc/passwd', '/..\\..\\windows\\win.ini', '/%c0%ae%c0%ae/etc', '/x/..', '/etc/passwd',
  ]);
  assert.equal(probeFamily('/v1/challenge', 'apiKey=key_x&file=../../etc/passwd'), 'traversal');
  assert.equal(probeFamily('/v1/challenge', 'f=%2e%2e%2fsecret'), 'traversal');
  assert.equal(probeFamily('/v1/challenge', 'f=..%2fsecret'), 'traversal');
  assert.equal(probeFamily('/v1/challenge', 'f=%252e%252e'), 'traversal');
});

test('web shells and server-side scripts (we serve none)', () => {
  all('shell', [
    '/shell.php', '/cmd.php', '/c99.php', '/wso.php', '/cgi-bin/', '/cgi-bin/luci', '/cgi-bin/test.cgi', '/index.php',
    '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php', '/login.asp', '/default.aspx', '/manager.jsp', '/struts/x.action',
    '/index.php/api', '/up.phtml', '/x.php7',
  ]);
});

test("Palisade's own paths and ordinary requests are not probes", () => {
  for (const p of [
    '/', '/v1/challenge', '/v1/verify', '/v1/verify/signature', '/challenge/verify', '/api_key/generate', '/usage', '/v1/docs',
    '/v1/inspect', '/v1/classifier', '/v1/eml', '/.health', '/.ready', '/.live', '/.logs', '/.metrics', '/.well-known/security.txt',
    '/favicon.ico', '/robots.txt', '/v1/challenge/', '/v1/envelope', '/environment', '/dbx', '/my.file.js', '/a..b', '/v1/x.json',
    // the console and the admin API (docs/admin.md)
    '/app', '/app/', '/app/assets/index-CcfsUbuo.js', '/app/assets/index-RwS56DUU.css', '/api/admin/session', '/api/admin/settings',
    '/api/admin/logs/live', '/api/admin/keys/key_x/audit', '/api/admin/me/totp/setup', '/api/admin/users/usr_x/password',
    '/api/admin/hostnames/release', '/api/admin/submissions/sub_x/promote', '/api/admin/plans/pro', '/api/admin/training/trn_x',
  ]) assert.equal(probeFamily(p), null, p);
  assert.equal(probeFamily('/v1/challenge', 'apiKey=key_AAAAAAAAAAAAAAAAAAAAAAAA&params.name=a..b'), null);
  assert.equal(probeFamily('/v1/verify', 'x=1.2.3'), null);
  assert.equal(PROBE_FAMILIES.length, 7);
});

test('hostile input: long and odd paths are answered without throwing', () => {
  for (const p of ['/' + 'a/'.repeat(4000), '/' + '.'.repeat(8000), '/%'.repeat(4000), '/\u0000\uD800', '/' + 'wp-'.repeat(2500)]) {
    assert.doesNotThrow(() => probeFamily(p, '%'.repeat(8000)));
  }
  assert.equal(probeFamily('/' + 'a/'.repeat(4000)), null);
  assert.equal(probeFamily('/' + 'wp-'.repeat(2500)), null);
  assert.equal(probeFamily('/' + '.'.repeat(8000)), null);
});
