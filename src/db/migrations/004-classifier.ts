// Migration 004: the classifier's durable data (docs/classifier.md).
//   training_data     an account's examples of spam; the similarity rule compares submissions with them
//   spam_submissions  submissions classified BAD, kept for review until DELETE_SPAM_SUBMISSIONS_IN
import type { Ddl } from '../dialect.js';

export default (t: Ddl) => `
CREATE TABLE training_data (
  id ${t.str(64)} PRIMARY KEY,
  account_id ${t.str(64)} NOT NULL REFERENCES accounts (id),
  -- a named set of examples ("groups" in ALTCHA's similarity API)
  grp ${t.str(64)} NOT NULL DEFAULT 'default' CHECK (${t.matches('grp', '^[a-z0-9][-a-z0-9_.]{0,63}$')}),
  text ${t.text} NOT NULL CHECK (${t.length('text')} BETWEEN 1 AND 10000),
  -- the least cosine similarity that counts as a match
  threshold ${t.real} NOT NULL DEFAULT 0.7 CHECK (threshold > 0 AND threshold <= 1),
  -- a multiplier on the SIMILARITY rule's score
  weight ${t.real} NOT NULL DEFAULT 1 CHECK (weight >= 0 AND weight <= 10),
  -- cli, api, or submission:<id> when promoted from a spam submission
  source ${t.text} NOT NULL ${t.defaultText('')},
  created_at ${t.timestamp} NOT NULL DEFAULT ${t.now}
)${t.table};
CREATE INDEX training_data_account ON training_data (account_id, grp);

CREATE TABLE spam_submissions (
  id ${t.str(64)} PRIMARY KEY,
  time ${t.timestamp} NOT NULL DEFAULT ${t.now},
  account_id ${t.str(64)} NOT NULL,
  api_key_id ${t.str(64)} NOT NULL,
  -- classifier, verify or eml
  source ${t.text} NOT NULL,
  score ${t.real} NOT NULL,
  reasons ${t.text} NOT NULL ${t.defaultText('')},
  -- the submitted text (SPAM_SUBMISSIONS_STORE=text) or NULL (hash)
  text ${t.text},
  -- hex HMAC-SHA-256 of the text under a key derived from PALISADE_HMAC_SECRET
  text_hash ${t.text} NOT NULL,
  fields ${t.text} NOT NULL ${t.defaultText('')},
  email_domain ${t.text},
  ip ${t.text},
  country ${t.text}
)${t.table};
CREATE INDEX spam_submissions_time ON spam_submissions (time);
CREATE INDEX spam_submissions_account_time ON spam_submissions (account_id, time);
`;
