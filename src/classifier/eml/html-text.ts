// The text a reader sees in an HTML body, in one linear pass: tags dropped, block elements as line
// breaks, script/style/head/comments left out, common entities decoded, and each link's target
// written after its label ("label <https://target>") so that the text rules see the targets. Along
// the way it collects the links (label and target) and counts the characters a reader cannot see:
// text inside an element styled display:none, visibility:hidden, font-size:0 or 1px, opacity:0,
// or with the hidden attribute (the message rule HTML_ONLY_HIDDEN_TEXT).

export interface HtmlText {
  /** The visible text with link targets. */
  readonly text: string;
  /** The first MAX_LINKS links. */
  readonly links: readonly HtmlLink[];
  /** Characters (other than white space) inside hidden elements. */
  readonly hiddenChars: number;
}

export interface HtmlLink {
  readonly href: string;
  /** The visible label, white space collapsed, at most 300 characters. */
  readonly label: string;
}

const MAX_LINKS = 200;
/** Open elements tracked; deeper ones are treated as their parent. */
const MAX_STACK = 256;
const SKIPPED = new Set(['script', 'style', 'head', 'title', 'noscript', 'template', 'xml']);
const BLOCK = new Set([
  'br', 'p', 'div', 'tr', 'li', 'ul', 'ol', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'hr', 'section',
  'article', 'header', 'footer', 'td', 'th', 'center',
]);
const VOID = new Set(['br', 'hr', 'img', 'meta', 'link', 'input', 'area', 'base', 'col', 'embed', 'source', 'track', 'wbr']);
const HIDING_STYLE = /(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*(?:0|1px)(?![\d.])|opacity\s*:\s*0(?![\d.]))/i;
const ATTR = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
const LATIN1_NAMES = 'nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml yacute thorn yuml';
const NAMED: Readonly<Record<string, string>> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', copy: '©', reg: '®', trade: '™', hellip: '…', mdash: '—',
  ndash: '–', rsquo: '’', lsquo: '‘', rdquo: '”', ldquo: '“', euro: '€', zwnj: '', zwj: '', bull: '•',
  // HTML 4's Latin-1 names, U+00A0 to U+00FF in order (nbsp and shy included).
  ...Object.fromEntries(LATIN1_NAMES.split(' ').map((n, i) => [n, n === 'nbsp' ? ' ' : n === 'shy' ? '' : String.fromCharCode(0xa0 + i)])),
};

interface Open {
  readonly name: string;
  readonly hidden: boolean;
  /** Index in `links` when this is an <a href>, else -1. */
  readonly link: number;
}

export function htmlToText(html: string): HtmlText {
  const out: string[] = [];
  const links: { href: string; label: string }[] = [];
  const stack: Open[] = [];
  let hidden = 0;
  let hiddenChars = 0;
  let pos = 0;
  const closings = new Map<string, number>();
  while (pos < html.length) {
    const lt = html.indexOf('<', pos);
    const textEnd = lt < 0 ? html.length : lt;
    if (textEnd > pos) {
      const text = decodeEntities(html.slice(pos, textEnd));
      if (hidden > 0) hiddenChars += countVisible(text);
      else {
        out.push(text);
        for (let i = stack.length - 1; i >= 0; i--) {
          const l = stack[i]!.link;
          if (l >= 0) {
            if (links[l]!.label.length < 300) links[l]!.label += text;
            break;
          }
        }
      }
    }
    if (lt < 0) break;
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      pos = end < 0 ? html.length : end + 3;
      continue;
    }
    const gt = html.indexOf('>', lt + 1);
    if (gt < 0) break;
    const tag = html.slice(lt + 1, gt);
    pos = gt + 1;
    const closing = tag.charCodeAt(0) === 47;
    const nameMatch = /^[a-zA-Z][a-zA-Z0-9:-]*/.exec(closing ? tag.slice(1) : tag);
    if (nameMatch === null) continue;
    const name = nameMatch[0].toLowerCase();
    if (!closing && SKIPPED.has(name)) {
      const end = indexOfCi(html, `</${name}`, pos, closings);
      pos = end < 0 ? html.length : Math.max(pos, html.indexOf('>', end) + 1 || html.length);
      continue;
    }
    if (BLOCK.has(name)) out.push('\n');
    if (closing) {
      for (let i = stack.length - 1; i >= 0; i--) {
        if (stack[i]!.name !== name) continue;
        for (let j = stack.length - 1; j >= i; j--) {
          const open = stack[j]!;
          if (open.hidden) hidden--;
          if (open.link >= 0 && hidden === 0) {
            const link = links[open.link]!;
            link.label = link.label.replace(/\s+/g, ' ').trim().slice(0, 300);
            if (link.label !== link.href) out.push(` <${link.href}>`);
          }
        }
        stack.length = i;
        break;
      }
      continue;
    }
    if (VOID.has(name) || tag.endsWith('/')) continue;
    let style = '';
    let href = '';
    let hiddenAttr = false;
    ATTR.lastIndex = nameMatch[0].length;
    const attrs = tag.length > 4000 ? tag.slice(0, 4000) : tag;
    for (let m = ATTR.exec(attrs); m !== null; m = ATTR.exec(attrs)) {
      const attr = m[1]!.toLowerCase();
      const value = m[2] ?? m[3] ?? m[4] ?? '';
      if (attr === 'style') style = value;
      else if (attr === 'href' && name === 'a') href = decodeEntities(value).trim();
      else if (attr === 'hidden') hiddenAttr = true;
    }
    const hides = hiddenAttr || (style !== '' && HIDING_STYLE.test(style));
    let link = -1;
    if (name === 'a' && href !== '' && links.length < MAX_LINKS && hidden === 0 && !hides) {
      link = links.length;
      links.push({ href: href.slice(0, 2000), label: '' });
    }
    if (stack.length < MAX_STACK) {
      stack.push({ name, hidden: hides, link });
      if (hides) hidden++;
    }
  }
  const text = out.join('').replace(/[ \t\r\f\v\u00a0]+/g, ' ').replace(/ ?\n[\s]*/g, '\n').trim();
  return { text, links, hiddenChars };
}

function countVisible(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 32) n++;
  return n;
}

/**
 * The next `</name` in lower or upper case at or after `from`. Each needle's last answer is kept:
 * a search that found nothing is not repeated, so many opening tags without their closing one
 * stay linear.
 */
function indexOfCi(s: string, needle: string, from: number, seen: Map<string, number>): number {
  let best = -1;
  for (const n of [needle, needle.toUpperCase()]) {
    let at = seen.get(n);
    if (at === undefined || (at >= 0 && at < from)) {
      at = s.indexOf(n, from);
      seen.set(n, at);
    }
    if (at >= 0 && (best < 0 || at < best)) best = at;
  }
  return best;
}

export function decodeEntities(s: string): string {
  if (s.indexOf('&') < 0) return s;
  return s.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]{2,8}));?/g, (all, dec: string, hex: string, named: string) => {
    if (named !== undefined) return NAMED[named] ?? NAMED[named.toLowerCase()] ?? all;
    const cp = dec !== undefined ? Number(dec) : parseInt(hex, 16);
    return cp > 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? String.fromCodePoint(cp) : '\ufffd';
  });
}
