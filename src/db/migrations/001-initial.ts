// Migration 001: accounts, plans, API keys, usage, request logs, key audit. SQL lives in TypeScript
// modules so that `dist/` carries it (tsc copies no .sql files), written once in the vocabulary
// of src/db/dialect.ts (Ddl) for every engine; on PostgreSQL it reads as it always did. Never edit
// what an applied migration creates: add the next one.
import type { Ddl } from '../dialect.js';

export default (t: Ddl) => `
CREATE TABLE plans (
  name ${t.str(64)} PRIMARY KEY CHECK (${t.matches('name', '^[a-z0-9][-a-z0-9_.]{0,63}$')}),
  -- requests per calendar month (TZ) and account; NULL = unlimited
  request_limit ${t.bigint} CHECK (request_limit IS NULL OR request_limit >= 0),
  created_at ${t.timestamp} NOT NULL DEFAULT ${t.now},
  updated_at ${t.timestamp} NOT NULL DEFAULT ${t.now}
)${t.table};
INSERT INTO plans (name, request_limit) VALUES ('free', 6000), ('unlimited', NULL);

CREATE TABLE accounts (
  id ${t.str(64)} PRIMARY KEY,
  name ${t.str(200)} NOT NULL UNIQUE CHECK (${t.length('name')} BETWEEN 1 AND 200),
  -- the account created on first setup (DEFAULT_ACCOUNT_NAME); at most one
  is_default ${t.bool} NOT NULL DEFAULT false,
  created_at ${t.timestamp} NOT NULL DEFAULT ${t.now}
)${t.table};
${t.uniqueWhereTrue('accounts_single_default', 'accounts', 'is_default')};

CREATE TABLE api_keys (
  id ${t.str(64)} PRIMARY KEY,
  account_id ${t.str(64)} NOT NULL REFERENCES accounts (id),
  name ${t.text} NOT NULL ${t.defaultText('')},
  hostnames ${t.textList},
  plan ${t.str(64)} NOT NULL DEFAULT 'unlimited' REFERENCES plans (name) ON UPDATE CASCADE,
  challenge_policy ${t.json},
  rate_limit ${t.text},
  enabled ${t.bool} NOT NULL DEFAULT true,
  -- the hostname a free key was generated for (POST /api_key/generate); one per account
  free_hostname ${t.str(255)},
  -- the secret is derived from this nonce (src/keys/secrets.ts); only its keyed hash is stored
  secret_nonce ${t.str(128)} NOT NULL,
  secret_hash ${t.str(128)} NOT NULL UNIQUE,
  created_at ${t.timestamp} NOT NULL DEFAULT ${t.now},
  updated_at ${t.timestamp} NOT NULL DEFAULT ${t.now},
  revoked_at ${t.timestamp} NULL,
  last_used_at ${t.timestamp} NULL,
  UNIQUE (account_id, free_hostname)
)${t.table};
CREATE INDEX api_keys_account ON api_keys (account_id);

-- counters are additive: every writer upserts increments (src/db/usage.ts)
CREATE TABLE usage_monthly (
  api_key_id ${t.str(64)} NOT NULL,
  month ${t.str(7)} NOT NULL CHECK (${t.matches('month', '^[0-9]{4}-(0[1-9]|1[0-2])$')}),
  account_id ${t.str(64)} NOT NULL,
  requests ${t.bigint} NOT NULL DEFAULT 0,
  good ${t.bigint} NOT NULL DEFAULT 0,
  neutral ${t.bigint} NOT NULL DEFAULT 0,
  bad ${t.bigint} NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, month)
)${t.table};
CREATE INDEX usage_monthly_account ON usage_monthly (account_id, month);

CREATE TABLE usage_referrers (
  api_key_id ${t.str(64)} NOT NULL,
  month ${t.str(7)} NOT NULL,
  origin ${t.str(600)} NOT NULL,
  requests ${t.bigint} NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, month, origin)
)${t.table};

-- batch ids already applied: a retried batch whose first attempt did commit is not counted twice
CREATE TABLE usage_flushes (
  id ${t.str(128)} PRIMARY KEY,
  flushed_at ${t.timestamp} NOT NULL DEFAULT ${t.now}
)${t.table};
CREATE INDEX usage_flushes_time ON usage_flushes (flushed_at);

CREATE TABLE request_logs (
  id ${t.serialKey},
  time ${t.timestamp} NOT NULL,
  api_key_id ${t.str(64)},
  account_id ${t.str(64)},
  ip ${t.text},
  method ${t.str(16)} NOT NULL,
  path ${t.text} NOT NULL,
  status ${t.smallint} NOT NULL,
  duration_ms ${t.double} NOT NULL,
  -- HMAC-SHA-256 of the row with EMBEDDED_DB_HMAC_SECRET when set (src/db/request-logs.ts)
  hmac ${t.text}
)${t.table};
CREATE INDEX request_logs_time ON request_logs (time);
CREATE INDEX request_logs_key_time ON request_logs (api_key_id, time);

CREATE TABLE key_audit (
  id ${t.serialKey},
  time ${t.timestamp} NOT NULL DEFAULT ${t.now},
  api_key_id ${t.str(64)} NOT NULL,
  action ${t.str(16)} NOT NULL CHECK (action IN ('create', 'revoke', 'update', 'rotate')),
  actor ${t.text} NOT NULL,
  detail ${t.json} NOT NULL ${t.defaultText('{}')}
)${t.table};
CREATE INDEX key_audit_key ON key_audit (api_key_id, time);
`;
