// Migration 003: request_logs keep the client's country (ISO 3166-1 alpha-2) and the threat kinds
// that listed its IP (comma list of malicious, proxy, tor, bot), as the verification signed them
// (docs/intel.md). Rows written before stay null; their HMAC covers the columns they had.
import type { Ddl } from '../dialect.js';

export default (t: Ddl) => `
${t.addColumns('request_logs', [`country ${t.text}`, `threats ${t.text}`])};
`;
