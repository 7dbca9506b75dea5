// Migration 006: request_logs name the node that served the request (NODE_NAME, else NODE_ID), so
// a cluster's log tells which node answered. Rows written before stay null.
import type { Ddl } from '../dialect.js';

export default (t: Ddl) => `
${t.addColumns('request_logs', [`node ${t.text}`])};
`;
