// Migration 005: the admin area (docs/admin.md).
//   accounts.active  a deactivated account's keys stop working (within CACHE_DURATION_API_KEYS)
//   users            console and admin API logins: the root user, and users with a role in one account
//   request_logs.classification  per-request GOOD/NEUTRAL/BAD for the dashboard's charts
//   audit_log        every write through the admin domain (src/admin/): who, what, when, from which IP
export default `
ALTER TABLE accounts ADD COLUMN active boolean NOT NULL DEFAULT true;

CREATE TABLE users (
  id text PRIMARY KEY,
  username text NOT NULL UNIQUE CHECK (username ~ '^[a-z0-9][a-z0-9_.@-]{0,63}$'),
  -- Argon2id PHC string (src/admin/auth/passwords.ts)
  password_hash text NOT NULL,
  is_root boolean NOT NULL DEFAULT false,
  account_id text REFERENCES accounts (id),
  role text CHECK (role IN ('admin', 'member', 'read-only')),
  must_change_password boolean NOT NULL DEFAULT false,
  -- raised by logout and password changes: session JWTs carrying an older value are refused
  session_version integer NOT NULL DEFAULT 0,
  totp_secret text,
  totp_enabled boolean NOT NULL DEFAULT false,
  -- the 30-second step of the last code accepted: a code is accepted once
  totp_last_step bigint NOT NULL DEFAULT 0,
  disabled boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_login_at timestamptz,
  CHECK (is_root OR (account_id IS NOT NULL AND role IS NOT NULL)),
  CHECK (NOT is_root OR (account_id IS NULL AND role IS NULL))
);
CREATE UNIQUE INDEX users_single_root ON users (is_root) WHERE is_root;
CREATE INDEX users_account ON users (account_id);

CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  time timestamptz NOT NULL DEFAULT now(),
  -- admin:<username>, cli:<os user>, system
  actor text NOT NULL,
  ip text,
  action text NOT NULL,
  target text,
  -- the account the change concerns, when one does (read by that account's users)
  account_id text,
  detail jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_time ON audit_log (time);
CREATE INDEX audit_log_account_time ON audit_log (account_id, time);
-- GOOD, NEUTRAL or BAD when the request was classified (the console's charts per hour and day)
ALTER TABLE request_logs ADD COLUMN classification text;
CREATE INDEX request_logs_account_time ON request_logs (account_id, time);
`;
