// Migration 001: accounts, plans, API keys, usage, request logs, key audit. SQL lives in TypeScript
// modules so that `dist/` carries it (tsc copies no .sql files). Never edit an applied migration:
// add the next one.
export default `
CREATE TABLE plans (
  name text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
  -- requests per calendar month (TZ) and account; NULL = unlimited
  request_limit bigint CHECK (request_limit IS NULL OR request_limit >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO plans (name, request_limit) VALUES ('free', 6000), ('unlimited', NULL);

CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
  -- the account created on first setup (DEFAULT_ACCOUNT_NAME); at most one
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_single_default ON accounts (is_default) WHERE is_default;

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL DEFAULT '',
  hostnames text[] NOT NULL DEFAULT '{}',
  plan text NOT NULL DEFAULT 'unlimited' REFERENCES plans (name) ON UPDATE CASCADE,
  challenge_policy jsonb,
  rate_limit text,
  enabled boolean NOT NULL DEFAULT true,
  -- the hostname a free key was generated for (POST /api_key/generate); one per account
  free_hostname text,
  -- the secret is derived from this nonce (src/keys/secrets.ts); only its keyed hash is stored
  secret_nonce text NOT NULL,
  secret_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_used_at timestamptz,
  UNIQUE (account_id, free_hostname)
);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- counters are additive: every writer upserts increments (src/db/usage.ts)
CREATE TABLE usage_monthly (
  api_key_id text NOT NULL,
  month text NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  account_id text NOT NULL,
  requests bigint NOT NULL DEFAULT 0,
  good bigint NOT NULL DEFAULT 0,
  neutral bigint NOT NULL DEFAULT 0,
  bad bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, month)
);
CREATE INDEX usage_monthly_account ON usage_monthly (account_id, month);

CREATE TABLE usage_referrers (
  api_key_id text NOT NULL,
  month text NOT NULL,
  origin text NOT NULL,
  requests bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, month, origin)
);

-- batch ids already applied: a retried batch whose first attempt did commit is not counted twice
CREATE TABLE usage_flushes (
  id text PRIMARY KEY,
  flushed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_flushes_time ON usage_flushes (flushed_at);

CREATE TABLE request_logs (
  id bigserial PRIMARY KEY,
  time timestamptz NOT NULL,
  api_key_id text,
  account_id text,
  ip text,
  method text NOT NULL,
  path text NOT NULL,
  status smallint NOT NULL,
  duration_ms double precision NOT NULL,
  -- HMAC-SHA-256 of the row with EMBEDDED_DB_HMAC_SECRET when set (src/db/request-logs.ts)
  hmac text
);
CREATE INDEX request_logs_time ON request_logs (time);
CREATE INDEX request_logs_key_time ON request_logs (api_key_id, time);

CREATE TABLE key_audit (
  id bigserial PRIMARY KEY,
  time timestamptz NOT NULL DEFAULT now(),
  api_key_id text NOT NULL,
  action text NOT NULL CHECK (action IN ('create', 'revoke', 'update', 'rotate')),
  actor text NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX key_audit_key ON key_audit (api_key_id, time);
`;
