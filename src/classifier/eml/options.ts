// The option headers of POST /v1/eml (docs/eml.md), named as ALTCHA's (SENTINEL-NOTES.md section
// 3). Each wrong value is a 400 INVALID_PARAMETER naming the header.
import { PalisadeError } from '../../errors.js';

export interface EmlOptions {
  /** X-Authenticate: SPF, DKIM, DMARC and ARC checks. Default false. */
  readonly authenticate: boolean;
  /** X-Attachments-Size-Limit: largest decoded attachment returned. Default 5,000,000. */
  readonly attachmentsSizeLimit: number;
  /** X-Attachments-Upload: store attachments and return contentUri instead of content. Default false. */
  readonly attachmentsUpload: boolean;
  /** X-Disable-Rules: comma-separated rule names. */
  readonly disableRules: ReadonlySet<string>;
}

export const EML_OPTION_DEFAULTS = Object.freeze({ attachmentsSizeLimit: 5_000_000 });
/** The largest X-Attachments-Size-Limit accepted (no attachment can be larger than the body anyway). */
const MAX_SIZE_LIMIT = 1_000_000_000;

const bad = (message: string): PalisadeError => new PalisadeError('INVALID_PARAMETER', message);

export function parseEmlOptions(headers: Readonly<Record<string, string>>, ruleNames: ReadonlySet<string>): EmlOptions {
  const limitText = headers['x-attachments-size-limit'];
  let attachmentsSizeLimit: number = EML_OPTION_DEFAULTS.attachmentsSizeLimit;
  if (limitText !== undefined) {
    const t = limitText.trim();
    if (!/^\d{1,10}$/.test(t) || Number(t) > MAX_SIZE_LIMIT) throw bad(`X-Attachments-Size-Limit must be a whole number of bytes from 0 to ${MAX_SIZE_LIMIT}`);
    attachmentsSizeLimit = Number(t);
  }
  const rules = new Set<string>();
  const disable = headers['x-disable-rules'];
  if (disable !== undefined) {
    const names = disable.split(',').map((r) => r.trim()).filter((r) => r !== '');
    if (names.length > 1000) throw bad('X-Disable-Rules names at most 1000 rules');
    const unknown = names.filter((r) => !ruleNames.has(r));
    if (unknown.length > 0) throw bad(`X-Disable-Rules names unknown rules: ${unknown.slice(0, 10).map((r) => JSON.stringify(r.slice(0, 40))).join(', ')}`);
    for (const r of names) rules.add(r);
  }
  return {
    authenticate: flag(headers, 'x-authenticate', 'X-Authenticate'),
    attachmentsSizeLimit,
    attachmentsUpload: flag(headers, 'x-attachments-upload', 'X-Attachments-Upload'),
    disableRules: rules,
  };
}

function flag(headers: Readonly<Record<string, string>>, name: string, shown: string): boolean {
  const v = headers[name];
  if (v === undefined) return false;
  const t = v.trim().toLowerCase();
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0' || t === '') return false;
  throw bad(`${shown} must be true or false`);
}
