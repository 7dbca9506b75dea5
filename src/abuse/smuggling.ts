// Request-smuggling shapes (RFC 9112 section 6.3; PortSwigger's CL.TE / TE.CL / TE.TE families):
// framing that two HTTP parsers (a proxy in front of us and us) could read differently. uWS and
// the HTTP layer already refuse to *read* such bodies; this names the shape so the HTTP layer can
// count it as a malicious event (threats.ts) and answer 400. Headers arrive as the HTTP layer
// copies them: lower-case names, repeated headers joined with ", ".
export type SmugglingShape =
  /** Content-Length and Transfer-Encoding together. */
  | 'cl_te'
  /** Content-Length given more than once (joined "5, 5" or "5, 6"). */
  | 'duplicate_cl'
  /** Content-Length that is not a plain decimal number. */
  | 'bad_cl'
  /** Transfer-Encoding other than exactly "chunked" (obfuscated, repeated, or another coding). */
  | 'bad_te';

const DIGITS = /^\d+$/;
const CHUNKED = /^chunked$/i;

/** The smuggling shape of a request's framing headers, or null for ordinary framing. */
export function smugglingShape(headers: Readonly<Record<string, string | undefined>>): SmugglingShape | null {
  const cl = headers['content-length'];
  const te = headers['transfer-encoding'];
  if (cl === undefined && te === undefined) return null;
  if (cl !== undefined && te !== undefined) return 'cl_te';
  if (cl !== undefined) {
    if (DIGITS.test(cl)) return null;
    return cl.includes(',') ? 'duplicate_cl' : 'bad_cl';
  }
  return CHUNKED.test(te!) ? null : 'bad_te';
}
