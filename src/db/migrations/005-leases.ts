// Migration 005: leases, so that a scheduled job (retention, snapshots) runs on one node at a time
// (src/db/leases.ts).
import type { Ddl } from '../dialect.js';

export default (t: Ddl) => `
CREATE TABLE leases (
  name ${t.str(64)} PRIMARY KEY,
  -- the NODE_ID (and process) holding it
  holder ${t.str(128)} NOT NULL,
  expires_at ${t.timestamp} NOT NULL
)${t.table};
`;
