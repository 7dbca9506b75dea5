// The PhishTank CSV (https://data.phishtank.com/data/online-valid.csv): a header line naming the
// columns (phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target)
// and one row per phish; fields that hold commas, quotes or line breaks are quoted ("" is a
// quote), lines end in LF or CRLF. parseCsv reads it in one pass; preparePhishingList turns a
// download into the file kept in DATA_DIR/lists (phishing-list.ts reads it).
import { ListFetchError } from '../lists/fetch-list.js';
import { gunzipIfGzip } from '../intel/user-agent-list.js';
import { phishingKey } from './phishing-list.js';

/** A quoted field not closed within this many characters is garbage: its row is dropped. */
const MAX_QUOTED = 65_536;

/**
 * Calls `onRow` with the fields of each row (RFC 4180, LF or CRLF; a blank line is no row). A
 * row whose quoting is broken (a quote not closed within 64 KB, or text after a closing quote)
 * is passed as null, and reading resumes at the next line. Linear in the input.
 */
export function parseCsv(text: string, onRow: (fields: string[] | null) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const fields: string[] = [];
    let broken = false;
    for (;;) {
      if (text.charCodeAt(i) === 0x22 /* " */) {
        let value = '';
        let from = i + 1;
        let closed = -1;
        for (;;) {
          const q = text.indexOf('"', from);
          if (q < 0 || q - i > MAX_QUOTED) break;
          if (text.charCodeAt(q + 1) === 0x22) {
            value += text.slice(from, q + 1);
            from = q + 2;
            continue;
          }
          value += text.slice(from, q);
          closed = q;
          break;
        }
        if (closed < 0) { broken = true; i += 1; break; }
        fields.push(value);
        i = closed + 1;
      } else {
        let end = i;
        while (end < n) {
          const c = text.charCodeAt(end);
          if (c === 0x2c || c === 0x0a || c === 0x0d) break;
          end++;
        }
        fields.push(text.slice(i, end));
        i = end;
      }
      const c = text.charCodeAt(i);
      if (c === 0x2c) { i++; continue; }
      if (i >= n || c === 0x0a || c === 0x0d) break;
      broken = true; // text after a closing quote
      break;
    }
    if (broken) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
      onRow(null);
      continue;
    }
    if (text.charCodeAt(i) === 0x0d) i++;
    if (text.charCodeAt(i) === 0x0a) i++;
    if (fields.length === 1 && fields[0] === '') continue;
    onRow(fields);
  }
}

/** Column positions of the header's names (-1 = absent); `count` fields make a row. */
interface Columns {
  readonly url: number;
  readonly id: number;
  readonly submitted: number;
  readonly verified: number;
  readonly online: number;
  readonly target: number;
  readonly count: number;
}

/**
 * A download → the kept file (ListSource.prepare): one line per phish, `id TAB submittedAt TAB
 * target TAB url`, submittedAt in epoch seconds or empty, target empty when unknown. Rows marked
 * verified=no or online=no are left out, and so are repeats of a URL (by its normalised form) and
 * rows without a usable http(s) URL. Refused as 'invalid' without a header naming a url column, or
 * when more rows are unusable than usable.
 */
export function preparePhishingList(body: Buffer, maxUnpacked: number): { data: Buffer; entries: number } {
  let text = gunzipIfGzip(body, maxUnpacked).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let columns: Columns | null = null;
  let headerSeen = false;
  let invalid = 0;
  let row = 0;
  const seen = new Set<string>();
  const lines: string[] = [];
  parseCsv(text, (fields) => {
    row++;
    if (!headerSeen) {
      headerSeen = true;
      const names = (fields ?? []).map((f) => f.trim().toLowerCase());
      if (names.includes('url')) {
        columns = {
          url: names.indexOf('url'), id: names.indexOf('phish_id'), submitted: names.indexOf('submission_time'),
          verified: names.indexOf('verified'), online: names.indexOf('online'), target: names.indexOf('target'), count: names.length,
        };
      }
      return;
    }
    const c = columns as Columns | null;
    if (c === null) return;
    if (fields === null || fields.length !== c.count) { invalid++; return; }
    const field = (at: number) => (at >= 0 ? fields[at]!.trim() : '');
    if (field(c.verified).toLowerCase() === 'no' || field(c.online).toLowerCase() === 'no') return;
    const url = field(c.url);
    const key = url.length > 0 ? phishingKey(url) : null;
    if (key === null || /[\t\n\r]/.test(url)) { invalid++; return; }
    if (seen.has(key.key)) return;
    seen.add(key.key);
    const id = clean(field(c.id), 64) || String(row - 1);
    const submittedMs = Date.parse(field(c.submitted));
    const submitted = Number.isFinite(submittedMs) ? String(Math.floor(submittedMs / 1000)) : '';
    lines.push(`${id}\t${submitted}\t${clean(field(c.target), 100)}\t${url}\n`);
  });
  if (columns === null) throw new ListFetchError('invalid', 'no CSV header line naming a url column');
  if (invalid > lines.length) throw new ListFetchError('invalid', `${invalid} rows are not phishing entries, ${lines.length} are`);
  return { data: Buffer.from(lines.join(''), 'utf8'), entries: lines.length };
}

/** One line of text at most `max` characters: control characters (tabs, line breaks) become spaces. */
function clean(s: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, max);
}
