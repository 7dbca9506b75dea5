import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveSecurityTxt } from '../../src/routes/ops.js';

test('SECURITY_TXT: default, inline text, a file, disabled', () => {
  const def = resolveSecurityTxt('', 'https://captcha.example/', () => null)!;
  assert.match(def, /^Contact: https:\/\/captcha\.example\/\.well-known\/security\.txt\nExpires: \d{4}-\d\d-\d\dT/);
  assert.equal(resolveSecurityTxt('Contact: mailto:sec@example.com', '', () => null), 'Contact: mailto:sec@example.com\n');
  assert.equal(resolveSecurityTxt('/etc/palisade/security.txt', '', (p) => (p === '/etc/palisade/security.txt' ? 'Contact: file\n' : null)), 'Contact: file\n');
  assert.equal(resolveSecurityTxt('0', '', () => 'x'), null);
});
