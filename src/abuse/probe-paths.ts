// Scanner paths: requests no client of Palisade ever makes, sent by bots looking for a vulnerable
// application on any address they find. A request to one is answered 404 as usual and counted under
// THREATS_PROBE_LIMIT (threats.ts). Families are tried in order, so /wp-config.php is wordpress and
// /adminer.php an admin panel before the generic "any .php is a script probe" rule claims them.
// Palisade serves no PHP, ASP, JSP or CGI at all, which is what makes the generic rule safe; its own
// paths (/v1/…, /.health, /.well-known/security.txt, …) match nothing here (test/unit/abuse-probe-paths).
//
// Hot path: every request pays one combined regular expression over the path (and, when there is a
// query, one over the query for traversal); the family is worked out only for a match.

export const PROBE_FAMILIES = [
  'env-config', 'wordpress', 'admin-panel', 'debug', 'backup', 'traversal', 'shell',
] as const;
export type ProbeFamily = (typeof PROBE_FAMILIES)[number];

const SEG = '(?:^|/)';
const END = '(?:/|$)';

// Traversal shapes, raw or (doubly) percent-encoded, plus the files traversal goes for.
const TRAVERSAL = String.raw`(?:^|[/\\])\.\.(?:[/\\]|$)|%2e%2e|\.\.%2f|\.\.%5c|%2e\.|\.%2e|%252e|%c0%ae|%u002e|/etc/(?:passwd|shadow)|win\.ini|boot\.ini`;

const FAMILY_SOURCES: Readonly<Record<ProbeFamily, string>> = {
  // Dotfiles and directories of secrets and version control at any depth (not /.well-known/), and
  // application configuration files.
  'env-config': [
    String.raw`${SEG}\.(?:env(?:\.[\w.-]*)?|git|svn|hg|bzr|aws|ssh|docker|kube|npmrc|yarnrc|htaccess|htpasswd|ds_store|vscode|idea|bash_history|boto|s3cfg|netrc|pgpass|my\.cnf|gitlab-ci\.yml|travis\.yml)${END}`,
    String.raw`${SEG}(?:config|configuration|settings|secrets?|credentials|database|parameters|appsettings|application|env)\.(?:json|ya?ml|php|ini|xml|properties|inc|toml|js|bak|old|txt)$`,
    String.raw`${SEG}(?:web\.config|docker-compose\.ya?ml|dockerfile|sftp-config\.json|id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|local\.xml|composer\.(?:json|lock)|package(?:-lock)?\.json|yarn\.lock|wp-config\.php\.\w+)$`,
  ].join('|'),
  wordpress: String.raw`${SEG}(?:wp-(?:login|admin|content|includes|config|json|cron|signup|trackback|links-opml|load|mail|settings|blog-header|activate)|xmlrpc\.php|wordpress${END})`,
  'admin-panel': String.raw`${SEG}(?:php-?my-?admin\d*|pma|myadmin|mysqladmin|sqladmin|dbadmin|db|mysql|adminer(?:-[\d.]+)?(?:\.php)?|phppgadmin|pgadmin\d*|administrator|manager/html|host-manager|jmx-console|web-console|axis2(?:-admin)?|solr/admin|hnap1|boaform|cpanel|whm|webmin|plesk|vtigercrm|horde|roundcube)${END}`,
  debug: String.raw`${SEG}(?:actuator|server-status|server-info|debug/(?:pprof|vars|default)|_profiler|_debugbar|telescope|_ignition|__debug__|trace\.axd|elmah\.axd|jolokia|phpinfo(?:\.php)?|info\.php|console|h2-console|heapdump|druid|nacos|_cat|_cluster|_nodes|_all_dbs|env|configprops|mappings|threaddump)${END}`,
  // Archives and dumps left next to the document root, and editor/backup leftovers at any depth.
  backup: [
    String.raw`^/[^/]*\.(?:bak|backup|old|orig|save|sav|swp|sql|dump|zip|tar|tgz|gz|bz2|xz|rar|7z|war|jar)$`,
    String.raw`\.(?:sql|sql\.gz|sql\.zip|bak|swp|swo)$`,
    String.raw`[^/]~$`,
    String.raw`${SEG}(?:backups?|bak|dump|old-site|site-backup)${END}`,
  ].join('|'),
  traversal: TRAVERSAL,
  // Web shells and server-side scripts: we serve none, so any such extension is a probe.
  shell: String.raw`${SEG}cgi-bin${END}|\.(?:php\d?|phtml|phar|asp|aspx|ashx|asmx|axd|jsp|jspx|cgi|pl|cfm|action|do|shtml)${END}`,
};

const FAMILY_PATTERNS: readonly (readonly [ProbeFamily, RegExp])[] = PROBE_FAMILIES.map(
  (family) => [family, new RegExp(FAMILY_SOURCES[family], 'i')] as const,
);
const ANY = new RegExp(PROBE_FAMILIES.map((f) => `(?:${FAMILY_SOURCES[f]})`).join('|'), 'i');
const QUERY_TRAVERSAL = new RegExp(String.raw`\.\.(?:[/\\]|%2f|%5c)|%2e%2e|%252e|%c0%ae|/etc/(?:passwd|shadow)|win\.ini`, 'i');

/**
 * The probe family of a request, or null for an ordinary one. `path` is the raw request path
 * (without APP_BASE_PATH and the query), `rawQuery` the raw query string without `?`.
 */
export function probeFamily(path: string, rawQuery = ''): ProbeFamily | null {
  if (ANY.test(path)) {
    for (const [family, pattern] of FAMILY_PATTERNS) if (pattern.test(path)) return family;
  }
  if (rawQuery !== '' && QUERY_TRAVERSAL.test(rawQuery)) return 'traversal';
  return null;
}
