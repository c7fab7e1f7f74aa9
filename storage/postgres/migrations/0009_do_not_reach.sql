-- Do-not-reach lists (issue 10): an account's list of hashed identifiers
-- its campaigns never reach, the batches that change it, and its entries.

CREATE TABLE do_not_reach_lists (
  id          text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id  text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  name        text NOT NULL DEFAULT 'Do Not Reach List',
  description text,
  -- list_size is the number of rows in do_not_reach_entries, expired or
  -- not, kept exact by the batch worker and the expiry cleanup in the
  -- transactions that change the entries; readers subtract the entries
  -- already expired but not yet removed.
  list_size   bigint NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  deleted     boolean NOT NULL DEFAULT false
);
-- An account has at most one live list (the platform's rule).
CREATE UNIQUE INDEX do_not_reach_lists_live ON do_not_reach_lists(account_id) WHERE NOT deleted;
CREATE INDEX do_not_reach_lists_account ON do_not_reach_lists(account_id, created_at, id);

-- A recorded users batch: validated by the API, applied by the worker
-- (donotreach:apply_batch, task id = batch id). Batches of a list apply
-- in seq order; request_key identifies retries of one request (the
-- Idempotency-Key header, else the body's SHA-256).
CREATE TABLE do_not_reach_batches (
  id          text PRIMARY KEY DEFAULT aviary_ads_id(),
  list_id     text NOT NULL REFERENCES do_not_reach_lists(id) ON DELETE CASCADE,
  seq         bigserial NOT NULL,
  request_key text NOT NULL,
  body_sha256 text NOT NULL,
  -- operations: [{type, expires_at, keys, count}], expires_at resolved.
  operations  jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  applied_at  timestamptz,
  -- failed_at: the task was archived (retries used up); a later batch of
  -- the list still applies it first.
  failed_at   timestamptz,
  swept_at    timestamptz
);
CREATE INDEX do_not_reach_batches_request ON do_not_reach_batches(list_id, request_key, created_at);
CREATE INDEX do_not_reach_batches_pending ON do_not_reach_batches(list_id, seq) WHERE applied_at IS NULL;
CREATE INDEX do_not_reach_batches_due ON do_not_reach_batches(swept_at NULLS FIRST, created_at)
  WHERE applied_at IS NULL AND failed_at IS NULL;

-- One hashed identifier on a list ("e:" email, "p:" phone number, then
-- the lowercase SHA-256 hex), until expires_at.
CREATE TABLE do_not_reach_entries (
  list_id    text NOT NULL REFERENCES do_not_reach_lists(id) ON DELETE CASCADE,
  member_key text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (list_id, member_key)
);
CREATE INDEX do_not_reach_entries_list_expiry ON do_not_reach_entries(list_id, expires_at);
CREATE INDEX do_not_reach_entries_expiry ON do_not_reach_entries(expires_at);
