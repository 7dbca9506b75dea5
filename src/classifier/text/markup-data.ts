// Names the scanner recognises: HTML tags, the tags that run or embed code, and the top-level
// domains that make a bare "name.tld" a link.

/** HTML elements counted by the HTML rule ("<b>", "</div>", "<a href=…>"). */
export const KNOWN_TAGS: ReadonlySet<string> = new Set([
  'a', 'abbr', 'applet', 'area', 'article', 'aside', 'audio', 'b', 'base', 'big', 'blockquote', 'body', 'br',
  'button', 'center', 'code', 'dd', 'details', 'div', 'dl', 'dt', 'em', 'embed', 'font', 'footer', 'form', 'frame',
  'frameset', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'head', 'header', 'hr', 'html', 'i', 'iframe', 'img', 'input',
  'label', 'li', 'link', 'main', 'marquee', 'meta', 'nav', 'object', 'ol', 'option', 'p', 'pre', 'section',
  'select', 'small', 'source', 'span', 'strike', 'strong', 'style', 'sub', 'sup', 'svg', 'table', 'tbody', 'td',
  'textarea', 'th', 'title', 'tr', 'u', 'ul', 'video',
]);

/** Tags that run or embed code: their SCRIPT_INJECTION shape (1 = script, 2 = frame or plug-in). */
export const SCRIPT_TAGS: ReadonlyMap<string, number> = new Map([
  ['script', 1], ['iframe', 2], ['frame', 2], ['frameset', 2], ['object', 2], ['embed', 2], ['applet', 2], ['base', 2],
]);

// Generic and country TLDs common in links, without those that are also file extensions seen in
// ordinary text (.md, .py, .rs, .sh, .pl, .cc, .zip, .mov, .ai: "readme.md" is no link) or words that
// follow a full stop typed without a space ("it.no", "go.to", "today") or end a setting
// ("user.name", "user.email", "db.host").
const BARE_DOMAIN_TLDS: ReadonlySet<string> = new Set([
  'com', 'net', 'org', 'info', 'biz', 'edu', 'gov', 'mobi', 'pro', 'asia', 'tel',
  'io', 'co', 'tv', 'ws', 'su', 'ly', 'gl', 'gd', 'bz', 'pw', 'tk', 'ml', 'ga', 'cf', 'gq',
  'uk', 'eu', 'de', 'fr', 'es', 'it', 'nl', 'pt', 'ch', 'lu', 'ie', 'dk', 'se', 'fi',
  'cz', 'sk', 'hu', 'ro', 'bg', 'gr', 'hr', 'si', 'lt', 'lv', 'ee', 'ua', 'by', 'kz', 'ru', 'tr', 'il',
  'ca', 'mx', 'br', 'ar', 'cl', 'pe', 've', 'au', 'nz', 'za', 'ng', 'ke', 'pk', 'bd', 'cn', 'hk', 'tw',
  'jp', 'kr', 'sg', 'ph', 'vn', 'th', 'ir', 'ae', 'sa',
  'online', 'site', 'website', 'shop', 'store', 'xyz', 'top', 'club', 'icu', 'vip', 'buzz', 'link',
  'click', 'bid', 'loan', 'space', 'tech', 'app', 'dev', 'cloud',
  'digital', 'agency', 'blog', 'press', 'solutions', 'services', 'marketing', 'media',
  'network', 'systems', 'ltd', 'llc', 'company', 'business', 'money', 'cash', 'bet', 'casino', 'poker', 'porn',
  'sex', 'xxx', 'adult', 'dating', 'rest', 'bar', 'cam', 'sbs', 'cfd', 'cyou', 'monster', 'quest', 'lol', 'mom',
  'beauty', 'hair', 'skin', 'boutique', 'fashion', 'guru', 'pics', 'download', 'stream', 'racing',
  'review', 'trade', 'party', 'science', 'faith', 'kim', 'ink', 'wiki',
]);

/** Whether `tld` (lower case) makes "name.tld" a link. */
export function isBareDomainTld(tld: string): boolean {
  return BARE_DOMAIN_TLDS.has(tld);
}
