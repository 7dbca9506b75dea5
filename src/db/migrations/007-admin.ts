// Migration 007: the admin area (docs/admin.md).
//   accounts.active  a deactivated account's keys stop working (within CACHE_DURATION_API_KEYS)
//   users            console and admin API logins: the root user, and users with a role in one account
//   request_logs.classification  per-request GOOD/NEUTRAL/BAD for the dashboard's charts
//   audit_log        every write through the admin domain (src/admin/): who, what, when, from which IP
import type { Ddl } from '../dialect.js';

export default (t: Ddl) => `
${t.addColumns('accounts', [`active ${t.bool} NOT NULL DEFAULT true`])};

CREATE TABLE users (
  id ${t.str(64)} PRIMARY KEY,
  username ${t.str(64)} NOT NULL UNIQUE CHECK (${t.matches('username', '^[a-z0-9][-a-z0-9_.@]{0,63}$')}),
  -- Argon2id PHC string (src/admin/auth/passwords.ts)
  password_hash ${t.text} NOT NULL,
  is_root ${t.bool} NOT NULL DEFAULT false,
  account_id ${t.str(64)} REFERENCES accounts (id),
  role ${t.str(16)} CHECK (role IN ('admin', 'member', 'read-only')),
  must_change_password ${t.bool} NOT NULL DEFAULT false,
  -- raised by logout and password changes: session JWTs carrying an older value are refused
  session_version integer NOT NULL DEFAULT 0,
  totp_secret ${t.text},
  totp_enabled ${t.bool} NOT NULL DEFAULT false,
  -- the 30-second step of the last code accepted: a code is accepted once
  totp_last_step ${t.bigint} NOT NULL DEFAULT 0,
  disabled ${t.bool} NOT NULL DEFAULT false,
  created_at ${t.timestamp} NOT NULL DEFAULT ${t.now},
  updated_at ${t.timestamp} NOT NULL DEFAULT ${t.now},
  last_login_at ${t.timestamp},
  CHECK (is_root OR (account_id IS NOT NULL AND role IS NOT NULL)),
  CHECK (NOT is_root OR (account_id IS NULL AND role IS NULL))
)${t.table};
${t.uniqueWhereTrue('users_single_root', 'users', 'is_root')};
CREATE INDEX users_account ON users (account_id);

CREATE TABLE audit_log (
  id ${t.serialKey},
  time ${t.timestamp} NOT NULL DEFAULT ${t.now},
  -- admin:<username>, cli:<os user>, system
  actor ${t.str(128)} NOT NULL,
  ip ${t.text},
  action ${t.str(64)} NOT NULL,
  target ${t.text},
  -- the account the change concerns, when one does (read by that account's users)
  account_id ${t.str(64)},
  detail ${t.json} NOT NULL ${t.defaultText('{}')}
)${t.table};
CREATE INDEX audit_log_time ON audit_log (time);
CREATE INDEX audit_log_account_time ON audit_log (account_id, time);
-- GOOD, NEUTRAL or BAD when the request was classified (the console's charts per hour and day)
${t.addColumns('request_logs', [`classification ${t.str(8)}`])};
CREATE INDEX request_logs_account_time ON request_logs (account_id, time);
`;
