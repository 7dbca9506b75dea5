// Migration 004: the classifier's durable data (docs/classifier.md).
//   training_data     an account's examples of spam; the similarity rule compares submissions with them
//   spam_submissions  submissions classified BAD, kept for review until DELETE_SPAM_SUBMISSIONS_IN
export default `
CREATE TABLE training_data (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  -- a named set of examples ("groups" in ALTCHA's similarity API)
  grp text NOT NULL DEFAULT 'default' CHECK (grp ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
  text text NOT NULL CHECK (length(text) BETWEEN 1 AND 10000),
  -- the least cosine similarity that counts as a match
  threshold real NOT NULL DEFAULT 0.7 CHECK (threshold > 0 AND threshold <= 1),
  -- a multiplier on the SIMILARITY rule's score
  weight real NOT NULL DEFAULT 1 CHECK (weight >= 0 AND weight <= 10),
  -- cli, api, or submission:<id> when promoted from a spam submission
  source text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX training_data_account ON training_data (account_id, grp);

CREATE TABLE spam_submissions (
  id text PRIMARY KEY,
  time timestamptz NOT NULL DEFAULT now(),
  account_id text NOT NULL,
  api_key_id text NOT NULL,
  -- classifier, verify or eml
  source text NOT NULL,
  score real NOT NULL,
  reasons text NOT NULL DEFAULT '',
  -- the submitted text (SPAM_SUBMISSIONS_STORE=text) or NULL (hash)
  text text,
  -- hex HMAC-SHA-256 of the text under a key derived from PALISADE_HMAC_SECRET
  text_hash text NOT NULL,
  fields text NOT NULL DEFAULT '',
  email_domain text,
  ip text,
  country text
);
CREATE INDEX spam_submissions_time ON spam_submissions (time);
CREATE INDEX spam_submissions_account_time ON spam_submissions (account_id, time);
`;
