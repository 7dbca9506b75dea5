// Migration 002: every generated (free) key in an account of its own. Before it, keys from
// POST /api_key/generate all joined the default account, so one holder could spend the plan of
// every other free key, read the account's totals in GET /usage and verify payloads issued to the
// operator's keys. A generated key is one whose id starts with ckey_ (only the generate route makes
// them; free_hostname does not tell, as an operator may give a hostname's hold to a standard key,
// and a released free key holds none). Each such key moves to a new account marked `generated`, named after
// the key; its usage counters follow it (request_logs keep the account they were written with:
// they are a record of what happened, and signed rows must not change). The key's id and secret
// stay as they were, so its holder notices nothing but a plan and totals of their own.
export default `
ALTER TABLE accounts ADD COLUMN generated boolean NOT NULL DEFAULT false;

-- one free key per hostname across the service, now that each sits in its own account
CREATE UNIQUE INDEX api_keys_free_hostname ON api_keys (free_hostname);

CREATE TEMPORARY TABLE free_key_moves ON COMMIT DROP AS
  SELECT k.id AS key_id, k.account_id AS from_account, k.created_at,
    'acc_' || (SELECT string_agg(substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
                                        1 + floor(random() * 62)::int, 1), '')
               FROM generate_series(1, 16) WHERE k.id IS NOT NULL) AS to_account
  FROM api_keys k WHERE left(k.id, 5) = 'ckey_';

INSERT INTO accounts (id, name, generated, created_at)
  SELECT to_account, 'Free key ' || key_id, true, created_at FROM free_key_moves;
UPDATE api_keys k SET account_id = m.to_account, updated_at = now() FROM free_key_moves m WHERE k.id = m.key_id;
UPDATE usage_monthly u SET account_id = m.to_account FROM free_key_moves m WHERE u.api_key_id = m.key_id;
INSERT INTO key_audit (api_key_id, action, actor, detail)
  SELECT key_id, 'update', 'migration:002',
    jsonb_build_object('accountId', to_account, 'previousAccountId', from_account) FROM free_key_moves;
DROP TABLE free_key_moves;
`;
